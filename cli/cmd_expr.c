/*
 * cmd_expr.c - the expression-language commands of the CLI:
 *   shapegate parse [--sympy|--python|--smt] [EXPR...]   parse and re-print
 *   shapegate eval EXPR [NAME=VALUE ...]                 evaluate exactly
 * Both report a text error as `N:COL: message` on stderr (N = 1-based line of
 * standard input or EXPR argument number, COL = 1-based byte column).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Long-only options have values above the char range (see sg_cli_bad_option). */
enum { OPT_SYMPY = 256, OPT_PYTHON, OPT_SMT };

/* --help of both commands (their help lines are narrower than the others'). */
#define EXPR_OPT_HELP {"help", SG_CLI_KEY_HELP, false, true, "-h, --help show this help"}

/* ---- parse ------------------------------------------------------------------------ */

/* The printed form `parse` writes. */
typedef enum parse_form { FORM_SYMPY, FORM_PYTHON, FORM_SMT } parse_form;

/* State shared by every expression of one `parse` run. */
typedef struct parse_ctx {
    sg_pool *pool;   /* one pool for the whole input */
    parse_form form;
    int nforms;      /* forms asked for (at most one) */
} parse_ctx;

/* Outcome of reading one line. */
typedef enum line_status { LINE_OK, LINE_EOF, LINE_TOO_LONG, LINE_ERROR } line_status;

static const sg_cli_opt parse_opts[] = {
    {"sympy", OPT_SYMPY, false, false, "--sympy    print the canonical sympy form (default)"},
    {"python", OPT_PYTHON, false, false, "--python   print torch's Python printer form"},
    {"smt", OPT_SMT, false, false,
     "--smt      print the SMT-LIB 2 encoding (declarations, then an assert or\n"
     "           define-funs for value and definedness)"},
    EXPR_OPT_HELP,
    SG_CLI_OPT_END,
};

static const sg_cli_spec parse_spec = {
    "parse",
    "Usage: shapegate parse [--sympy | --python | --smt] [EXPR...]\n"
    "\n"
    "Parse guard expressions (sympy str() form, torch's Python form, or a mix) and\n"
    "print each on its own line in canonical form. Without EXPR arguments, reads\n"
    "standard input, one expression per line.\n"
    "\n"
    "Options:\n",
    parse_opts,
    "\n"
    "Errors are reported as LINE:COL: message (LINE is the input line or the\n"
    "argument number) and stop the run. An empty or blank line is an error.\n"
    "An expression starting with '-' needs '--' before it.\n"
    "Exit: 0 all parsed, 2 usage, 3 invalid input, 5 internal error.\n",
    false,
    NULL,
};

/* True when the `len` bytes of `s` are all ASCII whitespace (or `len` is 0). */
static bool is_blank(const char *s, size_t len)
{
    size_t i;

    for (i = 0; i < len; i++) {
        if (!strchr(" \t\r\n\v\f", s[i]) || s[i] == '\0')
            return false;
    }
    return true;
}

/*
 * Read one line of `in` into `buf` (room for `max` bytes plus a NUL), without
 * its newline and without one CR before it. Returns LINE_OK with `*len` set;
 * LINE_EOF at the end of input (a last line without a newline is still a
 * line); LINE_TOO_LONG as soon as a line exceeds `max` bytes (the rest is not
 * read); LINE_ERROR on a read error.
 */
static line_status read_line(FILE *in, char *buf, size_t max, size_t *len)
{
    size_t n = 0;
    int c;

    for (;;) {
        c = getc(in);
        if (c == EOF) {
            if (ferror(in))
                return LINE_ERROR;
            if (n == 0)
                return LINE_EOF;
            break;
        }
        if (c == '\n')
            break;
        if (n == max)
            return LINE_TOO_LONG;
        buf[n++] = (char)c;
    }
    if (n > 0 && buf[n - 1] == '\r')
        n--;
    buf[n] = '\0';
    *len = n;
    return LINE_OK;
}

/* Report a failure about input line/argument `lineno` as `N:COL: message`. */
static void report_at(size_t lineno, int col, const char *msg)
{
    fprintf(stderr, "%zu:%d: %s\n", lineno, col > 0 ? col : 1, msg);
}

/*
 * Parse the `len` bytes of `text` (input line or argument number `lineno`)
 * into ctx->pool and print it in ctx->form on stdout. Returns an exit code:
 * 0, or the code of the failure after reporting it on stderr.
 */
static int parse_one(parse_ctx *ctx, const char *text, size_t len, size_t lineno)
{
    sg_error err = SG_ERROR_INIT;
    const sg_expr *e = NULL;
    char *out = NULL;
    int rc;

    if (is_blank(text, len)) {
        report_at(lineno, 1, "empty expression");
        return SG_EXIT_INPUT;
    }
    rc = sg_expr_parse(&e, ctx->pool, text, len, &err);
    if (rc != SG_OK) {
        report_at(lineno, err.col, err.msg);
        return sg_cli_exit_code(rc, SG_CLI_READING);
    }

    if (ctx->form == FORM_SMT) {
        rc = sg_expr_to_smtlib(&out, ctx->pool, e, &err);
    } else {
        rc = sg_expr_print(&out, e, ctx->form == FORM_PYTHON ? SG_SYNTAX_PYTHON : SG_SYNTAX_SYMPY,
                           NULL, NULL, &err);
    }
    if (rc != SG_OK) {
        report_at(lineno, err.col, err.msg);
        return sg_cli_exit_code(rc, SG_CLI_READING);
    }

    fputs(out, stdout);
    if (!*out || out[strlen(out) - 1] != '\n')
        fputc('\n', stdout);
    sg_free(out);
    return SG_EXIT_OK;
}

/* Parse every line of standard input with parse_one(); stop at the first failure. */
static int parse_stdin(parse_ctx *ctx)
{
    char *buf = NULL;
    size_t len = 0, lineno = 0;
    int rc = SG_EXIT_OK;
    line_status st;

    buf = malloc(SG_EXPR_MAX_TEXT + 1);
    if (!buf) {
        sg_cli_errorf("parse", "out of memory");
        return SG_EXIT_INTERNAL;
    }
    for (;;) {
        st = read_line(stdin, buf, SG_EXPR_MAX_TEXT, &len);
        if (st == LINE_EOF)
            break;
        lineno++;
        if (st == LINE_TOO_LONG) {
            char msg[96];

            snprintf(msg, sizeof msg, "line longer than %zu bytes", (size_t)SG_EXPR_MAX_TEXT);
            report_at(lineno, (int)SG_EXPR_MAX_TEXT + 1, msg);
            rc = SG_EXIT_INPUT;
            goto cleanup;
        }
        if (st == LINE_ERROR) {
            sg_cli_errorf("parse", "cannot read standard input at line %zu: %s", lineno,
                          strerror(errno));
            rc = SG_EXIT_INPUT;
            goto cleanup;
        }
        rc = parse_one(ctx, buf, len, lineno);
        if (rc != SG_EXIT_OK)
            goto cleanup;
    }

cleanup:
    free(buf);
    return rc;
}

static int on_parse_opt(int key, const char *arg, void *p)
{
    parse_ctx *ctx = p;
    (void)arg;
    ctx->form = key == OPT_PYTHON ? FORM_PYTHON : key == OPT_SMT ? FORM_SMT : FORM_SYMPY;
    ctx->nforms++;
    return -1;
}

int sg_cmd_parse(int argc, char **argv)
{
    parse_ctx ctx = {NULL, FORM_SYMPY, 0};
    sg_error err = SG_ERROR_INIT;
    int i, rc;

    if ((rc = sg_cli_parse(&parse_spec, argc, argv, on_parse_opt, &ctx)) >= 0)
        return rc;
    if (ctx.nforms > 1)
        return sg_cli_usage_error("parse", "give at most one of --sympy, --python, --smt");

    rc = sg_pool_new(&ctx.pool, &err);
    if (rc != SG_OK) {
        sg_cli_errorf("parse", "%s", err.msg);
        rc = sg_cli_exit_code(rc, SG_CLI_COMPUTING);
        goto cleanup;
    }

    if (optind >= argc) {
        rc = parse_stdin(&ctx);
    } else {
        for (i = optind; i < argc; i++) {
            rc = parse_one(&ctx, argv[i], strlen(argv[i]), (size_t)(i - optind + 1));
            if (rc != SG_EXIT_OK)
                break;
        }
    }

cleanup:
    sg_pool_free(ctx.pool);
    return sg_cli_finish_output("parse", rc);
}

/* ---- eval ------------------------------------------------------------------------- */

static const sg_cli_opt eval_opts[] = {
    EXPR_OPT_HELP,
    SG_CLI_OPT_END,
};

static const sg_cli_spec eval_spec = {
    "eval",
    "Usage: shapegate eval EXPR [NAME=VALUE ...]\n"
    "\n"
    "Evaluate one guard expression exactly, with Python semantics (// and %\n"
    "round toward negative infinity), giving each symbol an integer value:\n"
    "decimal, optionally negative, within signed 128 bits. Prints the value\n"
    "(an integer, True/False, an exact fraction p/q, or an infinity).\n"
    "\n"
    "Options:\n",
    eval_opts,
    "\n"
    "Every symbol of EXPR needs a value; naming a symbol that EXPR does not\n"
    "mention, or naming one twice, is a usage error.\n"
    "An expression starting with '-' needs '--' before it.\n"
    "Exit: 0 a value other than False, 1 False or undefined (Python would raise)\n"
    "or overflow, 2 usage, 3 invalid EXPR or VALUE or a missing value,\n"
    "5 internal error.\n",
    false,
    NULL,
};

/* Index of the pool symbol named by the `len` bytes of `name`, or -1. */
static long find_symbol(const sg_pool *pool, const char *name, size_t len)
{
    size_t i, n = sg_pool_nsymbols(pool);

    for (i = 0; i < n; i++) {
        const char *s = sg_expr_symbol_name(sg_pool_symbol(pool, i));

        if (s && strlen(s) == len && memcmp(s, name, len) == 0)
            return (long)i;
    }
    return -1;
}

/*
 * Apply the NAME=VALUE arguments `args[0..nargs-1]` to `values`/`assigned`
 * (indexed by symbol index of `pool`). Returns an exit code after reporting
 * the first problem.
 */
static int bind_values(const sg_pool *pool, char **args, int nargs, sg_num *values, bool *assigned)
{
    int i;

    for (i = 0; i < nargs; i++) {
        const char *arg = args[i];
        /* the last '=': source names such as L['x'].size()[0] contain none, values neither */
        const char *eq = strrchr(arg, '=');
        size_t namelen;
        long idx;
        int rc;

        if (!eq || eq == arg)
            return sg_cli_usage_error("eval", "expected NAME=VALUE, got '%s'", arg);
        namelen = (size_t)(eq - arg);
        idx = find_symbol(pool, arg, namelen);
        if (idx < 0)
            return sg_cli_usage_error("eval", "'%.*s' is not a symbol of the expression",
                                      (int)namelen, arg);
        if (assigned[idx])
            return sg_cli_usage_error("eval", "'%.*s' is given a value twice", (int)namelen, arg);
        rc = sg_num_parse(&values[idx], eq + 1);
        if (rc == SG_OK && values[idx].inf)
            rc = SG_EINVALID; /* a value, not a bound */
        if (rc == SG_EOVERFLOW) {
            sg_cli_errorf("eval", "value of %.*s does not fit in 128 bits: '%s'", (int)namelen, arg,
                          eq + 1);
            return SG_EXIT_INPUT;
        }
        if (rc != SG_OK) {
            sg_cli_errorf("eval", "value of %.*s is not a decimal integer: '%s'", (int)namelen, arg,
                          eq + 1);
            return SG_EXIT_INPUT;
        }
        assigned[idx] = true;
    }
    return SG_EXIT_OK;
}

/*
 * Check that every symbol of `e` has a value; otherwise name all those
 * without one. Returns an exit code.
 */
static int check_complete(sg_pool *pool, const sg_expr *e, const bool *assigned)
{
    sg_error err = SG_ERROR_INIT;
    const sg_expr **syms = NULL;
    size_t n = 0, i, nmissing = 0;
    int rc;

    rc = sg_expr_symbols(&syms, &n, pool, e, &err);
    if (rc != SG_OK) {
        sg_cli_errorf("eval", "%s", err.msg);
        return sg_cli_exit_code(rc, SG_CLI_COMPUTING);
    }
    for (i = 0; i < n; i++) {
        if (assigned[sg_expr_symbol_index(syms[i])])
            continue;
        if (nmissing++ == 0)
            fprintf(stderr, "%s eval: no value for %s", SG_CLI_PROG, sg_expr_symbol_name(syms[i]));
        else
            fprintf(stderr, ", %s", sg_expr_symbol_name(syms[i]));
    }
    if (nmissing)
        fprintf(stderr, " (give NAME=VALUE)\n");
    sg_free(syms);
    return nmissing ? SG_EXIT_INPUT : SG_EXIT_OK;
}

/* Print "<word>: <msg>", without repeating the word when the message starts with it. */
static void print_prefixed(const char *word, const char *msg)
{
    size_t n = strlen(word);

    if (strncmp(msg, word, n) == 0 && msg[n] == ':')
        fprintf(stderr, "%s\n", msg);
    else
        fprintf(stderr, "%s: %s\n", word, msg);
}

/* Report an evaluation failure (from parsing or evaluating) and return its exit code. */
static int report_eval_error(int code, const sg_error *err)
{
    if (code == SG_EUNDEFINED)
        print_prefixed("undefined", err->msg);
    else if (code == SG_EOVERFLOW)
        print_prefixed("overflow", err->msg);
    else
        sg_cli_errorf("eval", "%s", err->msg);
    return sg_cli_exit_code(code, SG_CLI_COMPUTING);
}

int sg_cmd_eval(int argc, char **argv)
{
    sg_error err = SG_ERROR_INIT;
    sg_pool *pool = NULL;
    const sg_expr *e = NULL;
    sg_num *values = NULL;
    bool *assigned = NULL;
    sg_eval v;
    char text[128];
    const char *expr;
    size_t nsym;
    int rc;

    if ((rc = sg_cli_parse(&eval_spec, argc, argv, sg_cli_on_flag, NULL)) >= 0)
        return rc;
    if (optind >= argc)
        return sg_cli_usage_error("eval", "missing EXPR");
    expr = argv[optind];

    rc = sg_pool_new(&pool, &err);
    if (rc != SG_OK) {
        rc = report_eval_error(rc, &err);
        goto cleanup;
    }
    if (is_blank(expr, strlen(expr))) {
        report_at(1, 1, "empty expression");
        rc = SG_EXIT_INPUT;
        goto cleanup;
    }
    rc = sg_expr_parse(&e, pool, expr, strlen(expr), &err);
    if (rc == SG_EUNDEFINED || rc == SG_EOVERFLOW || rc == SG_ENOMEM || rc == SG_ERROR) {
        /* a constant the parser folded (FloorDiv(1, 0)) is undefined as a value */
        rc = report_eval_error(rc, &err);
        goto cleanup;
    }
    if (rc != SG_OK) {
        report_at(1, err.col, err.msg);
        rc = sg_cli_exit_code(rc, SG_CLI_READING);
        goto cleanup;
    }

    nsym = sg_pool_nsymbols(pool);
    values = calloc(nsym ? nsym : 1, sizeof *values);
    assigned = calloc(nsym ? nsym : 1, sizeof *assigned);
    if (!values || !assigned) {
        sg_cli_errorf("eval", "out of memory");
        rc = SG_EXIT_INTERNAL;
        goto cleanup;
    }
    rc = bind_values(pool, argv + optind + 1, argc - optind - 1, values, assigned);
    if (rc != SG_EXIT_OK)
        goto cleanup;
    rc = check_complete(pool, e, assigned);
    if (rc != SG_EXIT_OK)
        goto cleanup;

    for (size_t i = 0; i < nsym; i++)
        if (!assigned[i])
            values[i] = sg_num_of(0); /* a symbol the expression does not mention */
    rc = sg_expr_evaluate(&v, pool, e, values, nsym, &err);
    if (rc != SG_OK) {
        rc = report_eval_error(rc, &err);
        goto cleanup;
    }
    sg_eval_format(text, sizeof text, &v);
    printf("%s\n", text);
    rc = v.kind == SG_VAL_BOOL && v.num.value == 0 ? SG_EXIT_FALSE : SG_EXIT_OK;

cleanup:
    free(assigned);
    free(values);
    sg_pool_free(pool);
    return sg_cli_finish_output("eval", rc);
}
