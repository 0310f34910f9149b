/*
 * check_classes.c - isomorphic components of phase 2 decided once (analysis/check_impl.h,
 * sg_check__classes_*; docs/check.md "Isomorphic components").
 *
 * Does: before phase 2 decides a component (check_values.c values_in), write its canonical
 * signature: every fact the decision reads - each dim's spec item, example size, traced value and
 * phase-1 state; each symbol's traced range, replacement and box; each constraint's kind, flags
 * and expression - with dims, symbols and constraints named by their position in the component
 * (alpha-renamed) and expressions written node by node. The first component of a signature is
 * decided as before while its effects are recorded by position (its refutations with their
 * counterexample values and kept literals, its pins, its proofs); each later one of the same
 * signature is not decided again: the record is replayed onto it through the same functions
 * (sg_check__record_cex, sg_check__pin), which write its own names, texts and counterexample. A
 * list of 1,000 tensors with their own Dims and the same guards is one decision and 999 replays.
 *
 * Why that is the same report. Phase 2's decision of a component reads only the component's own
 * facts (components share no variable) and the check's options, so with the facts equal up to the
 * renaming the same computation runs on both, position for position - when it is deterministic
 * and reads nothing shared. A component is recorded only when its decision asked Z3 nothing (Z3's
 * models and cores depend on what its solver saw before) and ended without an unknown, a budget's
 * stop or an error; and it gets a signature only when every Dim name of its dims is theirs alone (a
 * pin settles the name's root), none is derived, none was decided or fixed by phase 1 and every
 * symbol is the size of one of its dims.
 *
 * Does not: decide anything (check_values.c does), or touch phase 1, inference or fixes.
 */
#include <stdio.h>
#include <string.h>

#include "analysis/check_impl.h"
#include "util/strmap.h"
#include "util/util.h"

#define SHAPE_NODES (1u << 20)  /* expression nodes one signature writes (a DAG as a tree) */
#define SIG_MAX ((size_t)1 << 24) /* bytes of one signature */

enum { EV_CEX, EV_PIN, EV_PROVED };

static _Thread_local size_t replays; /* components replayed on this thread (sg_check__classes_replays) */
static _Thread_local bool classes_off; /* sg_check__set_classes(false) on this thread */

void sg_check__set_classes(bool on) { classes_off = !on; }
bool sg_check__classes_on(void) { return !classes_off; }

void sg_check__classes_count(void) { replays++; }

size_t sg_check__classes_replays(void)
{
    size_t n = replays;
    replays = 0;
    return n;
}

/* One effect of the recorded decision, by position in the component. */
typedef struct rec_event {
    int type;
    size_t at;            /* PIN, PROVED: the dim's position; CEX: its values at vals[at ..], flags[at ..] */
    size_t item0, nitems; /* CEX: its kept literals items[item0 ..] */
} rec_event;

/* A kept literal of a refutation: a spec item (kind 1: a dim's position) or a constraint (kind 2:
 * a constraint's position), in the order of the explanation's literals. */
typedef struct rec_item {
    int kind;
    size_t at;
} rec_item;

/* The decision of a class's first component. */
typedef struct comp_rec {
    char *sig;            /* the key (owned) */
    bool ok;              /* recorded in full: replayable */
    rec_event *ev;
    size_t nev, evcap;
    sg_int *vals;         /* the counterexamples' values, one per dim of the component per CEX */
    bool *flags;          /* the dims each refutes, likewise */
    size_t nvals, valcap, flagcap;
    rec_item *items;
    size_t nitems, itemcap;
    unsigned cheap;       /* stats.decided_cheaply it added */
} comp_rec;

struct sg_check_classes {
    sg_strmap by_sig;     /* signature -> index into recs */
    comp_rec *recs;
    size_t nrecs, cap;
    size_t *dloc, *sloc, *kloc; /* [ninputs], [nsyms], [ncons]: position in the component last read */
    comp_rec *cur;        /* being recorded, or NULL */
    long cur_comp;
    unsigned cheap0, queries0;
    sg_strmap derived_roots; /* the Dim names derived dims are made from (borrowed keys) */
    bool *twin;           /* [nnodes] another component has as many dims, symbols and constraints */
};

sg_check_classes *sg_check__classes_new(const checker *c)
{
    sg_check_classes *k = sg__calloc(1, sizeof *k);
    const sg_problem *p = c->p;
    size_t i;
    if (!k)
        return NULL;
    if (!SG_CALLOC_ALL(SG_SLOT(k->dloc, p->ninputs + 1), SG_SLOT(k->sloc, p->nsyms + 1),
                       SG_SLOT(k->kloc, p->ncons + 1))) {
        sg_check__classes_free(k);
        return NULL;
    }
    k->cur_comp = -1;
    {
        /* only a component with a twin in sizes can have an isomorphic one: the others are
         * decided without a signature (prod300's one component of 1,950 constraints) */
        size_t (*key)[3] = sg__malloc((c->nnodes + 1) * sizeof *key);
        bool ok = key && (k->twin = sg__calloc(c->nnodes + 1, sizeof *k->twin)) != NULL;
        for (i = 0; ok && i < c->nnodes; i++) {
            key[i][0] = c->inputs.start[i + 1] - c->inputs.start[i];
            key[i][1] = c->syms.start[i + 1] - c->syms.start[i];
            key[i][2] = c->cons.start[i + 1] - c->cons.start[i];
        }
        ok = ok && sg__mark_twins((const size_t (*)[3])key, c->nnodes, k->twin);
        sg_free(key);
        if (!ok) {
            sg_check__classes_free(k);
            return NULL;
        }
    }
    for (i = 0; i < p->ninputs; i++)
        if (p->inputs[i].kind == SG_SPEC_DERIVED && p->inputs[i].root_name) {
            size_t *slot = sg_strmap_slot(&k->derived_roots, p->inputs[i].root_name);
            if (!slot) {
                sg_check__classes_free(k);
                return NULL;
            }
            *slot = i;
        }
    return k;
}

void sg_check__classes_free(sg_check_classes *k)
{
    size_t i;
    if (!k)
        return;
    for (i = 0; i < k->nrecs; i++)
        SG_FREE_ALL(k->recs[i].sig, k->recs[i].ev, k->recs[i].vals, k->recs[i].flags, k->recs[i].items);
    sg_strmap_dispose(&k->by_sig);
    sg_strmap_dispose(&k->derived_roots);
    SG_FREE_ALL(k->recs, k->dloc, k->sloc, k->kloc, k->twin, k);
}

/* ---- The signature ------------------------------------------------------------------------------ */

typedef struct sig_ctx {
    sg_buf *b;
    sg_comp_pos pos; /* the component being read, its symbols' positions */
    unsigned nodes;  /* left of SHAPE_NODES for the whole signature */
    bool ok;
} sig_ctx;

/* (no printf in a signature: one is written per component and check pass) */

/* tag, then each small value (a flag, a kind, a status: below 26) as one letter */
static void put_tag(sg_buf *b, char tag, const int *v, size_t n)
{
    char t[16];
    size_t i;
    t[0] = tag;
    for (i = 0; i < n && i < sizeof t - 1; i++)
        t[i + 1] = (char)('a' + v[i]);
    sg_buf_append(b, t, i + 1);
}

static void put_interval(sg_buf *b, const sg_interval *iv)
{
    sg_bound lo = {iv->lo, iv->lo_inf ? -1 : 0}, hi = {iv->hi, iv->hi_inf ? 1 : 0};
    sg_buf_putc(b, '[');
    sg_buf_put_bound(b, lo, ':');
    sg_buf_put_bound(b, hi, ']');
}

/* `e`'s structure with its symbols by position (sg_expr_shape). */
static void put_shape(sig_ctx *s, const sg_expr *e)
{
    if (s->ok)
        s->ok = sg_expr_shape(s->b, e, sg_problem_sym_pos, &s->pos, &s->nodes);
}

/* Whether dim i can be part of a signature: not derived, not decided or fixed by phase 1, and a
 * Dim name (if any) no other input dim uses, plainly or as a derived dim's root. */
static bool dim_alone(const checker *c, const sg_check_classes *k, size_t i)
{
    const sg_problem *p = c->p;
    const sg_input_dim *d = &p->inputs[i];
    long xi;
    if (d->kind == SG_SPEC_DERIVED || c->decided[i] || c->fixed_kind[i] != FIX_NONE || c->fixed[i])
        return false;
    if (d->kind == SG_SPEC_DIM)
        return d->name && (xi = sg_problem_x_index(p, d->name)) >= 0 && p->x_nplain[xi] == 1 &&
               sg_strmap_get(&k->derived_roots, d->name) == SIZE_MAX;
    return true;
}

/* The signature of component `comp` into b; false when it has none (see dim_alone, put_shape). */
static bool signature(const checker *c, sg_check_classes *k, long comp, sg_buf *b)
{
    const sg_problem *p = c->p;
    sig_ctx s = {b, {p, k->sloc, comp}, SHAPE_NODES, true};
    size_t j, x, pos;

    pos = 0;
    FOR_MEMBERS(c->inputs, comp, j, x)
        k->dloc[x] = pos++;
    pos = 0;
    FOR_MEMBERS(c->syms, comp, j, x)
        k->sloc[x] = pos++;
    pos = 0;
    FOR_MEMBERS(c->cons, comp, j, x)
        k->kloc[x] = pos++;
    sg_buf_put_size(b, c->inputs.start[comp + 1] - c->inputs.start[comp], ' ');
    sg_buf_put_size(b, c->syms.start[comp + 1] - c->syms.start[comp], ' ');
    sg_buf_put_size(b, c->cons.start[comp + 1] - c->cons.start[comp], '|');
    FOR_MEMBERS(c->inputs, comp, j, x) {
        const sg_input_dim *d = &p->inputs[x];
        if (!dim_alone(c, k, x))
            return false;
        {
            int v[5] = {(int)d->kind, (int)p->named[x], (int)d->has_bounds, (int)d->has_static_size,
                        (int)c->r->dims[x].status};
            put_tag(b, 'd', v, 5);
        }
        sg_buf_put_int(b, d->size, ',');
        sg_buf_put_bound(b, d->min, ',');
        sg_buf_put_bound(b, d->max, ',');
        sg_buf_put_int(b, d->has_static_size ? d->static_size : 0, ',');
        sg_buf_puts(b, c->r->dims[x].reason);
        sg_buf_putc(b, '|');
        put_shape(&s, d->value);
        sg_buf_putc(b, ';');
    }
    FOR_MEMBERS(c->syms, comp, j, x) {
        const sg_symbol_info *si = &p->syms[x];
        uint32_t bi = sg_expr_symbol_index(si->sym);
        if (p->sym_input[x] < 0 || (size_t)p->sym_input[x] >= p->ninputs ||
            p->input_comp[p->sym_input[x]] != comp)
            return false;
        {
            int v[5] = {(int)sg_expr_sort(si->sym), (int)si->unbacked, (int)si->size_like, (int)si->has_hint,
                        (int)p->sym_checked[x]};
            put_tag(b, 's', v, 5);
            sg_buf_put_size(b, k->dloc[p->sym_input[x]], ',');
        }
        sg_buf_put_int(b, si->has_hint ? si->hint : 0, ',');
        sg_buf_put_bound(b, si->lo, ',');
        sg_buf_put_bound(b, si->hi, ',');
        if (bi < c->nbox)
            put_interval(b, &c->box[bi]);
        else
            sg_buf_putc(b, 'X');
        put_shape(&s, si->replacement);
        sg_buf_putc(b, ';');
    }
    FOR_MEMBERS(c->cons, comp, j, x) {
        const sg_constraint *cn = &p->cons[x];
        size_t at = cn->kind == SG_CORE_INPUT ? (cn->index < p->ninputs ? k->dloc[cn->index] : SIZE_MAX)
                  : cn->kind == SG_CORE_RANGE || cn->kind == SG_CORE_REPLACEMENT
                      ? (cn->index < p->nsyms ? k->sloc[cn->index] : SIZE_MAX)
                      : 0;
        if (at == SIZE_MAX || (cn->kind == SG_CORE_INPUT && p->input_comp[cn->index] != comp) ||
            ((cn->kind == SG_CORE_RANGE || cn->kind == SG_CORE_REPLACEMENT) && p->sym_comp[cn->index] != comp))
            return false;
        {
            int v[3] = {(int)cn->kind, (int)cn->checked, (int)cn->unbacked};
            put_tag(b, 'c', v, 3);
            sg_buf_put_size(b, at, ',');
        }
        put_shape(&s, cn->expr);
        sg_buf_putc(b, ';');
    }
    return s.ok && !b->failed;
}

/* ---- Recording ------------------------------------------------------------------------------------ */

static bool push_event(comp_rec *r, int type, size_t at, size_t item0, size_t nitems)
{
    rec_event *e = sg__push((void **)&r->ev, &r->evcap, &r->nev, sizeof *r->ev);
    if (!e)
        return false;
    e->type = type;
    e->at = at;
    e->item0 = item0;
    e->nitems = nitems;
    return true;
}

void sg_check__rec_cex(checker *c, const sg_int *cex, const bool *flag, size_t nlits, const int *kind_of,
                       const size_t *index_of, const bool *keep)
{
    sg_check_classes *k = c->classes;
    comp_rec *r = k ? k->cur : NULL;
    const sg_problem *p = c->p;
    size_t j, x, nd, at, item0;
    if (!r || !r->ok)
        return;
    nd = c->inputs.start[k->cur_comp + 1] - c->inputs.start[k->cur_comp];
    for (x = 0; x < p->ninputs; x++) /* other components keep their example sizes */
        if (p->input_comp[x] != k->cur_comp && (cex[x] != p->inputs[x].size || flag[x])) {
            r->ok = false;
            return;
        }
    if (sg__grow((void **)&r->vals, &r->valcap, r->nvals + nd + 1, sizeof *r->vals) ||
        sg__grow((void **)&r->flags, &r->flagcap, r->nvals + nd + 1, sizeof *r->flags)) {
        r->ok = false;
        return;
    }
    at = r->nvals;
    FOR_MEMBERS(c->inputs, k->cur_comp, j, x) {
        r->vals[r->nvals] = cex[x];
        r->flags[r->nvals++] = flag[x];
    }
    item0 = r->nitems;
    for (j = 0; j < nlits; j++) {
        rec_item *it;
        size_t loc;
        if (!keep[j] || (kind_of[j] != 1 && kind_of[j] != 2))
            continue;
        loc = kind_of[j] == 1 ? (index_of[j] < p->ninputs && p->input_comp[index_of[j]] == k->cur_comp
                                     ? k->dloc[index_of[j]] : SIZE_MAX)
                              : (index_of[j] < p->ncons && p->cons_comp[index_of[j]] == k->cur_comp
                                     ? k->kloc[index_of[j]] : SIZE_MAX);
        if (loc == SIZE_MAX || !(it = sg__push((void **)&r->items, &r->itemcap, &r->nitems, sizeof *r->items))) {
            r->ok = false;
            return;
        }
        it->kind = kind_of[j];
        it->at = loc;
    }
    if (!push_event(r, EV_CEX, at, item0, r->nitems - item0))
        r->ok = false;
}

void sg_check__rec_dim(checker *c, size_t i, bool pin)
{
    sg_check_classes *k = c->classes;
    comp_rec *r = k ? k->cur : NULL;
    if (!r || !r->ok)
        return;
    if (i >= c->p->ninputs || c->p->input_comp[i] != k->cur_comp || !push_event(r, pin ? EV_PIN : EV_PROVED, k->dloc[i], 0, 0))
        r->ok = false;
}

/* ---- Before and after a component --------------------------------------------------------------- */

/* Replay record r onto component comp (its positions in k->dloc/kloc, from its signature). */
static int replay(checker *c, sg_check_classes *k, const comp_rec *r, long comp)
{
    sg_problem *p = c->p;
    size_t nd = c->inputs.start[comp + 1] - c->inputs.start[comp], e, j, *dim_at = NULL, *con_at = NULL;
    sg_int *cex = NULL;
    bool *flag = NULL, *keep = NULL;
    int *kind_of = NULL, rc = 0;
    size_t *index_of = NULL, maxitems = 1;
    for (e = 0; e < r->nev; e++)
        if (r->ev[e].type == EV_CEX && r->ev[e].nitems + 1 > maxitems)
            maxitems = r->ev[e].nitems + 1;
    if (!SG_CALLOC_ALL(SG_SLOT(dim_at, nd + 1), SG_SLOT(con_at, c->cons.start[comp + 1] - c->cons.start[comp] + 1),
                       SG_SLOT(cex, p->ninputs + 1), SG_SLOT(flag, p->ninputs + 1), SG_SLOT(keep, maxitems),
                       SG_SLOT(kind_of, maxitems), SG_SLOT(index_of, maxitems))) {
        rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
        goto cleanup;
    }
    FOR_MEMBERS(c->inputs, comp, j, e)
        dim_at[k->dloc[e]] = e;
    FOR_MEMBERS(c->cons, comp, j, e)
        con_at[k->kloc[e]] = e;
    for (e = 0; e < r->nev && !rc; e++) {
        const rec_event *ev = &r->ev[e];
        if (ev->type == EV_PIN) {
            sg_check__pin(c, dim_at[ev->at]);
        } else if (ev->type == EV_PROVED) {
            c->r->dims[dim_at[ev->at]].status = SG_DIM_PROVED;
        } else {
            tvec lits = TVEC_INIT;
            for (j = 0; j < p->ninputs; j++) {
                cex[j] = p->inputs[j].size;
                flag[j] = false;
            }
            for (j = 0; j < nd; j++) {
                cex[dim_at[j]] = r->vals[ev->at + j];
                flag[dim_at[j]] = r->flags[ev->at + j];
            }
            for (j = 0; j < ev->nitems; j++) {
                const rec_item *it = &r->items[ev->item0 + j];
                kind_of[j] = it->kind;
                index_of[j] = it->kind == 1 ? dim_at[it->at] : con_at[it->at];
                keep[j] = true;
            }
            lits.n = ev->nitems; /* (record_cex reads the count, kinds and indices only) */
            rc = sg_check__record_cex(c, cex, flag, &lits, kind_of, index_of, keep);
        }
    }
    c->r->stats.decided_cheaply += r->cheap;
cleanup:
    SG_FREE_ALL(dim_at, con_at, cex, flag, keep, kind_of, index_of);
    return rc;
}

int sg_check__classes_begin(checker *c, long comp)
{
    sg_check_classes *k = c->classes;
    sg_buf b;
    size_t *slot, at;
    int rc = 0;
    if (!k)
        return 0;
    k->cur = NULL;
    if (!k->twin[comp])
        return 0;
    sg_buf_init(&b, SIG_MAX);
    if (!signature(c, k, comp, &b)) { /* (none, or none written: decided as before) */
        sg_buf_dispose(&b);
        return 0;
    }
    at = sg_strmap_get(&k->by_sig, b.data);
    if (at != SIZE_MAX) {
        sg_buf_dispose(&b);
        if (!k->recs[at].ok)
            return 0; /* its first one could not be recorded: decided as before */
        rc = replay(c, k, &k->recs[at], comp);
        replays += rc == 0;
        return rc ? rc : 1;
    }
    /* the first of its class: decided as before, recorded */
    if (!sg__push((void **)&k->recs, &k->cap, &k->nrecs, sizeof *k->recs)) {
        sg_buf_dispose(&b);
        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    }
    memset(&k->recs[k->nrecs - 1], 0, sizeof *k->recs);
    k->recs[k->nrecs - 1].sig = sg_buf_take(&b);
    if (!k->recs[k->nrecs - 1].sig || !(slot = sg_strmap_slot(&k->by_sig, k->recs[k->nrecs - 1].sig))) {
        sg_free(k->recs[k->nrecs - 1].sig);
        k->nrecs--;
        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    }
    *slot = k->nrecs - 1;
    k->cur = &k->recs[k->nrecs - 1];
    k->cur->ok = true;
    k->cur_comp = comp;
    k->cheap0 = c->r->stats.decided_cheaply;
    k->queries0 = c->r->stats.queries;
    return 0;
}

void sg_check__classes_end(checker *c, long comp, int rc)
{
    sg_check_classes *k = c->classes;
    comp_rec *r = k ? k->cur : NULL;
    size_t j, x;
    if (!r || k->cur_comp != comp)
        return;
    k->cur = NULL;
    /* replayable only when decided in full without Z3, a budget or an error */
    if (rc || c->r->stats.queries != k->queries0 || sg_check__stop(c) ||
        (c->budget.deadline > 0 && sg_problem_now() >= c->budget.deadline))
        r->ok = false;
    FOR_MEMBERS(c->inputs, comp, j, x)
        if (c->r->dims[x].status == SG_DIM_UNKNOWN)
            r->ok = false;
    r->cheap = c->r->stats.decided_cheaply - k->cheap0;
}
