/*
 * gate_serving.c - the release gate's serving descriptors (docs/gate.md):
 * NEW's per-dim bounds found by bisection on Z3's answers over its domain,
 * then the shape sets a server is configured with (TensorRT's min / opt /
 * max, Triton's input block) and a dynamic_shapes spec, each checked
 * against NEW's domain before it is offered.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gate_ctx.h"
#include "torch/pyspec.h"

#define SERVING_BIG ((sg_int)1 << 62) /* at or above: unbounded */

/* `v OP k` over the gate's pool. */
static const sg_expr *cmp(gate_ctx *c, int op, const sg_expr *v, sg_int k)
{
    return sg_expr_2(c->pool, op, v, sg_expr_int(c->pool, k));
}

/*
 * The least (`want_max` false) or greatest value of variable `k` over `sn`'s domain, by
 * bisection on Z3's answers starting from `start` (a value the domain admits); `*unbounded` for
 * a greatest value at or above SERVING_BIG. Returns 0 with `*ok` false (and `reason`) when a
 * query is not decided.
 */
static int bound_of(gate_ctx *c, const side *sn, const bool *dyn, size_t k, bool want_max, sg_int start, sg_int *out,
                    bool *unbounded, bool *ok, char *reason, size_t cap, const sg_check_options *o,
                    const sg_runtime *rt, sg_int *vals)
{
    sg_int lo, hi;
    sg_sat_answer ans;
    bool exact;
    int rc;
    uint32_t vi = sg_expr_symbol_index(c->var[k]);

    *ok = true;
    *unbounded = false;
    if (!want_max) {
        lo = dyn[k] ? 2 : 0;
        hi = start;
        while (lo < hi) {
            sg_int mid = lo + (hi - lo) / 2;
            if ((rc = sg_gate__query(c, sn, NULL, cmp(c, SG_LE, c->var[k], mid), dyn, o, rt, &ans, vals,
                                     &exact, reason, cap)) != 0)
                return rc;
            if (ans == SG_SAT_UNKNOWN || (ans == SG_SAT_YES && !exact))
                return (*ok = false), 0;
            if (ans == SG_SAT_YES)
                hi = vals[vi] < mid ? vals[vi] : mid;
            else
                lo = mid + 1;
        }
        *out = hi;
        return 0;
    }
    if ((rc = sg_gate__query(c, sn, NULL, cmp(c, SG_GE, c->var[k], SERVING_BIG), dyn, o, rt, &ans, vals,
                             &exact, reason, cap)) != 0)
        return rc;
    if (ans == SG_SAT_UNKNOWN)
        return (*ok = false), 0;
    if (ans == SG_SAT_YES) {
        *unbounded = true;
        return 0;
    }
    /* gallop up from the start (sizes are small next to SERVING_BIG), then bisect */
    lo = start;
    hi = SERVING_BIG - 1;
    for (sg_int probe = start < 1 ? 2 : 2 * start; probe < SERVING_BIG; probe *= 2) {
        if ((rc = sg_gate__query(c, sn, NULL, cmp(c, SG_GE, c->var[k], probe), dyn, o, rt, &ans, vals, &exact,
                                 reason, cap)) != 0)
            return rc;
        if (ans == SG_SAT_UNKNOWN || (ans == SG_SAT_YES && !exact))
            return (*ok = false), 0;
        if (ans == SG_SAT_NO) {
            hi = probe - 1;
            break;
        }
        lo = vals[vi] > probe ? vals[vi] : probe;
    }
    while (lo < hi) {
        sg_int mid = lo + (hi - lo + 1) / 2;
        if ((rc = sg_gate__query(c, sn, NULL, cmp(c, SG_GE, c->var[k], mid), dyn, o, rt, &ans, vals, &exact,
                                 reason, cap)) != 0)
            return rc;
        if (ans == SG_SAT_UNKNOWN || (ans == SG_SAT_YES && !exact))
            return (*ok = false), 0;
        if (ans == SG_SAT_YES)
            lo = vals[vi] > mid ? vals[vi] : mid;
        else
            hi = mid - 1;
    }
    *out = lo;
    return 0;
}

/* Does every condition of `s` hold at the point `vals`? The first that does not into `*why`. */
static bool accepts(gate_ctx *c, const side *s, const sg_int *vals, const cond **why)
{
    size_t i;
    *why = NULL;
    for (i = 0; i < s->n; i++) {
        sg_value v;
        sg_error e2 = SG_ERROR_INIT;
        if (sg_expr_eval(&v, c->pool, s->conds[i].e, vals, sg_pool_nsymbols(c->pool), &e2) != 0 || v.kind != SG_VAL_BOOL
            || !v.num) {
            *why = &s->conds[i];
            return false;
        }
    }
    return true;
}

/* A Python identifier from a pytree path and dim: "['inputs']['b'][0]", 1 -> "inputs_b_0_1". */
static void ident_of(char *out, size_t cap, const char *path, size_t dim, bool with_dim)
{
    size_t n = sg_pyspec__ident(out, cap - 1, path, "in_");
    out[n] = '\0';
    if (with_dim)
        snprintf(out + n, cap - n, "_%zu", dim);
}

/* One tensor input's dims in the spec: per dim the leaf text, or NULL for a static dim. */
typedef struct spec_in {
    const char *path;
    const char *whole;   /* the leaf of a non-tensor input ("None"), else NULL */
    size_t ndim;
    char **leaf;
} spec_in;

/* The pytree path "['a'][0]['b']" token `k` (from 0) into `tok` as Python text ("'a'", "0"); false past the end. */
static bool path_token(const char *path, size_t k, char *tok, size_t cap, bool *is_int)
{
    const char *s = path;
    size_t i;
    for (i = 0;; i++) {
        const char *e;
        if (*s != '[')
            return false;
        e = strchr(s, ']');
        if (!e)
            return false;
        if (i == k) {
            *is_int = s[1] != '\'' && s[1] != '"';
            snprintf(tok, cap, "%.*s", (int)(e - s - 1), s + 1);
            return true;
        }
        s = e + 1;
    }
}

/* Print the level of the inputs `ins[from..to)` sharing their first `depth` tokens. */
static void spec_level(sg_buf *b, const spec_in *ins, size_t from, size_t to, size_t depth)
{
    char tok[256], t2[256];
    bool is_int = false, i2;
    size_t i, j, d;

    if (from + 1 == to && !path_token(ins[from].path, depth, tok, sizeof tok, &is_int)) {
        bool any = false;
        if (ins[from].whole) {
            sg_buf_puts(b, ins[from].whole);
            return;
        }
        for (d = 0; d < ins[from].ndim; d++)
            any |= ins[from].leaf[d] != NULL;
        if (!any) {
            sg_buf_puts(b, "None");
            return;
        }
        sg_buf_putc(b, '{');
        for (d = 0, any = false; d < ins[from].ndim; d++)
            if (ins[from].leaf[d]) {
                sg_buf_printf(b, "%s%zu: %s", any ? ", " : "", d, ins[from].leaf[d]);
                any = true;
            }
        sg_buf_putc(b, '}');
        return;
    }
    path_token(ins[from].path, depth, tok, sizeof tok, &is_int);
    if (is_int) {
        long next = 0;
        sg_buf_putc(b, '[');
        for (i = from; i < to; i = j) {
            long idx;
            path_token(ins[i].path, depth, tok, sizeof tok, &is_int);
            idx = strtol(tok, NULL, 10);
            for (; next < idx; next++)
                sg_buf_puts(b, next ? ", None" : "None");
            for (j = i; j < to && path_token(ins[j].path, depth, t2, sizeof t2, &i2) && strcmp(t2, tok) == 0; j++)
                ;
            sg_buf_puts(b, next ? ", " : "");
            spec_level(b, ins, i, j, depth + 1);
            next = idx + 1;
        }
        sg_buf_putc(b, ']');
        return;
    }
    sg_buf_putc(b, '{');
    for (i = from; i < to; i = j) {
        path_token(ins[i].path, depth, tok, sizeof tok, &is_int);
        for (j = i; j < to && path_token(ins[j].path, depth, t2, sizeof t2, &i2) && strcmp(t2, tok) == 0; j++)
            ;
        sg_buf_printf(b, "%s%s: ", i == from ? "" : ", ", tok);
        spec_level(b, ins, i, j, depth + 1);
    }
    sg_buf_putc(b, '}');
}

/* "Dim('NAME', min=LO, max=HI)" (no max when unbounded) into `out`. */
static void dim_text(char *out, size_t cap, const char *name, sg_int lo, sg_int hi, bool unbounded)
{
    char a[SG_INT_STRLEN], z[SG_INT_STRLEN];
    if (unbounded)
        snprintf(out, cap, "Dim('%s', min=%s)", name, sg_int_format(a, lo));
    else
        snprintf(out, cap, "Dim('%s', min=%s, max=%s)", name, sg_int_format(a, lo), sg_int_format(z, hi));
}

/*
 * NEW's dynamic_shapes from its bounds: a symbol of NEW that an input dim is exactly is a Dim
 * named after the first such dim (`x_0` for ['x'] dim 0) with that dim's bounds; a dim A*s + B
 * is derived from it, or from a root Dim `_x_0` when no dim is `s`; any other dynamic size is
 * Dim.AUTO. Verified: Z3 finds no shape the spec admits that NEW rejects; when it finds one, the
 * symbols of the condition that rejects it become Dim.AUTO (torch then infers them), again.
 */
static int serving_spec(gate_ctx *c, sg_gate *gt, const side *sn, const bool *dyn, const sg_int *lo, const sg_int *hi,
                        const bool *unb, const sg_check_options *o, const sg_runtime *rt)
{
    const prog *p = sn->p;
    size_t nps = sg_pool_nsymbols(p->pool) + 1, ns = sg_pool_nsymbols(c->pool) + c->nvars + 1, i, d, k, round;
    bool *autos = sg__calloc(nps, sizeof *autos);
    long *named = sg__malloc(nps * sizeof *named); /* per NEW symbol: the variable whose dim is exactly it, or -1 */
    long *rootvar = sg__malloc(nps * sizeof *rootvar); /* per NEW symbol: the first variable affine in it, or -1 */
    sg_int *vals = sg__calloc(ns, sizeof *vals);
    const sg_expr **conds = sg__calloc(4 * c->nvars + 1, sizeof *conds);
    spec_in *ins = sg__calloc(p->ninputs + 1, sizeof *ins);
    size_t nins = 0;
    sg_gate_serving *sv = &gt->serving;
    char leaf[300], name[200], reason[160];
    sg_buf b, roots;
    int rc = 0;

    sg_buf_init(&b, (size_t)1 << 24);
    sg_buf_init(&roots, (size_t)1 << 24);
    if (!autos || !named || !rootvar || !vals || !conds || !ins)
        goto oom;
    for (i = 0; i < nps; i++)
        named[i] = rootvar[i] = -1;
    for (k = 0; k < c->nvars; k++) {
        const prog_input *pi = sg_gate__input_named(p, c->vpath[k]);
        const sg_expr *sz = pi ? pi->sizes[c->vdim[k]] : NULL;
        const sg_expr *root = NULL;
        sg_int a, bb;
        if (sz && sg_expr_kind(sz) == SG_SYM && named[sg_expr_symbol_index(sz)] < 0)
            named[sg_expr_symbol_index(sz)] = (long)k;
        if (sz && dyn[k] && sg_expr_affine(sz, &root, &a, &bb) && root && a >= 1 && rootvar[sg_expr_symbol_index(root)] < 0)
            rootvar[sg_expr_symbol_index(root)] = (long)k;
    }
    for (round = 0; round <= c->nvars + 1; round++) {
        size_t nc = 0;
        sg_sat_answer ans;
        bool exact, progress = false;
        const cond *why = NULL;

        sg_buf_dispose(&b);
        sg_buf_dispose(&roots);
        sg_buf_init(&b, (size_t)1 << 24);
        sg_buf_init(&roots, (size_t)1 << 24);
        /* the spec's conditions over the variables */
        for (k = 0; k < c->nvars; k++) {
            const prog_input *pi = sg_gate__input_named(p, c->vpath[k]);
            const sg_expr *sz = pi->sizes[c->vdim[k]], *root = NULL, *v = c->var[k];
            sg_int a, bb;
            if (!dyn[k]) {
                conds[nc++] = cmp(c, SG_EQ, v, lo[k]);
                continue;
            }
            if (!sg_expr_affine(sz, &root, &a, &bb) || !root || a < 1 || autos[sg_expr_symbol_index(root)])
                continue; /* Dim.AUTO */
            if (sg_expr_kind(sz) == SG_SYM && named[sg_expr_symbol_index(sz)] == (long)k) {
                conds[nc++] = cmp(c, SG_GE, v, lo[k]);
                if (!unb[k])
                    conds[nc++] = cmp(c, SG_LE, v, hi[k]);
            } else if (named[sg_expr_symbol_index(root)] >= 0) {
                const sg_expr *u = c->var[named[sg_expr_symbol_index(root)]];
                conds[nc++] = sg_expr_2(c->pool, SG_EQ, v,
                                        sg_expr_2(c->pool, SG_ADD, sg_expr_2(c->pool, SG_MUL, sg_expr_int(c->pool, a), u),
                                                  sg_expr_int(c->pool, bb)));
            } else if (rootvar[sg_expr_symbol_index(root)] == (long)k) {
                /* the first dim over a root no dim is: v in [lo, hi], v == a*r + b */
                conds[nc++] = cmp(c, SG_GE, v, lo[k]);
                if (!unb[k])
                    conds[nc++] = cmp(c, SG_LE, v, hi[k]);
                conds[nc++] = cmp(c, SG_EQ, sg_expr_2(c->pool, SG_MOD, sg_expr_sub(c->pool, v, sg_expr_int(c->pool, bb)),
                                                      sg_expr_int(c->pool, a)), 0);
            } else { /* the same root as that first dim k0 (a0*r + b0): a0*(v - b) == a*(v0 - b0) */
                long k0 = rootvar[sg_expr_symbol_index(root)];
                const prog_input *p0 = sg_gate__input_named(p, c->vpath[k0]);
                const sg_expr *r0 = NULL;
                sg_int a0 = 1, b0 = 0;
                sg_expr_affine(p0->sizes[c->vdim[k0]], &r0, &a0, &b0);
                conds[nc++] = sg_expr_2(
                    c->pool, SG_EQ, sg_expr_2(c->pool, SG_MUL, sg_expr_int(c->pool, a0), sg_expr_sub(c->pool, v, sg_expr_int(c->pool, bb))),
                    sg_expr_2(c->pool, SG_MUL, sg_expr_int(c->pool, a), sg_expr_sub(c->pool, c->var[k0], sg_expr_int(c->pool, b0))));
            }
        }
        {
            const sg_expr *all = nc ? sg_expr_apply(c->pool, SG_AND, conds, nc) : sg_expr_bool(c->pool, true);
            side spec;
            memset(&spec, 0, sizeof spec);
            spec.p = p;
            if (!sg_gate__add_cond(&spec, all, "spec", NULL, "%s%s", "dynamic_shapes", NULL)) {
                sg_free(spec.conds);
                goto oom;
            }
            rc = sg_gate__query(c, &spec, sn, NULL, dyn, o, rt, &ans, vals, &exact, reason, sizeof reason);
            sg_free(spec.conds);
            if (rc)
                goto cleanup;
        }
        if (ans == SG_SAT_UNKNOWN) {
            snprintf(sv->spec_note, sizeof sv->spec_note, "not verified: %.120s", reason);
            break;
        }
        if (ans == SG_SAT_NO) {
            sv->spec_verified = true;
            break;
        }
        /* a shape the spec admits and NEW rejects: the symbols of the rejecting condition become AUTO */
        if (!accepts(c, sn, vals, &why) && why) {
            const sg_expr **syms = NULL;
            size_t n = 0, j;
            if ((rc = sg_expr_symbols(&syms, &n, c->pool, why->e, c->err)) != 0)
                goto cleanup;
            for (j = 0; j < n; j++)
                for (k = 0; k < c->nvars; k++)
                    if (c->var[k] == syms[j] && dyn[k]) {
                        const prog_input *pi = sg_gate__input_named(p, c->vpath[k]);
                        const sg_expr *root = NULL;
                        sg_int a, bb;
                        if (sg_expr_affine(pi->sizes[c->vdim[k]], &root, &a, &bb) && root
                            && !autos[sg_expr_symbol_index(root)])
                            progress = autos[sg_expr_symbol_index(root)] = true;
                    }
            sg_free((void *)syms);
        }
        if (!progress) {
            snprintf(sv->spec_note, sizeof sv->spec_note, "not verified: a shape it admits is rejected by %.150s",
                     why ? why->source : "a condition of NEW");
            break;
        }
    }
    /* the text */
    for (i = 0; i < p->ninputs; i++) {
        const prog_input *pi = &p->inputs[i];
        spec_in *si;
        si = &ins[nins++];
        /* a non-tensor input: None (torch specialises it), a dynamic int stays Dim.DYNAMIC */
        si->whole = pi->tensor ? NULL : pi->value ? "None" : "Dim.DYNAMIC";
        si->path = pi->path;
        si->ndim = pi->ndim;
        if (!(si->leaf = sg__calloc(pi->ndim + 1, sizeof *si->leaf)))
            goto oom;
        for (d = 0; d < pi->ndim; d++) {
            const sg_expr *sz = pi->sizes[d], *root = NULL;
            sg_int a, bb;
            char num[SG_INT_STRLEN];
            for (k = 0; k < c->nvars && !(c->vdim[k] == d && strcmp(c->vpath[k], pi->path) == 0); k++)
                ;
            if (k == c->nvars || !dyn[k])
                continue;
            if (!sg_expr_affine(sz, &root, &a, &bb) || !root || a < 1 || autos[sg_expr_symbol_index(root)]) {
                snprintf(leaf, sizeof leaf, "Dim.AUTO");
            } else if (sg_expr_kind(sz) == SG_SYM && named[sg_expr_symbol_index(sz)] == (long)k) {
                ident_of(name, sizeof name, pi->path, d, true);
                dim_text(leaf, sizeof leaf, name, lo[k], hi[k], unb[k]);
                sg_buf_printf(&roots, "%s = %s\n", name, leaf);
                snprintf(leaf, sizeof leaf, "%s", name);
            } else {
                long u = named[sg_expr_symbol_index(root)];
                if (u >= 0) {
                    ident_of(name, sizeof name, c->vpath[u], c->vdim[u], true);
                } else {
                    long k0 = rootvar[sg_expr_symbol_index(root)];
                    sg_int rlo = (lo[k] - bb + a - 1) / a, rhi = (hi[k] - bb) / a;
                    char nm2[190];
                    ident_of(nm2, sizeof nm2, c->vpath[k0], c->vdim[k0], true);
                    snprintf(name, sizeof name, "_%s", nm2);
                    if (k0 == (long)k) {
                        dim_text(leaf, sizeof leaf, name, rlo < 0 ? 0 : rlo, rhi, unb[k]);
                        sg_buf_printf(&roots, "%s = %s\n", name, leaf);
                    }
                }
                if (a == 1)
                    snprintf(leaf, sizeof leaf, "%s", name);
                else
                    snprintf(leaf, sizeof leaf, "%s*%s", sg_int_format(num, a), name);
                if (bb)
                    snprintf(leaf + strlen(leaf), sizeof leaf - strlen(leaf), " %c %s", bb < 0 ? '-' : '+',
                             sg_int_format(num, bb < 0 ? -bb : bb));
            }
            if (!(si->leaf[d] = sg__strdup(leaf)))
                goto oom;
        }
    }
    sg_buf_puts(&b, "from torch.export import Dim\n");
    sg_buf_puts(&b, roots.data ? roots.data : "");
    sg_buf_puts(&b, "dynamic_shapes = ");
    if (nins)
        spec_level(&b, ins, 0, nins, 0);
    else
        sg_buf_puts(&b, "None");
    sg_buf_putc(&b, '\n');
    rc = sg_buf_finish(&b, &sv->dynamic_shapes, "the dynamic_shapes text", c->err);
    goto cleanup;
oom:
    rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
    sg_buf_dispose(&b);
cleanup:
    sg_buf_dispose(&roots);
    for (i = 0; i < nins; i++) {
        for (d = 0; d < ins[i].ndim; d++)
            sg_free(ins[i].leaf[d]);
        sg_free(ins[i].leaf);
    }
    sg_free(ins);
    sg_free(autos);
    sg_free(named);
    sg_free(rootvar);
    sg_free(vals);
    sg_free((void *)conds);
    return rc;
}

/*
 * The serving descriptors of NEW (signatures equal, so NEW's dims are OLD's variables): per
 * tensor input, per dim, the least and greatest size NEW's domain admits (dynamic ones from 2),
 * an optimum (the trace's example when NEW accepts it, else the max), each of the min / opt /
 * max shape sets checked against NEW's domain, and a dynamic_shapes spec whose shapes NEW all
 * accepts (a dim whose conditions its range does not express becomes Dim.AUTO).
 */
int sg_gate__serving(gate_ctx *c, sg_gate *gt, const side *sn, const sg_gate_input *in, const sg_check_options *o,
                     const sg_runtime *rt)
{
    const prog *p = sn->p;
    size_t ns = sg_pool_nsymbols(c->pool) + c->nvars + 1, i, d, k;
    sg_int *vals = sg__calloc(ns, sizeof *vals), *start = sg__calloc(ns, sizeof *start);
    sg_int *lo = sg__calloc(c->nvars + 1, sizeof *lo), *hi = sg__calloc(c->nvars + 1, sizeof *hi);
    bool *dyn = sg__calloc(c->nvars + 1, sizeof *dyn), *unb = sg__calloc(c->nvars + 1, sizeof *unb), ok = true, exact;
    sg_int cap = in->serving_cap > 0 ? (sg_int)in->serving_cap : 4096;
    sg_gate_serving *sv = &gt->serving;
    sg_sat_answer ans;
    char reason[160] = "";
    int rc = 0;

    if (!vals || !start || !lo || !hi || !dyn || !unb) {
        rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
        goto cleanup;
    }
    gt->has_serving = true;
    for (k = 0; k < c->nvars; k++) {
        const prog_input *pi = sg_gate__input_named(p, c->vpath[k]);
        dyn[k] = pi && c->vdim[k] < pi->ndim && sg_expr_kind(pi->sizes[c->vdim[k]]) != SG_INT;
    }
    if ((rc = sg_gate__query(c, sn, NULL, NULL, dyn, o, rt, &ans, start, &exact, reason, sizeof reason)) != 0)
        goto cleanup;
    if (ans != SG_SAT_YES || !exact) {
        snprintf(sv->reason, sizeof sv->reason, "%s", ans == SG_SAT_NO ? "NEW accepts no shape at all"
                 : reason[0] ? reason : "not decided");
        goto cleanup;
    }
    for (k = 0; k < c->nvars && ok; k++) {
        if ((rc = bound_of(c, sn, dyn, k, false, start[sg_expr_symbol_index(c->var[k])], &lo[k], &unb[k], &ok, reason,
                           sizeof reason, o, rt, vals)) != 0
            || !ok
            || (rc = bound_of(c, sn, dyn, k, true, start[sg_expr_symbol_index(c->var[k])], &hi[k], &unb[k], &ok,
                              reason, sizeof reason, o, rt, vals)) != 0)
            goto cleanup;
    }
    if (!ok) {
        snprintf(sv->reason, sizeof sv->reason, "a bound was not decided: %.120s", reason);
        goto cleanup;
    }
    if (!(sv->inputs = sg__calloc(p->ninputs + 1, sizeof *sv->inputs))) {
        rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (i = 0; i < p->ninputs; i++) {
        const prog_input *pi = &p->inputs[i];
        sg_gate_serving_input *si;
        if (!pi->tensor)
            continue;
        si = &sv->inputs[sv->ninputs++];
        si->path = sg__strdup(pi->path);
        si->name = pi->name ? sg__strdup(pi->name) : sg__malloc(strlen(pi->path) + 8);
        si->ndim = pi->ndim;
        snprintf(si->dtype, sizeof si->dtype, "%s", pi->dtype);
        si->dims = sg__calloc(pi->ndim + 1, sizeof *si->dims);
        if (!si->path || !si->name || !si->dims) {
            rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
            goto cleanup;
        }
        if (!pi->name) /* the name the served model expects: the placeholder's; else the path as one */
            ident_of(si->name, strlen(pi->path) + 8, pi->path, 0, false);
        for (d = 0; d < pi->ndim; d++) {
            sg_gate_serving_dim *sd = &si->dims[d];
            const sg_expr *v = sg_gate__var_of(c, pi->path, d);
            for (k = 0; k < c->nvars && c->var[k] != v; k++)
                ;
            if (k == c->nvars)
                continue;
            sd->dynamic = dyn[k];
            sd->min = lo[k];
            sd->unbounded = unb[k];
            sd->max = unb[k] ? (cap > lo[k] ? cap : lo[k]) : hi[k];
            sd->opt = sd->max;
            sd->has_example = pi->examples != NULL;
            if (pi->examples)
                sd->example = pi->examples[d];
        }
    }
    /* the three shape sets, each checked against NEW's domain; opt: the example (a trace's example
     * inputs, an archive's recorded example sizes) clamped into [min, max], when NEW accepts it,
     * else the max */
    {
        const char *what[3] = {"min", "opt", "max"};
        size_t w;
        bool use_example = true, clamped = false;
        for (k = 0; k < c->nvars; k++) {
            bool found = false;
            for (i = 0; i < sv->ninputs && !found; i++)
                if (strcmp(sv->inputs[i].path, c->vpath[k]) == 0) {
                    found = true;
                    use_example &= sv->inputs[i].dims[c->vdim[k]].has_example;
                }
            use_example &= found;
        }
        snprintf(sv->opt_source, sizeof sv->opt_source, "the max (%s)",
                 use_example ? "NEW rejects the example sizes" : "no example sizes are recorded");
        for (w = 0; w < 3; w++) {
            const cond *why = NULL;
            memset(vals, 0, ns * sizeof *vals);
            for (i = 0; i < sv->ninputs; i++)
                for (d = 0; d < sv->inputs[i].ndim; d++) {
                    const sg_expr *v = sg_gate__var_of(c, sv->inputs[i].path, d);
                    sg_gate_serving_dim *sd = &sv->inputs[i].dims[d];
                    sg_int ex = sd->example < sd->min ? sd->min : sd->example > sd->max ? sd->max : sd->example;
                    if (w == 1 && use_example && ex != sd->example)
                        clamped = true;
                    if (v)
                        vals[sg_expr_symbol_index(v)] = w == 0 ? sd->min : w == 2 ? sd->max : use_example ? ex : sd->max;
                }
            if (w == 1 && use_example && !accepts(c, sn, vals, &why)) {
                use_example = false; /* the example is not one NEW accepts: opt is the max */
                clamped = false;
                w--;
                continue;
            }
            sv->accepted[w] = accepts(c, sn, vals, &why);
            if (!sv->accepted[w] && why)
                snprintf(sv->rejected[w], sizeof sv->rejected[w], "%s shapes: %.200s", what[w], why->source);
            if (w == 1)
                for (i = 0; i < sv->ninputs; i++)
                    for (d = 0; d < sv->inputs[i].ndim; d++) {
                        sg_gate_serving_dim *sd = &sv->inputs[i].dims[d];
                        if (use_example)
                            sd->opt = sd->example < sd->min ? sd->min : sd->example > sd->max ? sd->max : sd->example;
                    }
        }
        sv->opt_is_example = use_example;
        if (use_example)
            snprintf(sv->opt_source, sizeof sv->opt_source, "%s%s", sn->p->example_from ? sn->p->example_from : "the example",
                     clamped ? ", clamped into [min, max]" : "");
    }
    if ((rc = serving_spec(c, gt, sn, dyn, lo, hi, unb, o, rt)) != 0)
        goto cleanup;
    sv->ok = true;
cleanup:
    sg_free(vals);
    sg_free(start);
    sg_free(lo);
    sg_free(hi);
    sg_free(dyn);
    sg_free(unb);
    return rc;
}
