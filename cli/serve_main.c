/*
 * serve_main.c - entry point of shapegate-serve, the executable `shapegate serve`
 * runs (main.c, exec_serve): the HTTP service (cmd_serve.c, service/) and its
 * isolated solver processes (`__serve-worker`, started by service/isolate.c
 * through /proc/self/exe). Kept apart so that only this program loads
 * libmicrohttpd and hiredis. argv[0] is "shapegate"; argv[1] the command.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "serve") == 0)
        return sg_cmd_serve(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "__serve-worker") == 0)
        return sg_cmd_serve_worker(argc - 1, argv + 1);
    fprintf(stderr, "%s: this program runs `%s serve` (see '%s serve --help')\n", SG_CLI_PROG, SG_CLI_PROG,
            SG_CLI_PROG);
    return SG_EXIT_USAGE;
}
