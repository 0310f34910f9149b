/*
 * text.c - the text forms of reports (sg_report_to_text): what `shapegate
 * check`, `spec` and `verify` print without --json, and torch's own error
 * text for `check --torch`. Like the JSON writer it only reads the report:
 * the fixes, their Python spec and the re-check of torch's own lines are
 * parts the engine attached.
 */
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "torch/pyspec.h"
#include "util/util.h"

static void print_bound(sg_buf *b, sg_bound v)
{
    char buf[SG_INT_STRLEN];
    if (v.inf)
        sg_buf_puts(b, v.inf < 0 ? "-int_oo" : "int_oo");
    else
        sg_buf_puts(b, sg_int_format(buf, v.v));
}

/* "x = [2, 3], y = [4]": the sizes of every input, by tensor. */
static void print_shapes(sg_buf *b, const sg_trace *t, const sg_int *sizes)
{
    size_t n = 0, i;
    const sg_input_dim *in = sg_trace_inputs(t, &n);
    const char *path = NULL;
    char buf[SG_INT_STRLEN];
    for (i = 0; i < n; i++) {
        if (!path || strcmp(path, in[i].path) != 0) {
            /* "['x']" -> "x", "['inputs']['b'][1]" -> "inputs['b'][1]" */
            const char *p = in[i].path, *q = strncmp(p, "['", 2) == 0 ? strstr(p + 2, "']") : NULL;
            if (q)
                sg_buf_printf(b, "%s%.*s%s = [", path ? "], " : "", (int)(q - p - 2), p + 2, q + 2);
            else
                sg_buf_printf(b, "%s%s = [", path ? "], " : "", p);
            path = in[i].path;
        } else {
            sg_buf_puts(b, ", ");
        }
        sg_buf_puts(b, sg_int_format(buf, sizes[i]));
    }
    if (path)
        sg_buf_puts(b, "]");
}

/* A torch location 'File "a/b.py", line 43, in forward\n    code' as "a/b.py:43 in forward: code". */
static void print_loc(sg_buf *b, const char *loc)
{
    const char *file = strstr(loc, "File \""), *line, *in, *code;
    if (!file) {
        sg_buf_puts(b, loc);
        return;
    }
    file += 6;
    line = strstr(file, "\", line ");
    in = line ? strstr(line, ", in ") : NULL;
    if (!line || !in) {
        sg_buf_puts(b, loc);
        return;
    }
    sg_buf_printf(b, "%.*s:%.*s in ", (int)(line - file), file, (int)(in - line - 8), line + 8);
    code = strchr(in + 5, '\n');
    sg_buf_printf(b, "%.*s", (int)(code ? (size_t)(code - in - 5) : strlen(in + 5)), in + 5);
    if (code) {
        while (*code == '\n' || *code == ' ')
            code++;
        sg_buf_printf(b, ": %.*s", (int)strcspn(code, "\n"), code);
    }
}

/* Symbols print as the input they are the size of (for relations in the text output). */
typedef struct naming {
    const sg_report *r;
    const sg_trace *t;
} naming;

static const char *source_name(const sg_expr *sym, void *payload)
{
    const naming *nm = payload;
    size_t n = 0, i;
    const sg_input_dim *in = sg_trace_inputs(nm->t, &n);
    for (i = 0; i < nm->r->ninferred; i++)
        if (nm->r->inferred[i].sym == sym && nm->r->inferred[i].input < n)
            return in[nm->r->inferred[i].input].source;
    return NULL;
}

/* The diagnosis of a check report. */
static void check_text(sg_buf *b, const sg_report *r)
{
    const sg_trace *t = r->trace;
    const char *input = sg_trace_name(t) ? sg_trace_name(t) : "trace";
    size_t n = 0, i, k;
    const sg_input_dim *in = sg_trace_inputs(t, &n);
    char buf[SG_INT_STRLEN];

    sg_buf_printf(b, "%s (torch %s): %s\n", input, sg_trace_torch_version(t)[0] ? sg_trace_torch_version(t) : "?",
                  sg_verdict_name(r->verdict));
    if (r->no_spec)
        sg_buf_puts(b, "  the trace carries no per-dim spec (torch failed before building it): nothing to decide\n");
    else if (r->torch_failed)
        sg_buf_printf(b, "  %s\n", r->torch_failed);
    for (i = 0; i < r->ndims; i++) {
        const sg_dim_result *d = &r->dims[i];
        if (d->status == SG_DIM_STATIC)
            continue;
        sg_buf_printf(b, "  %s%s%s: %s%s%s%s\n", in[d->input].name ? in[d->input].name : "",
                      in[d->input].name ? " = " : "", in[d->input].source, sg_dim_status_name(d->status),
                      d->reason[0] ? " (" : "", d->reason, d->reason[0] ? ")" : "");
    }
    for (i = 0; i < r->nviolations; i++) {
        const sg_violation *v = &r->violations[i];
        sg_buf_printf(b, "\n- %s\n", v->message ? v->message : "");
        if (v->has_counterexample) {
            sg_buf_puts(b, "  counterexample: ");
            print_shapes(b, t, v->counterexample);
            sg_buf_puts(b, "\n");
        }
        if (v->ncore)
            sg_buf_puts(b, "  conflicting:\n");
        for (k = 0; k < v->ncore; k++) {
            sg_buf_printf(b, "    %s", v->core[k].text);
            if (v->core[k].loc) {
                sg_buf_puts(b, "   at ");
                print_loc(b, v->core[k].loc);
            }
            sg_buf_puts(b, "\n");
        }
    }
    if (r->ninferred)
        sg_buf_puts(b, "\ninferred:\n");
    for (i = 0; i < r->ninferred; i++) {
        const sg_inferred *f = &r->inferred[i];
        sg_buf_printf(b, "  %s", f->input < n ? in[f->input].source : sg_expr_symbol_name(f->sym));
        if (f->is_constant) {
            sg_buf_printf(b, " = %s\n", sg_int_format(buf, f->constant));
            continue;
        }
        sg_buf_puts(b, " in [");
        print_bound(b, f->lo);
        sg_buf_puts(b, ", ");
        print_bound(b, f->hi);
        sg_buf_printf(b, "]%s", f->range_exact ? "" : " (over-approximation)");
        if (f->modulus > 1) {
            char m[SG_INT_STRLEN];
            sg_buf_printf(b, ", = %s mod %s", sg_int_format(buf, f->residue), sg_int_format(m, f->modulus));
        }
        for (k = 0; k < f->nholes; k++)
            sg_buf_printf(b, "%s%s", k ? ", " : ", except ", sg_int_format(buf, f->holes[k]));
        if (f->nholes && !f->holes_complete)
            sg_buf_puts(b, " (maybe more)");
        if (f->equals) {
            char *eq = NULL;
            naming nm;
            nm.r = r;
            nm.t = t;
            if (sg_expr_print(&eq, f->equals, SG_SYNTAX_PYTHON, source_name, &nm, NULL) == 0)
                sg_buf_printf(b, ", = %s", eq);
            sg_free(eq);
        }
        sg_buf_puts(b, "\n");
    }
    sg_buf_printf(b, "\n%u solver queries, %u guards decided without Z3, %.3f s\n", r->stats.queries,
                  r->stats.decided_cheaply, r->stats.seconds);
}


/* Print an expression in sympy form (or `?`). */
static void put_expr(sg_buf *b, const sg_expr *e)
{
    char *s = NULL;
    sg_error err = SG_ERROR_INIT;

    if (e && sg_expr_print(&s, e, SG_SYNTAX_SYMPY, NULL, NULL, &err) == 0)
        sg_buf_puts(b, s);
    else
        sg_buf_puts(b, "?");
    sg_free(s);
}

/* A verify report: the program's verdict, its runtime asserts, each dim, each violation. */
static void verify_text(sg_buf *b, const sg_report *r)
{
    const sg_verify_info *v = r->verify;
    size_t n = 0, i, k;
    const sg_input_dim *in = sg_trace_inputs(r->trace, &n);
    char a[SG_INT_STRLEN];

    sg_buf_printf(b, "%s: %s (%s)\n", v->name ? v->name : "program", sg_verdict_name(r->verdict),
                  v->against_spec ? "the given spec" : "the declared range_constraints");
    sg_buf_printf(b, "runtime asserts: %zu (%zu over input sizes, %zu data-dependent, %zu not recovered)\n",
                  v->asserts, v->checked - v->data_dependent, v->data_dependent, v->asserts - v->checked);
    if (v->has_guards_code)
        sg_buf_printf(b, "guards_code: %zu (%zu read over the input sizes, %zu not read)\n", v->guards, v->guards_read,
                      v->guards - v->guards_read);
    if (v->kernels_all)
        sg_buf_printf(b, "kernel shape checks: %zu (%zu over input sizes, %zu data-dependent)\n", v->kernels_all,
                      v->kernels, v->kernels_all - v->kernels);
    for (i = 0; i < r->ndims; i++) {
        const sg_dim_result *d = &r->dims[i];
        const sg_input_dim *x = &in[d->input];
        if (d->status == SG_DIM_STATIC)
            continue;
        sg_buf_printf(b, "  %s.size()[%d] = ", x->path, x->dim);
        put_expr(b, x->value);
        sg_buf_printf(b, ": %s", sg_dim_status_name(d->status));
        if (d->reason[0])
            sg_buf_printf(b, " (%s)", d->reason);
        sg_buf_putc(b, '\n');
    }
    for (i = 0; i < r->nviolations; i++) {
        const sg_violation *vi = &r->violations[i];
        sg_buf_printf(b, "violation: %s: %s\n", vi->dim ? vi->dim : "?", vi->message ? vi->message : "");
        if (vi->has_counterexample) {
            sg_buf_puts(b, "  witness:");
            for (k = 0; k < n; k++)
                sg_buf_printf(b, "%s %s.size()[%d]=%s", k ? "," : "", in[k].path, in[k].dim,
                              sg_int_format(a, vi->counterexample[k]));
            sg_buf_putc(b, '\n');
        }
        for (k = 0; k < vi->ncore; k++) {
            const sg_core_item *c = &vi->core[k];
            /* a shape guard is a guards_code entry (the first guards_read), else a kernel's condition */
            bool shape = c->kind == SG_CORE_GUARD && !sg_trace_guard_is_runtime_assert(r->trace, c->index);
            if (shape && c->index >= v->guards_read)
                sg_buf_printf(b, "  fails kernel shape check: %s\n", c->loc ? c->loc : c->text);
            else
                sg_buf_printf(b, "  %s: %s\n",
                              shape                               ? "fails guard (guards_code)"
                              : c->kind == SG_CORE_GUARD          ? "fails runtime assert"
                              : c->kind == SG_CORE_RANGE          ? "fails declared range"
                              : c->kind == SG_CORE_SPEC           ? "spec" : "with",
                              c->text);
        }
    }
}


/* torch's own lines and what re-checking them gave (check --explain). */
static void torch_text(sg_buf *b, const sg_report *r)
{
    const sg_torch_recheck *k = r->torch;
    const sg_fixes *f = r->fixes;
    size_t i;
    bool same = true;

    sg_buf_puts(b, "\ntorch suggested:\n");
    for (i = 0; i < k->nlines; i++)
        sg_buf_printf(b, "  %s\n", k->lines[i]);
    sg_buf_printf(b, "  applied as refine_dynamic_shapes_from_suggested_fixes reads them and checked: %s\n",
                  sg_verdict_name(k->verdict));
    if (k->verdict == SG_VERDICT_VIOLATIONS)
        sg_buf_puts(b, "  (the spec they make allows shapes the recorded guards reject: torch may still re-export it,\n"
                       "  its analysis starting every size at 2, but the exported program's ranges then admit shapes\n"
                       "  it rejects at run time)\n");
    if (k->why)
        sg_buf_printf(b, "    %s\n", k->why);
    for (i = 0; i < f->nfixes; i++)
        if (i >= k->nlines || strcmp(k->lines[i], f->fixes[i].line) != 0)
            same = false;
    if (same && f->nfixes == k->nlines)
        sg_buf_puts(b, "  ours are the same lines\n");
    else
        sg_buf_puts(b, "  ours differ (above): each of ours was re-checked before it was printed\n");
}

/* The suggested fixes after the diagnosis; PYTHON adds the fixed spec, EXPLAIN how it was found. */
static int fixes_text(sg_buf *b, const sg_report *r, unsigned flags, sg_error *err)
{
    const sg_fixes *f = r->fixes;
    size_t i;
    int rc;

    if (f->verified) {
        sg_buf_printf(b, "\nSuggested fixes (re-checked: the fixed spec is proved, %u round%s):\n", f->rounds,
                      f->rounds == 1 ? "" : "s");
        for (i = 0; i < f->nfixes; i++)
            sg_buf_printf(b, "  %s\n", f->fixes[i].line);
    } else if (f->untraced) {
        sg_buf_puts(b, "\nSuggested spec repair (not verified: torch stopped before tracing the model):\n");
        for (i = 0; i < f->nfixes; i++)
            sg_buf_printf(b, "  %s\n", f->fixes[i].line);
    } else {
        sg_buf_puts(b, "\nNo suggested fix: none that could be derived checks clean.\n");
    }
    if ((flags & SG_TEXT_EXPLAIN) || !f->verified || f->nfixes == 0 || f->repaired) /* no line: the notes say what changed */
        for (i = 0; i < f->nnotes; i++)
            sg_buf_printf(b, "  note: %s\n", f->notes[i]);
    /* an untraced repair is shown as Python: a structural repair has no fix line to say it */
    if (((flags & SG_TEXT_PYTHON) || f->untraced || f->repaired) && f->spec_json) {
        char *py = NULL;
        if ((rc = sg_spec_to_python(&py, r->trace, f->spec_json, err)) != 0)
            return rc;
        sg_buf_printf(b, "\n%s", py);
        sg_free(py);
    } else if (f->untraced && f->python) { /* a repair with no spec to print: always shown, it is the repair */
        sg_buf_printf(b, "\n%s", f->python);
    }
    if ((flags & SG_TEXT_EXPLAIN) && r->torch)
        torch_text(b, r);
    return 0;
}

/* A spec report: the generated spec as Python, with the notes as comments. */
static int spec_text(sg_buf *b, const sg_report *r, sg_error *err)
{
    const sg_fixes *f = r->fixes;
    size_t i;
    int rc;

    if (f->verified && f->spec_json) {
        char *py = NULL;
        if ((rc = sg_spec_to_python(&py, r->trace, f->spec_json, err)) != 0)
            return rc;
        for (i = 0; i < f->nnotes; i++)
            sg_buf_printf(b, "# %s\n", f->notes[i]);
        sg_buf_puts(b, py);
        sg_free(py);
    } else {
        sg_buf_printf(b, "# no spec could be verified (re-check: %s)\n", sg_verdict_name(f->recheck));
        for (i = 0; i < f->nnotes; i++)
            sg_buf_printf(b, "# %s\n", f->notes[i]);
    }
    return 0;
}

int sg_report_to_text(char **out, const sg_report *r, unsigned flags, sg_error *err)
{
    sg_buf b;
    int rc = 0;

    SG_ENTRY_CHECK("sg_report_to_text", out, r, "sg_report_to_text: no report", err);
    sg_buf_init(&b, (size_t)1 << 30);
    if (r->kind == SG_REPORT_VERIFY && r->verify) {
        verify_text(&b, r);
    } else if (r->kind == SG_REPORT_SPEC && r->fixes) {
        rc = spec_text(&b, r, err);
    } else if (flags & SG_TEXT_TORCH) {
        /* torch's own text (a spec torch rejects before tracing: the check's message is torch's) */
        if (r->torch_message)
            sg_buf_printf(&b, "%s\n", r->torch_message);
        else if (r->nviolations && r->violations[0].kind == SG_VIOL_SPEC)
            sg_buf_printf(&b, "%s\n", r->violations[0].message);
    } else {
        check_text(&b, r);
        if (r->fixes)
            rc = fixes_text(&b, r, flags, err);
    }
    if (rc) {
        sg_buf_dispose(&b);
        return rc;
    }
    return sg_buf_finish(&b, out, "the report", err);
}
