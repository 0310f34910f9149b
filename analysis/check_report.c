/*
 * check_report.c - the report a check builds (check_impl.h): its violations, their core
 * items and texts (guards and spec items printed as torch names them), the spec's own issues.
 * Part of the checker: check.c runs the phases, check_values.c phase 2.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/check_impl.h"
#include "expr/expr.h"
#include "report/report.h"
#include "solver/problem.h"
#include "trace/trace_impl.h"
#include "torch/validate.h"
#include "util/util.h"

/* ---- Report building ------------------------------------------------------------------- */

const char *sg_check__dim_name(const sg_input_dim *d)
{
    if ((d->kind == SG_SPEC_DIM || d->kind == SG_SPEC_DERIVED) && d->name)
        return d->name;
    return d->source ? d->source : "?";
}

sg_violation *sg_check__new_violation(checker *c, size_t input, sg_violation_kind kind)
{
    sg_report *r = c->r;
    size_t cap = r->nviolations;
    sg_violation *v;
    if (sg__grow((void **)&r->violations, &cap, r->nviolations + 1, sizeof *r->violations))
        return NULL;
    v = &r->violations[r->nviolations++];
    memset(v, 0, sizeof *v);
    v->input = input;
    v->kind = kind;
    v->root = SIZE_MAX;
    v->dim = sg__strndup(sg_check__dim_name(&c->p->inputs[input]), strlen(sg_check__dim_name(&c->p->inputs[input])));
    return v->dim ? v : NULL;
}

int sg_check__spec_issues(sg_report *r, const sg_trace *t, sg_error *err)
{
    sg_spec_issues is;
    size_t i;
    int rc;

    memset(&is, 0, sizeof is);
    if ((rc = sg_spec_validate(t, r->pool, &is, err)) != 0)
        return rc;
    if (is.n && !(r->violations = sg__calloc(is.n, sizeof *r->violations))) {
        sg_spec_issues_dispose(&is);
        return sg_error_set(err, SG_ENOMEM, "out of memory validating the spec");
    }
    for (i = 0; i < is.n; i++) {
        sg_violation *v = &r->violations[r->nviolations++];
        v->input = is.v[i].input;
        v->root = SIZE_MAX;
        v->kind = is.v[i].specialized ? SG_VIOL_SPECIALIZED : SG_VIOL_SPEC;
        v->dim = is.v[i].dim;
        v->message = is.v[i].message;
        is.v[i].dim = is.v[i].message = NULL;
        if (v->input < r->ndims)
            r->dims[v->input].status = SG_DIM_REFUTED;
    }
    if (is.invalid)
        r->verdict = SG_VERDICT_INVALID_SPEC;
    sg_spec_issues_dispose(&is);
    return 0;
}

bool sg_check__spec_construction_failed(const sg_trace *t)
{
    const char *e = sg_trace_torch_error(t), *m = sg_trace_torch_error_message(t);
    return e && m && (strstr(e, "AssertionError") || strstr(e, "UserError")) && !sg_trace_torch_failed_data_dependent(t);
}

int sg_check__construction_issue(sg_report *r, const sg_trace *t, sg_error *err)
{
    const char *m = sg_trace_torch_error_message(t);
    sg_violation *v;
    if (!(r->violations = sg__calloc(1, sizeof *r->violations)))
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    v = &r->violations[r->nviolations++];
    v->input = v->root = SIZE_MAX;
    v->kind = SG_VIOL_SPEC;
    v->dim = sg__strndup("dynamic_shapes", strlen("dynamic_shapes"));
    v->message = sg__strndup(m, strlen(m));
    if (!v->dim || !v->message)
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    r->verdict = SG_VERDICT_INVALID_SPEC;
    return 0;
}

char *sg_check__print_py(checker *c, const sg_expr *e)
{
    char *s = NULL;
    sg_expr_print(&s, e, SG_SYNTAX_PYTHON, sg_problem_source_of, c->p, NULL);
    return s;
}

/* A symbol by the Dim name of the input dim it is the traced size of (torch's debug name: the
 * `2*D` of "by E = 2*D"), else by its source. */
static const char *dim_name_of(const sg_expr *sym, void *payload)
{
    const sg_problem *p = payload;
    size_t i;
    for (i = 0; i < p->ninputs; i++)
        if (p->inputs[i].value == sym && p->inputs[i].kind == SG_SPEC_DIM && p->inputs[i].name)
            return p->inputs[i].name;
    return sg_problem_source_of(sym, payload);
}

char *sg_check__print_named(checker *c, const sg_expr *e)
{
    char *s = NULL;
    sg_expr_print(&s, e, SG_SYNTAX_SYMPY, dim_name_of, c->p, NULL);
    return s;
}

/* Is a Dim with declared min `lo` analysed from 2 instead (sg_trace__dim_floor)? */
static bool raised_to_2(const sg_trace *t, sg_bound lo)
{
    sg_bound f = sg_trace__dim_floor(t, lo);
    return f.v == 2 && (lo.inf || lo.v < 2);
}

char *sg_check__spec_text(const sg_trace *t, const sg_input_dim *d)
{
    sg_buf b;
    char lo[SG_INT_STRLEN], hi[SG_INT_STRLEN];
    sg_buf_init(&b, 4096);
    switch (d->kind) {
    case SG_SPEC_DIM:
        sg_buf_printf(&b, "%s = %s in [%s, %s]%s", d->source, d->name,
                      d->min.inf ? "-int_oo" : sg_int_format(lo, d->min.v), d->max.inf ? "int_oo" : sg_int_format(hi, d->max.v),
                      raised_to_2(t, d->min) ? " (analysed from 2: torch specialises sizes 0 and 1)" : "");
        break;
    case SG_SPEC_DERIVED:
        sg_buf_printf(&b, "%s = %s, %s in [%s, %s]", d->source, d->name, d->root_name,
                      d->root_min.inf ? "-int_oo" : sg_int_format(lo, d->root_min.v),
                      d->root_max.inf ? "int_oo" : sg_int_format(hi, d->root_max.v));
        break;
    case SG_SPEC_AUTO: case SG_SPEC_DYNAMIC:
        sg_buf_printf(&b, "%s in [%s, %s] (%s)", d->source, d->min.inf ? "0" : sg_int_format(lo, d->min.v),
                      d->max.inf ? "int_oo" : sg_int_format(hi, d->max.v), d->kind == SG_SPEC_AUTO ? "AUTO" : "DYNAMIC");
        break;
    default:
        sg_buf_printf(&b, "%s = %s (static)", d->source,
                      sg_int_format(lo, d->has_static_size ? d->static_size : d->size));
        break;
    }
    return sg_buf_take(&b);
}

static char *constraint_text(checker *c, const sg_constraint *k)
{
    sg_buf b;
    char *e = NULL;
    const sg_symbol_info *si;
    char lo[SG_INT_STRLEN], hi[SG_INT_STRLEN];
    sg_buf_init(&b, 1 << 16);
    switch (k->kind) {
    case SG_CORE_RANGE: /* "lo <= x <= hi", "lo <= x", "x <= hi" */
        si = &c->p->syms[k->index];
        e = sg_check__print_py(c, si->sym);
        if (!si->lo.inf)
            sg_buf_printf(&b, "%s <= ", sg_int_format(lo, si->lo.v));
        sg_buf_puts(&b, e ? e : "?");
        if (!si->hi.inf)
            sg_buf_printf(&b, " <= %s", sg_int_format(hi, si->hi.v));
        sg_buf_puts(&b, " (traced range)");
        break;
    case SG_CORE_REPLACEMENT: {
        char *r = sg_check__print_py(c, c->p->syms[k->index].replacement);
        e = sg__strndup(sg_expr_symbol_name(c->p->syms[k->index].sym), strlen(sg_expr_symbol_name(c->p->syms[k->index].sym)));
        sg_buf_printf(&b, "%s == %s (replacement)", e ? e : "?", r ? r : "?");
        sg_free(r);
        break;
    }
    case SG_CORE_INPUT:
        e = sg_check__print_py(c, c->p->inputs[k->index].value);
        sg_buf_printf(&b, "%s == %s (traced shape)", c->p->inputs[k->index].source, e ? e : "?");
        break;
    default:
        e = sg_check__print_py(c, k->expr);
        sg_buf_puts(&b, e ? e : "?");
        break;
    }
    sg_free(e);
    return sg_buf_take(&b);
}

char *sg_check__guard_text(checker *c, const sg_constraint *k)
{
    sg_buf b;
    char lo[SG_INT_STRLEN], hi[SG_INT_STRLEN], *e;
    const sg_symbol_info *si;
    if (k->kind == SG_CORE_GUARD)
        return sg_check__print_py(c, k->expr);
    if (k->kind != SG_CORE_RANGE)
        return constraint_text(c, k);
    si = &c->p->syms[k->index];
    e = sg_check__print_py(c, si->sym);
    sg_buf_init(&b, 1 << 16);
    if (!si->lo.inf && !si->hi.inf)
        sg_buf_printf(&b, "%s <= %s and %s <= %s", sg_int_format(lo, si->lo.v), e ? e : "?", e ? e : "?",
                      sg_int_format(hi, si->hi.v));
    else if (!si->lo.inf)
        sg_buf_printf(&b, "%s <= %s", sg_int_format(lo, si->lo.v), e ? e : "?");
    else
        sg_buf_printf(&b, "%s <= %s", e ? e : "?", sg_int_format(hi, si->hi.v));
    sg_free(e);
    return sg_buf_take(&b);
}

bool sg_check__add_core(checker *c, sg_violation *v, sg_core_kind kind, size_t index, char *text, const char *loc)
{
    size_t cap = v->ncore;
    if (!text || sg__grow((void **)&v->core, &cap, v->ncore + 1, sizeof *v->core)) {
        sg_free(text);
        return false;
    }
    v->core[v->ncore].kind = kind;
    v->core[v->ncore].index = index;
    v->core[v->ncore].text = text;
    v->core[v->ncore].loc = loc;
    v->ncore++;
    return true;
}

bool sg_check__add_constraint_core(checker *c, sg_violation *v, const sg_constraint *k)
{
    const char *loc = NULL;
    if (k->kind == SG_CORE_GUARD) {
        size_t ng;
        const sg_guard *g = sg_trace_guards(c->p->trace, &ng);
        loc = g[k->index].user_loc ? g[k->index].user_loc : g[k->index].framework_loc;
    }
    return sg_check__add_core(c, v, k->kind, k->index, constraint_text(c, k), loc);
}
