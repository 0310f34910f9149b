/*
 * check_values.c - phase 2 of the check (analysis/check.c, check_impl.h): with the
 * relations of phase 1 adopted, find a shape of the spec that fails a checked
 * constraint (S and not G satisfiable), explain it by a minimal core over (dim
 * values, spec items, constraints), refute and pin the dims whose values
 * matter, and search again until no counterexample is left (the rest is
 * proved) or Z3 cannot decide (the rest is unknown, with the reason). A small
 * component is decided by visiting its models (sg_presolve_enumerate) instead
 * of asking Z3.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/check_impl.h"
#include "util/util.h"

/* ---- Phase 2: values ---------------------------------------------------------------------------- */

/* The symbol box for the cheap pass: traced ranges, narrowed by DIM specs. */
/* Constraint k of a component, when it is no checked one: an unbacked constraint is left out, an
 * unchecked one joins the hard facts `v`; true then (the caller goes on to the next). */
static bool hard_only(checker *c, tvec *v, size_t k)
{
    const sg_constraint *cn = &c->p->cons[k];
    if (cn->unbacked)
        return true;
    if (!cn->checked) {
        sg_check__tv_push(v, sg_q_holds(c->p, k));
        return true;
    }
    return false;
}

static sg_interval *make_box(checker *c, size_t *nbox)
{
    sg_problem *p = c->p;
    size_t n = sg_pool_nsymbols(p->pool), k;
    sg_interval *box = sg__calloc(n + 1, sizeof *box);
    if (!box)
        return NULL;
    for (k = 0; k < n; k++)
        box[k].lo_inf = box[k].hi_inf = true;
    for (k = 0; k < p->nsyms; k++) {
        const sg_symbol_info *si = &p->syms[k];
        sg_interval *b = &box[sg_expr_symbol_index(si->sym)];
        long i = p->sym_input[k];
        if (!si->lo.inf) {
            b->lo = si->lo.v;
            b->lo_inf = false;
        }
        if (!si->hi.inf) {
            b->hi = si->hi.v;
            b->hi_inf = false;
        }
        if (i >= 0 && !c->fixed[i] && p->inputs[i].kind == SG_SPEC_DIM) {
            const sg_input_dim *d = &p->inputs[i];
            sg_int lo = sg_trace__dim_floor(p->trace, d->min).v;
            if (b->lo_inf || lo > b->lo) {
                b->lo = lo;
                b->lo_inf = false;
            }
            if (!d->max.inf && (b->hi_inf || d->max.v < b->hi)) {
                b->hi = d->max.v;
                b->hi_inf = false;
            }
        } else if (i >= 0 && p->inputs[i].kind != SG_SPEC_DIM) {
            /* not a plain named dim: the spec may let it go beyond the traced range; be safe */
            box[sg_expr_symbol_index(si->sym)].lo_inf = true;
            box[sg_expr_symbol_index(si->sym)].hi_inf = true;
        }
    }
    *nbox = n;
    return box;
}

/* Turn a counterexample into a GUARD violation for each flagged dim (value literal kept in the core). */
int sg_check__record_cex(checker *c, const sg_int *cex, const bool *flag, const tvec *lits, const int *kind_of,
                         const size_t *index_of, const bool *keep)
{
    sg_problem *p = c->p;
    size_t i, j, k;
    bool later = false; /* a dim of the flagged ones' component pinned by an earlier round */
    sg_check__rec_cex(c, cex, flag, lits->n, kind_of, index_of, keep);
    for (i = 0; i < p->ninputs && !flag[i]; i++)
        ;
    if (i < p->ninputs && p->input_comp[i] >= 0)
        FOR_MEMBERS(c->inputs, p->input_comp[i], j, k)
            later |= c->fixed_kind[k] == FIX_PIN;
    for (i = 0; i < p->ninputs; i++) {
        sg_violation *v;
        const sg_constraint *first = NULL;
        char *g, range[160], lo[SG_INT_STRLEN], hi[SG_INT_STRLEN];
        const sg_input_dim *d = &p->inputs[i];
        if (!flag[i])
            continue;
        v = sg_check__new_violation(c, i, SG_VIOL_GUARD);
        if (!v)
            return sg_error_set(c->err, SG_ENOMEM, "out of memory");
        v->has_counterexample = true;
        v->later_round = later;
        v->counterexample = sg__malloc((p->ninputs + 1) * sizeof *v->counterexample);
        if (!v->counterexample)
            return sg_error_set(c->err, SG_ENOMEM, "out of memory");
        memcpy(v->counterexample, cex, p->ninputs * sizeof *cex);
        for (k = 0; k < lits->n; k++) {
            if (!keep[k])
                continue;
            if (kind_of[k] == 1) { /* spec item */
                char *t = sg_check__spec_text(p->trace, &p->inputs[index_of[k]]);
                if (!sg_check__add_core(c, v, SG_CORE_SPEC, index_of[k], t, NULL))
                    return sg_error_set(c->err, SG_ENOMEM, "out of memory");
            } else if (kind_of[k] == 2) { /* constraint */
                if (!first || (first->kind != SG_CORE_GUARD && p->cons[index_of[k]].kind == SG_CORE_GUARD))
                    first = &p->cons[index_of[k]]; /* a guard if there is one */
                if (!sg_check__add_constraint_core(c, v, &p->cons[index_of[k]]))
                    return sg_error_set(c->err, SG_ENOMEM, "out of memory");
            }
        }
        /* the spec claim of this dim belongs to the conflict even if its value literal stood in for it */
        {
            bool have = false;
            for (k = 0; k < v->ncore; k++)
                have |= v->core[k].kind == SG_CORE_SPEC && v->core[k].index == i;
            if (!have && !sg_check__add_core(c, v, SG_CORE_SPEC, i, sg_check__spec_text(p->trace, d), NULL))
                return sg_error_set(c->err, SG_ENOMEM, "out of memory");
        }
        range[0] = '\0';
        if (d->kind == SG_SPEC_DIM) {
            bool has_lo = !d->min.inf && d->min.v > 2, has_hi = !d->max.inf;
            if (has_lo && has_hi)
                snprintf(range, sizeof range, " %s <= %s <= %s", sg_int_format(lo, d->min.v), d->name, sg_int_format(hi, d->max.v));
            else if (has_hi)
                snprintf(range, sizeof range, " %s <= %s", d->name, sg_int_format(hi, d->max.v));
            else if (has_lo)
                snprintf(range, sizeof range, " %s <= %s", sg_int_format(lo, d->min.v), d->name);
        }
        g = first ? sg_check__guard_text(c, first) : NULL;
        v->message = sg__malloc(2048);
        if (!v->message) {
            sg_free(g);
            return sg_error_set(c->err, SG_ENOMEM, "out of memory");
        }
        /* torch ends a guard line with a period, the traced-range line without one */
        snprintf(v->message, 2048, "Not all values of %s = %s in the specified range%s satisfy the generated guard %s%s",
                 v->dim, d->source, range, g ? g : "(the traced shapes)",
                 first && first->kind == SG_CORE_RANGE ? "" : ".");
        sg_free(g);
        c->decided[i] = true;
        c->r->dims[i].status = SG_DIM_REFUTED;
    }
    return 0;
}

/* Whether pinning plain dim i (a DIM) settles its spec root, into (*x, *value): every dim the
 * spec names plainly by that root is then pinned, at the same example size (torch checks that
 * inputs sharing a Dim agree), inside the root's range. */
static bool settles_root(const checker *c, size_t i, size_t *x, sg_int *value)
{
    const sg_problem *p = c->p;
    const sg_input_dim *d = &p->inputs[i];
    long xi;
    size_t k;
    if (d->kind != SG_SPEC_DIM || (xi = sg_problem_x_index(p, d->name)) < 0)
        return false;
    if (d->size < sg_trace__dim_floor(p->trace, d->min).v || (!d->max.inf && d->size > d->max.v))
        return false;
    if (p->x_nplain[xi] > 1) /* a Dim several inputs share: are the others pinned? */
        for (k = 0; k < p->ninputs; k++)
            if (k != i && p->inputs[k].kind == SG_SPEC_DIM && c->fixed_kind[k] != FIX_PIN &&
                strcmp(p->inputs[k].name, d->name) == 0)
                return false;
    *x = (size_t)xi;
    *value = d->size;
    return true;
}

int sg_check__minimize(checker *c, const tvec *hard, const tvec *lits, const int *kind_of, const int *order, bool *keep)
{
    size_t k;
    bool val = false;
    int rc;
    if (!c->opts->minimize_cores)
        return 0;
    if (!c->lean)
        return sg_check__minimize_core(c, hard->a, hard->n, lits->a, lits->n, order, keep);
    /* only what decides which dims are refuted: the dim values (pass 0), and the spec items
     * (pass 1) when no value is left; the same keep[] of those as the full minimisation, whose
     * later passes never touch them */
    rc = sg_check__minimize_passes(c, hard->a, hard->n, lits->a, lits->n, order, keep, 0, 0);
    for (k = 0; k < lits->n; k++)
        val |= keep[k] && kind_of[k] == 0;
    if (!rc && !val)
        rc = sg_check__minimize_passes(c, hard->a, hard->n, lits->a, lits->n, order, keep, 1, 1);
    return rc;
}

void sg_check__dim_lits(checker *c, size_t i, const sg_int *cex, tvec *hard, tvec *lits, int *kind_of,
                        size_t *index_of)
{
    sg_problem *p = c->p;
    const sg_term *item = sg_check__spec_item(c, i), *vl;
    char name[48];
    if (!item)
        return;
    if (c->fixed[i]) {
        sg_check__tv_push(hard, item);
        return;
    }
    sg_check__tv_push(hard, sg_q_implies(p, sg_q_spec_lit(p, i), item));
    kind_of[lits->n] = 1;
    index_of[lits->n] = i;
    sg_check__tv_push(lits, sg_q_spec_lit(p, i));
    if (!p->named[i] || c->decided[i])
        return;
    snprintf(name, sizeof name, "val!%zu", i);
    vl = sg_q_literal(p, name);
    sg_check__tv_push(hard, sg_q_implies(p, vl, sg_q_eq(p, sg_q_dim(p, i), sg_q_num(p, cex[i]))));
    kind_of[lits->n] = 0;
    index_of[lits->n] = i;
    sg_check__tv_push(lits, vl);
}

/* Pin dim i to its example size for the rest of the search (and in the box). When that settles
 * its spec root (settles_root), the root is pinned too, so that the derived dims of the root
 * (`d0 + 1` beside `d0`) follow it as the spec says instead of keeping a root of their own:
 * torch charges the root, not each of them. */
void sg_check__pin(checker *c, size_t i)
{
    sg_problem *p = c->p;
    const sg_term *eq = sg_q_eq(p, sg_q_dim(p, i), sg_q_num(p, p->inputs[i].size));
    size_t j, k, x, pinned_x = SIZE_MAX;
    sg_int root;
    if (eq && settles_root(c, i, &x, &root)) {
        eq = sg_q_and2(p, eq, sg_q_eq(p, sg_q_xvar(p, x), sg_q_num(p, root)));
        pinned_x = x;
    }
    if (!eq)
        return;
    sg_check__rec_dim(c, i, true);
    c->fixed[i] = eq;
    c->fixed_kind[i] = FIX_PIN;
    c->pin_root[i] = pinned_x;
    FOR_MEMBERS(c->syms, p->input_comp[i], j, k)
        if (p->sym_input[k] == (long)i) {
            sg_interval *b = &c->box[sg_expr_symbol_index(p->syms[k].sym)];
            b->lo = b->hi = p->inputs[i].size;
            b->lo_inf = b->hi_inf = false;
        }
}

/* The hard facts of component `comp` in this round (what values_in asserts as hard), into the presolve. */
static void presolve_round(checker *c, long comp)
{
    sg_problem *p = c->p;
    size_t j, k;
    sg_presolve_begin(c->ps);
    FOR_MEMBERS(c->syms, comp, j, k)
        if (sg_q_def(p, k))
            sg_presolve_def(c->ps, k);
    FOR_MEMBERS(c->inputs, comp, j, k) {
        if (c->fixed_kind[k] == FIX_PIN) {
            sg_presolve_pin(c->ps, k, p->inputs[k].size);
            if (c->pin_root[k] != SIZE_MAX) /* as the pin's term (sg_check__pin) */
                sg_presolve_pin_root(c->ps, c->pin_root[k], p->inputs[k].size);
        } else if (c->fixed_kind[k] == FIX_RELATION)
            sg_presolve_relation(c->ps, k, c->rel_root[k]);
        else if (c->fixed_kind[k] == FIX_NONE && sg_q_spec(p, k))
            sg_presolve_spec(c->ps, k);
    }
    FOR_MEMBERS(c->cons, comp, j, k)
        if (!p->cons[k].unbacked && !p->cons[k].checked)
            sg_presolve_constraint(c->ps, k);
}

/* ---- The explanation's questions without Z3 ------------------------------------------------------------ */

/*
 * On any context, a question of the minimisation (no model, no core read from it) whose facts the
 * presolve reads exactly (sg_presolve_exact: definitions, pins, adopted relations, assumed
 * constraints and the kept literals, all unit affine equalities and bounds) is satisfiable without
 * asking Z3: its models are the product of the class domains, none empty. Z3 would answer sat
 * too, so the member is kept as before; the answer is exact, so the core is the same (chain500's
 * minimisation asked Z3 twice over the 500-dim chain, 80 ms). Other questions go to Z3.
 *
 * On every context (c->enumerate: the presolve on) a component whose hard facts the presolve reads
 * exactly, over at most 4,096 points (sg_presolve_enumerate), is decided by visiting its models
 * instead of asking Z3: the counterexample is its first model that fails a checked constraint (the
 * nearest to the example sizes first), and the questions of its explanation (is this set of literals
 * still unsatisfiable?) by whether a model meets them. Every answer is exact and depends on the trace
 * only, so cold and warm contexts give the same report; a question enumeration cannot answer goes to
 * Z3 as before (check.md "Small components by their models"). `nodes` is NULL when the component
 * is not enumerated: then only the first kind of answer is given.
 */
#ifndef EXACT_MIN_LITS
#define EXACT_MIN_LITS 256 /* literals of an explanation whose questions the exact path answers (-D for test builds) */
#endif

static _Thread_local size_t exact_min_lits = EXACT_MIN_LITS;


void sg_check__set_exact_min_lits(size_t n) { exact_min_lits = n ? n : EXACT_MIN_LITS; }

typedef struct lit_oracle {
    long comp;
    const sg_term *const *lits; /* the explanation's literals, kind_of / index_of as values_in's */
    const int *kind_of;
    const size_t *index_of;
    size_t n;
    const sg_int *cex;          /* [ninputs] the counterexample the value literals pin */
    const size_t *nodes;        /* the component's presolve nodes: input dims, then symbols */
    size_t nn;
    bool core;                  /* the core question was answered here (every literal) */
} lit_oracle;

/* The presolve nodes of component comp (input dims, then symbols), new array; NULL: out of memory. */
static size_t *comp_nodes(checker *c, long comp, size_t *nn)
{
    size_t n = (c->inputs.start[comp + 1] - c->inputs.start[comp]) + (c->syms.start[comp + 1] - c->syms.start[comp]);
    size_t *v = sg__malloc((n + 1) * sizeof *v), j, k;
    *nn = 0;
    if (!v)
        return NULL;
    FOR_MEMBERS(c->inputs, comp, j, k)
        v[(*nn)++] = k;
    FOR_MEMBERS(c->syms, comp, j, k)
        v[(*nn)++] = c->p->ninputs + k;
    return v;
}

/* The hard facts of the oracle's question into the presolve: the component's definitions, pins
 * (with the spec roots they settled) and adopted relations, the assumed constraints, and the kept
 * literals kept[] (spec items, value pins; the checked constraints too when `checked`). */
static void oracle_facts(checker *c, const lit_oracle *o, const bool *kept, bool checked)
{
    sg_problem *p = c->p;
    size_t j, k;
    sg_presolve_begin(c->ps);
    FOR_MEMBERS(c->syms, o->comp, j, k)
        if (sg_q_def(p, k))
            sg_presolve_def(c->ps, k);
    FOR_MEMBERS(c->inputs, o->comp, j, k) {
        if (c->fixed_kind[k] == FIX_PIN) {
            sg_presolve_pin(c->ps, k, p->inputs[k].size);
            if (c->pin_root[k] != SIZE_MAX)
                sg_presolve_pin_root(c->ps, c->pin_root[k], p->inputs[k].size);
        } else if (c->fixed_kind[k] == FIX_RELATION)
            sg_presolve_relation(c->ps, k, c->rel_root[k]);
    }
    for (j = 0; j < o->n; j++) {
        if (!kept[j])
            continue;
        if (o->kind_of[j] == 1)
            sg_presolve_spec(c->ps, o->index_of[j]);
        else if (o->kind_of[j] == 0)
            sg_presolve_pin(c->ps, o->index_of[j], o->cex[o->index_of[j]]);
        else if (checked)
            sg_presolve_constraint(c->ps, o->index_of[j]);
    }
    FOR_MEMBERS(c->cons, o->comp, j, k)
        if (!p->cons[k].unbacked && !p->cons[k].checked)
            sg_presolve_constraint(c->ps, k);
}

/* The question by its models (sg_presolve_enumerate, small components): 1 sat,
 * 0 unsat, -1 cannot tell. req[0..nreq-1]: the kept checked constraints. */
static int oracle_enumerate(checker *c, const lit_oracle *o, const bool *kept, const size_t *req, size_t nreq)
{
    sg_problem *p = c->p;
    sg_int *dv = sg__malloc((p->ninputs + 1) * sizeof *dv);
    size_t k;
    int e;
    if (!dv)
        return -1;
    oracle_facts(c, o, kept, false);
    for (k = 0; k < p->ninputs; k++)
        dv[k] = p->inputs[k].size;
    e = sg_presolve_enumerate(c->ps, o->nodes, o->nn, req, nreq, false, dv);
    sg_free(dv);
    return e;
}

bool sg_check__oracle_ask(checker *c, const sg_term *const *assume, size_t nassume, bool core, sg_q_result *r)
{
    lit_oracle *o = c->orc;
    bool *kept = NULL;
    size_t *req = NULL, nreq = 0, a, j;
    int e = -1;

    if (core && !o->nodes)
        return false; /* Z3's own core: only an enumerated component takes the oracle's (check.md) */
    if (!(kept = sg__calloc(o->n + 1, sizeof *kept)) || !(req = sg__malloc((o->n + 1) * sizeof *req)))
        goto done;
    for (a = 0, j = 0; a < nassume; a++) {
        /* assume[] is mostly a subsequence of lits[] (the minimisation's questions): look on from
         * the last match, then from the start */
        size_t from = j;
        while (j < o->n && o->lits[j] != assume[a])
            j++;
        for (j = j < o->n ? j : 0; j < from && o->lits[j] != assume[a]; j++)
            ;
        if (j >= o->n || o->lits[j] != assume[a])
            goto done; /* not one of the explanation's literals */
        kept[j] = true;
        if (o->kind_of[j] == 2)
            req[nreq++] = o->index_of[j];
    }
    /* every fact read exactly: the question is satisfiable, as Z3 would answer (a satisfiable
     * question keeps its member in the minimisation; no model or core is read from it) */
    if (o->n >= exact_min_lits) {
        oracle_facts(c, o, kept, true);
        if (sg_presolve_exact(c->ps))
            e = 1;
    }
    if (e < 0 && o->nodes)
        e = oracle_enumerate(c, o, kept, req, nreq);
    if (e >= 0) {
        memset(r, 0, sizeof *r);
        r->answer = e ? SG_Q_SAT : SG_Q_UNSAT;
        if (core && e == 0) { /* every assumption: a core; the minimisation shrinks it */
            if (!(r->core = sg__malloc((nassume + 1) * sizeof *r->core))) {
                r->answer = SG_Q_UNKNOWN;
                e = -1;
            } else {
                for (a = 0; a < nassume; a++)
                    r->core[a] = a;
                r->ncore = nassume;
                o->core = true;
            }
        }
    }
done:
    sg_free(kept);
    sg_free(req);
    return e >= 0;
}

/* Whether every symbol of `e` (NULL: none) has a value in known[] (by symbol index); with `reads`,
 * also marks the input dims whose sizes they are. *rc: SG_ENOMEM. */
static bool reads_of(const sg_problem *p, const sg_expr *e, const bool *known, size_t nb, bool *reads, int *rc)
{
    const sg_expr **syms = NULL;
    size_t n = 0, t;
    bool all = true;
    if (!e)
        return true;
    if ((*rc = sg_expr_symbols(&syms, &n, p->pool, e, NULL)) != 0)
        return false;
    for (t = 0; t < n; t++) {
        const sg_symbol_info *si = sg_trace_symbol_info(p->trace, syms[t]);
        size_t x = sg_expr_symbol_index(syms[t]);
        all &= x < nb && known[x];
        if (reads && si && p->sym_input[si - p->syms] >= 0)
            reads[p->sym_input[si - p->syms]] = true;
    }
    sg_free((void *)syms);
    return all;
}

/*
 * The explanation when the solver gave none (its core question unknown: Z3's incompleteness or a
 * budget): the checked constraints the counterexample fails, or that cannot be evaluated there,
 * with the value literals and spec items of the dims they read. Not minimal, but a conflicting
 * set all the same (a member fails at the counterexample's values), where the spec items alone
 * were listed before, which the counterexample satisfies. Returns 0 or SG_ENOMEM.
 */
static int explain_by_values(checker *c, const sg_int *cex, const tvec *lits, const int *kind_of,
                             const size_t *index_of, bool *keep)
{
    sg_problem *p = c->p;
    size_t nb = sg_pool_nsymbols(p->pool), j, k;
    sg_int *ev = NULL;
    bool *known = NULL, *reads = NULL;
    int rc = 0;

    if (!SG_CALLOC_ALL(SG_SLOT(ev, nb + 1), SG_SLOT(known, nb + 1), SG_SLOT(reads, p->ninputs + 1)))
        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    for (k = 0; k < p->nsyms; k++) {
        size_t x = sg_expr_symbol_index(p->syms[k].sym);
        if (p->sym_input[k] >= 0 && x < nb) {
            ev[x] = cex[p->sym_input[k]];
            known[x] = true;
        }
    }
    for (j = 0; j < lits->n && !rc; j++) {
        const sg_constraint *cn;
        const sg_expr *e1, *e2;
        if (kind_of[j] != 2)
            continue;
        cn = &p->cons[index_of[j]];
        /* what it reads: a symbol (and its replacement), a traced shape's value, a guard */
        e1 = cn->kind == SG_CORE_RANGE || cn->kind == SG_CORE_REPLACEMENT ? p->syms[cn->index].sym
             : cn->kind == SG_CORE_INPUT                                  ? p->inputs[cn->index].value
                                                                          : cn->expr;
        e2 = cn->kind == SG_CORE_REPLACEMENT ? p->syms[cn->index].replacement : NULL;
        if (reads_of(p, e1, known, nb, NULL, &rc) && reads_of(p, e2, known, nb, NULL, &rc) &&
            sg_check__holds_at(p, cn, ev, nb, cn->kind == SG_CORE_INPUT ? cex[cn->index] : 0) == 1)
            continue; /* it holds at the counterexample */
        if (rc)
            break;
        keep[j] = true;
        reads_of(p, e1, known, nb, reads, &rc);
        reads_of(p, e2, known, nb, reads, &rc);
        if (cn->kind == SG_CORE_INPUT)
            reads[cn->index] = true;
    }
    for (j = 0; j < lits->n && !rc; j++)
        if (kind_of[j] != 2 && reads[index_of[j]])
            keep[j] = true;
    SG_FREE_ALL(ev, known, reads);
    return rc ? sg_error_set(c->err, SG_ENOMEM, "out of memory") : 0;
}

/*
 * Phase 2 on one component: look for a shape of S' that fails a checked
 * constraint, explain it, charge the dims whose values matter, pin them and
 * look again; the open dims left when no shape fails are proved.
 */
static int values_in(checker *c, long comp)
{
    sg_problem *p = c->p;
    size_t i, j, k, ndims = c->inputs.start[comp + 1] - c->inputs.start[comp];
    int rc = 0, round;

    /* a large non-linear component: what one-dim shapes refute, before Z3 (check_probe.c) */
    if ((rc = sg_check__probe_component(c, comp)) != 0)
        return rc;

    for (round = 0; round <= (int)ndims && !rc && !sg_check__stop(c); round++) {
        tvec hard = TVEC_INIT, checked = TVEC_INIT, hard2 = TVEC_INIT, lits = TVEC_INIT;
        int *kind_of = NULL;
        size_t *index_of = NULL, nlits, nproved = 0;
        bool *keep = NULL, *flag = NULL, any_open = false, any, by_values;
        sg_int *cex = NULL, *ecex = NULL; /* ecex: the counterexample enumeration found, or NULL */
        size_t *ck = NULL, nck = 0, *nodes = NULL, nn = 0; /* the checked constraints asked about */
        sg_q_result r, r2; /* the counterexample's question, its explanation's */
        sg_q_answer res;
        lit_oracle orc;

        memset(&r, 0, sizeof r);
        memset(&r2, 0, sizeof r2);

        FOR_MEMBERS(c->inputs, comp, j, i)
            any_open |= p->named[i] && !c->decided[i];
        if (!any_open)
            break;
        /* S' and the assumed constraints are hard; the checked ones are the question, each
         * dropped when the presolve proves it from the hard facts (H |= g_1 & ... & g_n iff
         * H |= g_i for each i) */
        presolve_round(c, comp);
        sg_check__push_defs(c, &hard, comp);
        FOR_MEMBERS(c->inputs, comp, j, i)
            sg_check__tv_push(&hard, sg_check__spec_item(c, i));
        if (c->enumerate && !(ck = sg__malloc((c->cons.start[comp + 1] - c->cons.start[comp] + 1) * sizeof *ck))) {
            rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
            goto next;
        }
        FOR_MEMBERS(c->cons, comp, j, k) {
            const sg_constraint *cn = &p->cons[k];
            bool proved;
            if (hard_only(c, &hard, k))
                continue;
            if (cn->kind == SG_CORE_GUARD && sg_interval_holds(p->pool, cn->expr, c->box, c->nbox) == SG_TRI_TRUE) {
                c->r->stats.decided_cheaply++;
                continue;
            }
            proved = sg_presolve_decide(c->ps, k) == SG_TRI_TRUE;
            nproved += proved;
            sg_check__tv_push(&checked, sg_q_holds(p, k));
            if (ck && !proved) /* enumeration looks for a failing point among the others only */
                ck[nck++] = k;
        }
        /* every question proved from the hard facts: no counterexample exists, Z3 is not asked;
         * otherwise Z3 gets the same question as without the presolve (so the same counterexample) */
        if (!checked.failed && nproved == checked.n) {
            c->r->stats.decided_cheaply += nproved;
            sg_check__tv_free(&checked);
        }
        if (hard.failed || checked.failed) {
            rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
            goto next;
        }
        if (ck && checked.n && (nodes = comp_nodes(c, comp, &nn)) != NULL &&
            (ecex = sg__malloc((p->ninputs + 1) * sizeof *ecex)) != NULL) {
            int e;
            for (i = 0; i < p->ninputs; i++)
                ecex[i] = p->inputs[i].size;
            /* a small component: its first model failing a checked constraint */
            if ((e = sg_presolve_enumerate(c->ps, nodes, nn, ck, nck, true, ecex)) == 0)
                checked.n = 0; /* none: every open dim is proved, as Z3's unsat would say */
            else if (e < 0) {
                /* a larger one: a failing model near the example, else Z3's */
                for (i = 0; i < p->ninputs; i++)
                    ecex[i] = p->inputs[i].size;
                if (sg_presolve_violate(c->ps, nodes, nn, ck, nck, ecex) < 0) {
                    sg_free(ecex);
                    ecex = NULL;
                }
            }
        }
        if (checked.n == 0) {
            res = SG_Q_UNSAT;
        } else if (ecex) {
            res = SG_Q_SAT;
        } else {
            sg_check__tv_push(&hard, sg_q_not(p, sg_q_and(p, checked.a, checked.n)));
            rc = sg_check__ask(c, hard.a, hard.n, NULL, 0, true, false, &r);
            if (rc)
                goto next;
            res = r.answer;
        }
        if (res == SG_Q_UNSAT) { /* no counterexample: every open dim is proved */
            FOR_MEMBERS(c->inputs, comp, j, i)
                if (p->named[i] && !c->decided[i]) {
                    c->r->dims[i].status = SG_DIM_PROVED;
                    sg_check__rec_dim(c, i, false);
                }
            round = (int)ndims + 1;
            goto next;
        }
        if (res == SG_Q_UNKNOWN) {
            FOR_MEMBERS(c->inputs, comp, j, i)
                if (p->named[i] && !c->decided[i]) {
                    sg_check__set_unknown_in(c, i, comp, r.reason[0] ? r.reason : "unknown");
                    c->decided[i] = true;
                }
            round = (int)ndims + 1;
            goto next;
        }
        /* a counterexample: sizes of the component's dims; the others keep their example sizes */
        nlits = (c->cons.start[comp + 1] - c->cons.start[comp]) + 2 * ndims + 1;
        if (!SG_CALLOC_ALL(SG_SLOT(cex, p->ninputs + 1), SG_SLOT(flag, p->ninputs + 1), SG_SLOT(kind_of, nlits),
                           SG_SLOT(index_of, nlits), SG_SLOT(keep, nlits))) {
            rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
            goto next;
        }
        for (i = 0; i < p->ninputs; i++)
            cex[i] = p->inputs[i].size;
        FOR_MEMBERS(c->inputs, comp, j, i)
            if (ecex)
                cex[i] = ecex[i];
            else if (!sg_q_model_int(p, r.model, sg_q_dim(p, i), &cex[i]))
                cex[i] = p->inputs[i].size;
        /* explain it: value literals of open named dims, spec items, checked constraints */
        sg_check__push_defs(c, &hard2, comp);
        FOR_MEMBERS(c->cons, comp, j, k) {
            if (hard_only(c, &hard2, k))
                continue;
            sg_check__tv_push(&hard2, sg_q_implies(p, sg_q_lit(p, k), sg_q_holds(p, k)));
            kind_of[lits.n] = 2;
            index_of[lits.n] = k;
            sg_check__tv_push(&lits, sg_q_lit(p, k));
        }
        /* derived dims' values before the others', so that the minimisation (which drops them in
         * this order) keeps the root's where either explains the counterexample: torch charges
         * the root, and pinning a derived dim would part it from its root */
        FOR_MEMBERS(c->inputs, comp, j, i)
            if (p->inputs[i].kind == SG_SPEC_DERIVED)
                sg_check__dim_lits(c, i, cex, &hard2, &lits, kind_of, index_of);
        FOR_MEMBERS(c->inputs, comp, j, i)
            if (p->inputs[i].kind != SG_SPEC_DERIVED)
                sg_check__dim_lits(c, i, cex, &hard2, &lits, kind_of, index_of);
        if (hard2.failed || lits.failed) {
            rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
            goto next;
        }
        /* a re-check's first violation (recheck.c: torch's own lines) is read for its verdict and
         * one line naming a guard the counterexample fails: explained by its values, no core asked
         * or minimised (only what the output needs) */
        by_values = c->first;
        if (!by_values) {
            /* its explanation without Z3 where the presolve can: the minimisation's satisfiable
             * questions, and on an enumerated component every question by its models (lit_oracle;
             * the core without minimising: every literal) */
            if (nodes || sg_presolve_enabled()) {
                orc.comp = comp;
                orc.lits = lits.a;
                orc.kind_of = kind_of;
                orc.index_of = index_of;
                orc.n = lits.n;
                orc.cex = cex;
                orc.nodes = nodes;
                orc.nn = nn;
                orc.core = false;
                c->orc = &orc;
            }
            rc = sg_check__ask(c, hard2.a, hard2.n, lits.a, lits.n, false, true, &r2);
            if (rc)
                goto next;
            /* no core (unknown), or one of every literal from a solver that tracks none: explained
             * by its values, not minimised question by question */
            by_values = r2.answer != SG_Q_UNSAT || r2.core_all;
        }
        if (by_values) {
            rc = explain_by_values(c, cex, &lits, kind_of, index_of, keep);
        } else {
            int *order = sg__calloc(lits.n + 1, sizeof *order);
            if (!order) {
                rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
                goto next;
            }
            for (k = 0; k < r2.ncore; k++)
                keep[r2.core[k]] = true;
            for (k = 0; k < lits.n; k++) /* drop dim values first, then spec items, then constraints */
                order[k] = kind_of[k];
            /* a core of every literal (lit_oracle): the traced ranges, shapes and replacements are
             * dropped before the guards, so that what is left names a guard where one conflicts,
             * as Z3's cores tend to */
            if (c->orc && c->orc->core)
                for (k = 0; k < lits.n; k++)
                    if (kind_of[k] == 2 && p->cons[index_of[k]].kind == SG_CORE_GUARD)
                        order[k] = 3;
            c->guided = c->orc && c->orc->core;
            rc = sg_check__minimize(c, &hard2, &lits, kind_of, order, keep);
            c->guided = false;
            sg_free(order);
        }
        if (rc)
            goto next;
        for (k = 0; k < lits.n; k++)
            if (keep[k] && kind_of[k] == 0)
                flag[index_of[k]] = true;
        any = false;
        for (k = 0; k < lits.n; k++)
            any |= keep[k] && kind_of[k] == 0;
        if (!any) /* the spec items alone conflict: charge the open named dims among them, else all */
            for (k = 0; k < lits.n; k++)
                if (keep[k] && kind_of[k] == 1 && p->named[index_of[k]] && !c->decided[index_of[k]])
                    any = flag[index_of[k]] = true;
        if (!any)
            FOR_MEMBERS(c->inputs, comp, j, i)
                flag[i] = p->named[i] && !c->decided[i];
        rc = sg_check__record_cex(c, cex, flag, &lits, kind_of, index_of, keep);
        FOR_MEMBERS(c->inputs, comp, j, i) /* pin the refuted dims to their example sizes, look again */
            if (flag[i] && !rc)
                sg_check__pin(c, i);
    next:
        c->orc = NULL;
        sg_free(ck);
        sg_free(nodes);
        sg_free(ecex);
        sg_q_result_dispose(p, &r);
        sg_q_result_dispose(p, &r2);
        sg_check__tv_free(&hard);
        sg_check__tv_free(&checked);
        sg_check__tv_free(&hard2);
        sg_check__tv_free(&lits);
        sg_free(kind_of);
        sg_free(index_of);
        sg_free(keep);
        sg_free(flag);
        sg_free(cex);
    }
    return rc;
}

int sg_check__phase_values(checker *c)
{
    sg_problem *p = c->p;
    size_t i;
    int rc = 0;
    c->box = make_box(c, &c->nbox);
    if (!c->box)
        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    c->classes = sg_check__classes_on() ? sg_check__classes_new(c) : NULL; /* (NULL: each decided itself) */
    for (i = 0; i < p->ninputs && !rc && !sg_check__stop(c); i++) { /* each component once, at its first dim */
        long comp = p->input_comp[i];
        if (c->inputs.idx[c->inputs.start[comp]] != i)
            continue;
        if (c->budget.deadline > 0 && sg_problem_now() >= c->budget.deadline) {
            /* the time budget is spent: every query would answer "time budget" unasked, but
             * building them costs (encoding, presolve, cores); the component's open dims are
             * unknown for that reason at once */
            size_t k;
            for (k = c->inputs.start[comp]; k < c->inputs.start[comp + 1]; k++) {
                size_t d = c->inputs.idx[k];
                if (c->r->dims[d].status == SG_DIM_PROVED && !c->decided[d])
                    sg_check__set_unknown_in(c, d, comp, "time budget");
            }
            continue;
        }
        if ((rc = sg_check__classes_begin(c, comp)) != 0) { /* 1: replayed from its class's first */
            rc = rc == 1 ? 0 : rc;
            continue;
        }
        rc = values_in(c, comp);
        sg_check__classes_end(c, comp, rc);
    }
    sg_check__classes_free(c->classes);
    c->classes = NULL;
    return rc;
}
