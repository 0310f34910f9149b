/*
 * lin.c - small linear forms with checked arithmetic (lin.h).
 */
#include "util/lin.h"

bool sg_lin_add_term(sg_lin *f, size_t v, sg_int c)
{
    int j;
    if (c == 0)
        return true;
    for (j = 0; j < f->n; j++)
        if (f->v[j] == v) {
            if (!sg__add(f->c[j], c, &f->c[j]))
                return false;
            if (f->c[j] == 0) { /* the last term takes its place */
                f->v[j] = f->v[f->n - 1];
                f->c[j] = f->c[f->n - 1];
                f->n--;
            }
            return true;
        }
    if (f->n == SG_LIN_MAX)
        return false;
    f->v[f->n] = v;
    f->c[f->n++] = c;
    return true;
}

bool sg_lin_axpy(sg_lin *f, sg_int s, const sg_lin *g)
{
    int j;
    sg_int t;
    for (j = 0; j < g->n; j++)
        if (!sg__mul(s, g->c[j], &t) || !sg_lin_add_term(f, g->v[j], t))
            return false;
    return sg__mul(s, g->k, &t) && sg__add(f->k, t, &f->k);
}
