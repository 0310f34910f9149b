/*
 * z3shim.c - an LD_PRELOAD library for bench/z3ref.sh: records every
 * satisfiability question a shapegate process asks Z3, so that the same
 * residual can be handed to the `z3` binary and the two times compared.
 *
 *   SG_Z3SHIM_DIR=DIR LD_PRELOAD=build/bench/libsg_z3shim.so shapegate check ...
 *
 * For each Z3_solver_check / Z3_solver_check_assumptions it writes
 * DIR/q<pid>-<n>.smt2: the solver's assertions as SMT-LIB
 * (Z3_solver_to_string), declarations for constants that appear only in the
 * assumptions, then (check-sat) or (check-sat-assuming (...)); and appends to
 * DIR/log one line "<file> <seconds inside Z3> <sat|unsat|unknown>". The
 * question is written after Z3 answered, so the time is Z3's alone.
 *
 * Not part of the product: a measuring tool, never linked into shapegate.
 * Without SG_Z3SHIM_DIR it only forwards the calls.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <z3.h>

typedef Z3_lbool (*check_fn)(Z3_context, Z3_solver);
typedef Z3_lbool (*check_assume_fn)(Z3_context, Z3_solver, unsigned, const Z3_ast[]);

static atomic_uint counter;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *answer(Z3_lbool r) { return r == Z3_L_TRUE ? "sat" : r == Z3_L_FALSE ? "unsat" : "unknown"; }

/* Declare the uninterpreted constants of `a` that `text` (the solver's SMT-LIB) does not declare. */
#define EXTRA_MAX (1u << 20)

static void declare_consts(FILE *f, Z3_context c, Z3_ast a, const char *text, char (*extra)[EXTRA_MAX])
{
    unsigned i, n;
    char want[512];

    if (Z3_get_ast_kind(c, a) != Z3_APP_AST)
        return;
    Z3_app app = Z3_to_app(c, a);
    n = Z3_get_app_num_args(c, app);
    if (n == 0) {
        Z3_func_decl d = Z3_get_app_decl(c, app);
        if (Z3_get_decl_kind(c, d) != Z3_OP_UNINTERPRETED)
            return;
        /* Z3's strings share one buffer per context: copy each before the next call */
        char *name = strdup(Z3_get_symbol_string(c, Z3_get_decl_name(c, d)));
        if (!name)
            return;
        snprintf(want, sizeof want, "(declare-fun %s ", name);
        if (!strstr(text, want) && !strstr(*extra, want) && strlen(*extra) + strlen(want) + 2 < EXTRA_MAX) {
            strcat(*extra, want); /* declared once */
            fprintf(f, "(declare-fun %s () %s)\n", name, Z3_sort_to_string(c, Z3_get_sort(c, a)));
        }
        free(name);
        return;
    }
    for (i = 0; i < n; i++)
        declare_consts(f, c, Z3_get_app_arg(c, app, i), text, extra);
}

static void record(Z3_context c, Z3_solver s, unsigned n, const Z3_ast *assume, double secs, Z3_lbool r)
{
    const char *dir = getenv("SG_Z3SHIM_DIR");
    char path[4096], *text;
    unsigned k = atomic_fetch_add(&counter, 1), i;
    FILE *f;

    if (!dir || !*dir)
        return;
    snprintf(path, sizeof path, "%s/q%ld-%05u.smt2", dir, (long)getpid(), k);
    text = strdup(Z3_solver_to_string(c, s));
    if (!text || !(f = fopen(path, "w"))) {
        free(text);
        return;
    }
    fputs(text, f);
    static _Thread_local char extra[EXTRA_MAX]; /* the declarations written here, for this question */
    extra[0] = '\0';
    for (i = 0; i < n; i++)
        declare_consts(f, c, assume[i], text, &extra);
    if (n) {
        fputs("(check-sat-assuming (", f);
        for (i = 0; i < n; i++)
            fprintf(f, "%s%s", i ? " " : "", Z3_ast_to_string(c, assume[i]));
        fputs("))\n", f);
    } else {
        fputs("(check-sat)\n", f);
    }
    fclose(f);
    free(text);
    snprintf(path, sizeof path, "%s/log", dir);
    if ((f = fopen(path, "a")) != NULL) {
        fprintf(f, "q%ld-%05u.smt2 %.6f %s\n", (long)getpid(), k, secs, answer(r));
        fclose(f);
    }
}

Z3_lbool Z3_API Z3_solver_check(Z3_context c, Z3_solver s)
{
    static check_fn real;
    double t0;
    Z3_lbool r;

    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "Z3_solver_check"); /* POSIX: dlsym of a function */
    t0 = now();
    r = real(c, s);
    record(c, s, 0, NULL, now() - t0, r);
    return r;
}

Z3_lbool Z3_API Z3_solver_check_assumptions(Z3_context c, Z3_solver s, unsigned n, const Z3_ast assume[])
{
    static check_assume_fn real;
    double t0;
    Z3_lbool r;

    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "Z3_solver_check_assumptions");
    t0 = now();
    r = real(c, s, n, assume);
    record(c, s, n, assume, now() - t0, r);
    return r;
}
