/*
 * witness.c - checking a counterexample by exact evaluation (tests/witness.h).
 */
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"
#include "witness.h"

/* The value of every symbol at a counterexample: from the input dim it is the size of. */
static bool symbol_values(const sg_trace *t, sg_pool *pool, const sg_int *cex, sg_int *vals, bool *known,
                          size_t nvals)
{
    size_t ni = 0, ns = 0, i, k, round;
    const sg_input_dim *in = sg_trace_inputs(t, &ni);
    const sg_symbol_info *si = sg_trace_symbols(t, &ns);
    for (k = 0; k < ns; k++) {
        uint32_t x = sg_expr_symbol_index(si[k].sym);
        for (i = 0; i < ni && x < nvals && !known[x]; i++) {
            size_t j;
            for (j = 0; j < si[k].nsources; j++)
                if ((in[i].source && strcmp(si[k].sources[j], in[i].source) == 0) ||
                    (in[i].traced_source && strcmp(si[k].sources[j], in[i].traced_source) == 0)) {
                    vals[x] = cex[i];
                    known[x] = true;
                    break;
                }
            if (!known[x] && in[i].value == si[k].sym) {
                vals[x] = cex[i];
                known[x] = true;
            }
        }
    }
    for (round = 0; round < 4; round++) /* replaced symbols: their replacement's value */
        for (k = 0; k < ns; k++) {
            uint32_t x = sg_expr_symbol_index(si[k].sym);
            sg_value v;
            sg_error e = SG_ERROR_INIT;
            if (x >= nvals || known[x] || !si[k].replacement)
                continue;
            if (sg_expr_eval(&v, pool, si[k].replacement, vals, nvals, &e) == 0 && v.kind == SG_VAL_INT) {
                vals[x] = v.num;
                known[x] = true;
            }
        }
    return true;
}

/* Does the shape `cex` fail some constraint of the trace (a guard, a traced range or
 * shape) on the backed symbols? */
bool witness_fails(const sg_trace *t, const sg_int *cex)
{
    sg_pool *pool = NULL;
    size_t nvals = sg_pool_nsymbols(sg_trace_pool(t)), ni = 0, ns = 0, ng = 0, i;
    const sg_input_dim *in = sg_trace_inputs(t, &ni);
    const sg_symbol_info *si = sg_trace_symbols(t, &ns);
    const sg_guard *g = sg_trace_guards(t, &ng);
    sg_int *vals = calloc(nvals + 1, sizeof *vals);
    bool *known = calloc(nvals + 1, sizeof *known), fails = false;
    sg_pool_overlay_new(&pool, sg_trace_pool(t), NULL); /* evaluation scratch: the trace's pool is frozen */
    symbol_values(t, pool, cex, vals, known, nvals);
    for (i = 0; i < ni && !fails; i++) { /* traced shapes */
        sg_value v;
        sg_error e = SG_ERROR_INIT;
        if (!in[i].value)
            continue;
        if (sg_expr_eval(&v, pool, in[i].value, vals, nvals, &e) == 0 && v.kind == SG_VAL_INT)
            fails = v.num != cex[i];
    }
    for (i = 0; i < ns && !fails; i++) { /* traced ranges */
        uint32_t x = sg_expr_symbol_index(si[i].sym);
        if (si[i].unbacked || x >= nvals || !known[x])
            continue;
        fails = (!si[i].lo.inf && vals[x] < si[i].lo.v) || (!si[i].hi.inf && vals[x] > si[i].hi.v);
    }
    for (i = 0; i < ng && !fails; i++) { /* guards: undefined or false fails */
        sg_value v;
        sg_error e = SG_ERROR_INIT;
        int rc = sg_expr_eval(&v, pool, g[i].expr, vals, nvals, &e);
        if (rc == SG_EINVALID)
            continue; /* mentions an unbacked symbol: data-dependent, not a shape check */
        fails = rc == SG_EUNDEFINED || (rc == 0 && v.kind == SG_VAL_BOOL && !v.num);
    }
    free(vals);
    free(known);
    sg_pool_free(pool);
    return fails;
}

