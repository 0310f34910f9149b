/*
 * linear.c - an expression read as a linear form (sg_expr_linear, expr.h).
 */

#include "expr/expr.h"
#include "expr/expr_impl.h"

#define LINEAR_DEPTH 64

bool sg_expr_linear(const sg_expr *e, sg_expr_linear_sym sym, void *ctx, unsigned *work, unsigned work_max,
                    sg_lin *f, int depth)
{
    size_t i, n = sg_expr_nargs(e);
    sg_lin g;
    sg_lin_zero(f);
    if (depth > LINEAR_DEPTH || ++*work > work_max)
        return false;
    switch (sg_expr_kind(e)) {
    case SG_INT:
        f->k = sg_expr_int_value(e);
        return true;
    case SG_SYM:
        return sym(ctx, e, f, depth);
    case SG_ADD:
        for (i = 0; i < n; i++)
            if (!sg_expr_linear(sg_expr_arg(e, i), sym, ctx, work, work_max, &g, depth + 1) ||
                !sg_lin_axpy(f, 1, &g))
                return false;
        return true;
    case SG_MUL: { /* constants times at most one form with variables */
        sg_lin acc;
        sg_lin_zero(&acc);
        acc.k = 1;
        for (i = 0; i < n; i++) {
            sg_lin prod;
            if (!sg_expr_linear(sg_expr_arg(e, i), sym, ctx, work, work_max, &g, depth + 1))
                return false;
            sg_lin_zero(&prod);
            if (g.n == 0) {
                if (!sg_lin_axpy(&prod, g.k, &acc))
                    return false;
            } else if (acc.n == 0) {
                if (!sg_lin_axpy(&prod, acc.k, &g))
                    return false;
            } else {
                return false; /* a product of variables */
            }
            acc = prod;
        }
        *f = acc;
        return true;
    }
    default:
        return false;
    }
}
