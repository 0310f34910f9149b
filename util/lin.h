/*
 * lin.h - a small linear form over integer variables, Σ c[j] * v[j] + k,
 * with checked arithmetic: the presolve's forms over class roots and the
 * fixes' forms over spec groups (analysis/fix_box.c). Variables are indices
 * the caller chooses; a form holds at most SG_LIN_MAX terms (a longer one is
 * left to the caller's slower path). Library-internal, no state.
 */
#ifndef SG_UTIL_LIN_H
#define SG_UTIL_LIN_H

#include <stdbool.h>
#include <stddef.h>

#include "util/int.h"

#define SG_LIN_MAX 8

typedef struct sg_lin {
    int n;                /* terms in use; their coefficients are never 0 (v[], c[] past n are never read) */
    size_t v[SG_LIN_MAX]; /* the variables, each at most once */
    sg_int c[SG_LIN_MAX];
    sg_int k; /* the constant */
} sg_lin;

/* f = 0 (no term, constant 0): what a memset of the whole form did, without writing the unused
 * slots (the linearisations of the presolve's proof forest did that once per expression node). */
static inline void sg_lin_zero(sg_lin *f)
{
    f->n = 0;
    f->k = 0;
}

/* f += c * var `v`: false on overflow or when a new term does not fit (f is then partly changed). */
bool sg_lin_add_term(sg_lin *f, size_t v, sg_int c);

/* f += s * g: false on overflow or too many terms (f is then partly changed). */
bool sg_lin_axpy(sg_lin *f, sg_int s, const sg_lin *g);

#endif
