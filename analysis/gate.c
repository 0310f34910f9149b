/*
 * gate.c - the release gate: does NEW accept every input shape OLD accepts?
 *
 * Each version is an exported program (an sg_graph read from a .pt2) or a
 * trace (sg_trace: a v1 JSON trace, a capture folder, a TORCH_TRACE log),
 * first read into one model, a `prog`: its tensor inputs with their sizes
 * (expressions over the version's own symbols) and the conditions its
 * accepted domain is made of, each with its kind, where it is ("source") and
 * the user code line it came from when the input records one. After that
 * nothing here knows what the version was read from.
 *
 * What a version accepts is what its loaded module checks on every call
 * (torch/export/_unlift.py, torch/_export/utils.py):
 *   archive: every input dim equals its symbolic or static size, the
 *     range_constraints entry of an input dim's size (its max, and its min
 *     when above 2: 0 and 1 are let through), every guards_code entry, every
 *     runtime assert over input sizes;
 *   trace: the program the export makes of it: every input dim equals what
 *     torch traced for it, the range torch's range_constraints would give the
 *     dim (the spec's Dim bounds, else var_to_range: its max, its min above
 *     2), every shape guard and every runtime assert over input sizes (the
 *     guards torch emitted are the program's input constraints; 2.8+ writes
 *     them as guards_code).
 *
 * Both domains are written over one set of variables, one per input dim of
 * OLD, named by torch's source for it (`L['x'].size()[0]`), so a printed
 * condition reads as torch prints guards. A version's symbols are expressed
 * through those variables: a symbol some input dim is exactly is that dim's
 * variable; the root `s` of a dim `A*s + B` is `(D - B) // A` (the dim's own
 * condition `D == A*s + B` then asks for the divisibility). Z3
 * (solver/sat.h) answers "OLD holds and NEW does not" (a regression) and the
 * converse (a widening); an undefined NEW condition (Python would raise)
 * rejects. The rejecting condition is found by exact evaluation of each at
 * the witness. Dynamic sizes are compared from 2 on: torch.export
 * specialises 0 and 1 when it exports, and the module's kernels may not run
 * on them (a view(-1, n) of zero elements raises), so a difference at 0 or 1
 * alone is not a finding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gate.h"
#include "analysis/gate_policy.h"
#include "expr/expr.h"
#include "shapegate/graph.h"
#include "solver/sat.h"
#include "torch/pyspec.h"
#include "trace/trace.h"
#include "util/json.h"
#include "util/util.h"

#define MAX_VARS 4096

/* ---- one version, read into a common model -------------------------------------------------- */

/* One user input: a tensor (sizes over the version's pool) or not (ndim 0, sizes NULL). */
typedef struct prog_input {
    const char *path;
    const char *name;            /* the name the served model gives it (the placeholder's), or NULL */
    const char *value;           /* a non-tensor input torch specialised: its value as JSON text ("3",
                                  * "\"relu\"", "null"); NULL for a tensor or a dynamic (SymInt) one */
    bool tensor;
    size_t ndim;
    const sg_expr *const *sizes; /* borrowed from the version, or prog-owned (`own_sizes`) */
    const sg_int *examples;      /* the example input's sizes (traces), or NULL */
    char dtype[24];              /* torch's dtype name ("float32"), "" when unknown */
} prog_input;

/* One condition of the version's domain over its own symbols. `op` SG_GE / SG_LE: `e OP bound`
 * (a range entry; the comparison is built over the variables), else `e` itself. */
typedef struct prog_cond {
    const sg_expr *e;
    int op;
    sg_int bound;
    const char *kind;            /* static string */
    char source[240];
    char *loc;                   /* the user code line it came from (owned), or NULL */
    bool skip_missing;           /* a symbol no input dim determines: data-dependent, not about shapes */
} prog_cond;

typedef struct prog {
    const sg_pool *pool;         /* the version's expressions */
    prog_input *inputs;
    size_t ninputs, capinputs;
    const sg_expr **own_sizes;   /* sizes the adapter gathered (traces), freed with the prog */
    sg_int *own_examples;
    char **own_text;             /* names and values the adapter made (traces), freed with the prog */
    size_t ntext, captext;
    bool nontensor_known;        /* its non-tensor inputs are listed (an archive, a capture record) */
    bool inputs_unknown;         /* not read at all (`unread`): its inputs are not known either */
    const char *example_from;    /* where the examples come from (static string), or NULL */
    prog_cond *conds;
    size_t nconds, capconds;
    const sg_expr **rep_sym;     /* traces: symbols torch replaced, and by what (over its symbols) */
    const sg_expr **rep_by;
    size_t nreps;
    char unread[200];            /* why the domain cannot be written, or "" */
    char note[240];              /* what the report should say about this version, or "" */
    const char *torch_version;   /* or NULL */
} prog;

static char *dupstr(const char *s) { return s ? sg__strndup(s, strlen(s)) : NULL; }

static void prog_dispose(prog *p)
{
    size_t i;
    for (i = 0; i < p->nconds; i++)
        sg_free(p->conds[i].loc);
    for (i = 0; i < p->ntext; i++)
        sg_free(p->own_text[i]);
    sg_free(p->own_text);
    sg_free(p->conds);
    sg_free(p->inputs);
    sg_free((void *)p->own_sizes);
    sg_free(p->own_examples);
    sg_free((void *)p->rep_sym);
    sg_free((void *)p->rep_by);
    memset(p, 0, sizeof *p);
}

/* `s` kept by the prog until it is disposed (NULL on out of memory). */
static const char *prog_keep(prog *p, char *s)
{
    if (!s || sg__grow((void **)&p->own_text, &p->captext, p->ntext + 1, sizeof *p->own_text) != 0) {
        sg_free(s);
        return NULL;
    }
    return p->own_text[p->ntext++] = s;
}

static prog_input *prog_add_input(prog *p)
{
    if (sg__grow((void **)&p->inputs, &p->capinputs, p->ninputs + 1, sizeof *p->inputs) != 0)
        return NULL;
    memset(&p->inputs[p->ninputs], 0, sizeof *p->inputs);
    return &p->inputs[p->ninputs++];
}

/* Append a condition; `fmt` takes two strings (b NULL: ""). False on out of memory. */
static bool prog_add_cond(prog *p, const sg_expr *e, int op, sg_int bound, const char *kind, const char *loc,
                          bool skip_missing, const char *fmt, const char *a, const char *b)
{
    prog_cond *c;

    if (sg__grow((void **)&p->conds, &p->capconds, p->nconds + 1, sizeof *p->conds) != 0)
        return false;
    c = &p->conds[p->nconds];
    memset(c, 0, sizeof *c);
    c->e = e;
    c->op = op;
    c->bound = bound;
    c->kind = kind;
    c->skip_missing = skip_missing;
    snprintf(c->source, sizeof c->source, fmt, a ? a : "", b ? b : "");
    if (loc && !(c->loc = dupstr(loc)))
        return false;
    p->nconds++;
    return true;
}

/* Is `e` the size of some tensor input dim of `p`? */
static bool is_input_size(const prog *p, const sg_expr *e)
{
    size_t i, d;
    for (i = 0; i < p->ninputs; i++)
        for (d = 0; d < p->inputs[i].ndim; d++)
            if (p->inputs[i].sizes[d] == e)
                return true;
    return false;
}

/*
 * The user frame of a node's stack_trace, as traces record a guard's user line: "CODE  # FILE:LINE
 * in FUNC" for the innermost frame outside torch's own files (the frames are outermost first),
 * into `out`; "" when there is none.
 */
static void user_frame_of_stack(char *out, size_t cap, const char *st)
{
    const char *best = NULL, *p = st;

    out[0] = '\0';
    while (p && (p = strstr(p, "File \"")) != NULL) {
        const char *q = p + 6, *e = strchr(q, '"');
        if (!e)
            break;
        /* torch's own files: ".../torch/..." or, as torch 2.6 writes its passes' frames, "torch/..." */
        if (!(strstr(q, "/torch/") && strstr(q, "/torch/") < e) && strncmp(q, "torch/", 6) != 0 && !(strstr(q, "<") == q))
            best = p;
        p = e;
    }
    if (best) {
        const char *f = best + 6, *fe = strchr(f, '"'), *base = f, *ln, *in, *nl, *code = "";
        long line = 0;
        int codelen = 0;
        for (const char *s = f; s < fe; s++)
            if (*s == '/')
                base = s + 1;
        ln = strstr(fe, "line ");
        if (ln)
            line = strtol(ln + 5, NULL, 10);
        in = ln ? strstr(ln, " in ") : NULL;
        nl = in ? strchr(in, '\n') : NULL;
        if (nl) {
            code = nl + 1;
            while (*code == ' ')
                code++;
            codelen = (int)strcspn(code, "\n");
        }
        if (in)
            snprintf(out, cap, "%.*s%s# %.*s:%ld in %.*s", codelen > 160 ? 160 : codelen, code, codelen ? "  " : "",
                     (int)(fe - base), base, line, nl ? (int)(nl - in - 4) : (int)strcspn(in + 4, "\n"), in + 4);
    }
}

/* An exported program as a prog. Returns 0 or SG_ENOMEM. */
static int prog_from_graph(prog *p, const sg_graph *g, sg_error *err)
{
    size_t i, n;
    char buf[64], loc[400];

    p->pool = sg_graph_pool(g);
    p->torch_version = sg_graph_torch_version(g);
    p->nontensor_known = true; /* the signature lists every input: constant_input for what torch specialised */
    for (i = 0, n = 0; i < sg_graph_input_count(g); i++) {
        const sg_graph_input *in = sg_graph_input_at(g, i);
        if (in->kind == SG_GRAPH_IN_USER && in->tensor)
            n += in->tensor->ndim;
    }
    if (!(p->own_examples = sg__calloc(n + 1, sizeof *p->own_examples)))
        goto oom;
    for (i = 0, n = 0; i < sg_graph_input_count(g); i++) {
        const sg_graph_input *in = sg_graph_input_at(g, i);
        prog_input *pi;
        if ((in->kind != SG_GRAPH_IN_USER && in->kind != SG_GRAPH_IN_CONSTANT_INPUT) || !in->path)
            continue;
        if (!(pi = prog_add_input(p)))
            goto oom;
        pi->path = in->path;
        pi->name = in->name && in->name[0] ? in->name : NULL;
        pi->tensor = in->kind == SG_GRAPH_IN_USER && in->tensor != NULL;
        if (in->kind == SG_GRAPH_IN_CONSTANT_INPUT)
            pi->value = in->value ? in->value : "?";
        if (pi->tensor) {
            size_t d;
            bool all = in->tensor->hints != NULL;
            pi->ndim = in->tensor->ndim;
            pi->sizes = in->tensor->sizes;
            snprintf(pi->dtype, sizeof pi->dtype, "%s", sg_graph_dtype_name(in->tensor->dtype));
            for (d = 0; all && d < pi->ndim; d++)
                all = in->tensor->hints[d] >= 0;
            if (all) { /* the sizes torch traced it with (tensor meta hints): the archive's example */
                for (d = 0; d < pi->ndim; d++)
                    p->own_examples[n + d] = (sg_int)in->tensor->hints[d];
                pi->examples = &p->own_examples[n];
                p->example_from = "the example sizes the archive records (tensor meta hints)";
            }
            n += pi->ndim;
        }
    }
    /* the range of an input dim's size, as torch checks it on every call: the max when finite, the
     * min only above 2 (0 and 1 are let through); ranges of other expressions (the root of a
     * derived dim) are not checked */
    for (i = 0; i < sg_graph_range_count(g); i++) {
        const sg_graph_range *r = sg_graph_range_at(g, i);
        sg_int v;
        if (!is_input_size(p, r->expr))
            continue;
        if (r->has_min && sg__num_int(&r->min, &v) && v > 2
            && !prog_add_cond(p, r->expr, SG_GE, v, "range_constraints", NULL, true, "range_constraints['%s'] min%s",
                              r->key, NULL))
            goto oom;
        if (r->has_max && sg__num_int(&r->max, &v)
            && !prog_add_cond(p, r->expr, SG_LE, v, "range_constraints", NULL, true, "range_constraints['%s'] max%s",
                              r->key, NULL))
            goto oom;
    }
    for (i = 0; i < sg_graph_guard_count(g); i++) {
        const sg_graph_guard *gd = sg_graph_guard_at(g, i);
        if (!gd->expr) {
            snprintf(p->unread, sizeof p->unread, "guards_code[%zu] not read: %.120s", i, gd->reason ? gd->reason : "");
            return 0;
        }
        snprintf(buf, sizeof buf, "%zu", i);
        if (!prog_add_cond(p, gd->expr, 0, 0, "guards_code", NULL, false, "guards_code[%s]: %s", buf, gd->text))
            goto oom;
    }
    for (i = 0; i < sg_graph_assert_count(g); i++) {
        const sg_graph_assert *a = sg_graph_assert_at(g, i);
        if (!a->expr) { /* it may be about shapes: the domain is not known without it */
            snprintf(p->unread, sizeof p->unread, "the runtime assert on node '%.80s' was not recovered",
                     a->node ? a->node : "?");
            return 0;
        }
        user_frame_of_stack(loc, sizeof loc, a->stack_trace);
        if (!prog_add_cond(p, a->expr, 0, 0, "runtime_assert", loc[0] ? loc : NULL, true,
                           "runtime assert on node '%s'%s", a->node ? a->node : "?", NULL))
            goto oom;
    }
    return 0;
oom:
    return sg_error_set(err, SG_ENOMEM, "out of memory reading a program for the gate");
}

/* Is some symbol of the trace recorded as the value of the input at `path` (source `L` + path)? */
static bool symbol_of_source(const sg_symbol_info *syms, size_t ns, const char *path)
{
    size_t i, k;
    for (i = 0; i < ns; i++)
        for (k = 0; k < syms[i].nsources; k++) {
            const char *src = syms[i].sources[k];
            if (src && src[0] == 'L' && strcmp(src + 1, path) == 0)
                return true;
        }
    return false;
}

/* cJSON's compact text of `j` as a string of ours, or NULL. */
static char *json_text(const cJSON *j)
{
    char *txt = cJSON_PrintUnformatted(j), *out = txt ? dupstr(txt) : NULL;
    cJSON_free(txt);
    return out;
}

/* The input of `p` at `path`, or NULL. */
static const prog_input *input_named(const prog *p, const char *path)
{
    size_t i;
    for (i = 0; i < p->ninputs; i++)
        if (strcmp(p->inputs[i].path, path) == 0)
            return &p->inputs[i];
    return NULL;
}

/* Does `e` (of the trace's pool) name an unbacked (data-dependent) symbol? */
static bool names_unbacked(const sg_trace *t, const sg_expr *e, int depth)
{
    size_t i;
    if (sg_expr_kind(e) == SG_SYM) {
        const sg_symbol_info *si = sg_trace_symbol_info(t, e);
        return si ? si->unbacked : sg_expr_symbol_name(e)[0] == 'u';
    }
    if (depth > 200)
        return false;
    for (i = 0; i < sg_expr_nargs(e); i++)
        if (names_unbacked(t, sg_expr_arg(e, i), depth + 1))
            return true;
    return false;
}

/* The DIM text of a spec leaf for messages: "Dim('batch', min=1, max=64)" and the like. */
static void spec_leaf_text(char *out, size_t cap, const sg_input_dim *d)
{
    char lo[SG_INT_STRLEN], hi[SG_INT_STRLEN];
    const char *kind = d->kind == SG_SPEC_AUTO ? "Dim.AUTO" : d->kind == SG_SPEC_DYNAMIC ? "Dim.DYNAMIC" : NULL;

    if (d->min.inf)
        snprintf(lo, sizeof lo, "None");
    else
        sg_int_format(lo, d->min.v);
    if (d->max.inf)
        snprintf(hi, sizeof hi, "None");
    else
        sg_int_format(hi, d->max.v);
    if (kind)
        snprintf(out, cap, "%s(min=%s, max=%s)", kind, lo, hi);
    else if (d->kind == SG_SPEC_DERIVED)
        snprintf(out, cap, "%s (in [%s, %s])", d->name ? d->name : "?", lo, hi);
    else
        snprintf(out, cap, "Dim('%s', min=%s, max=%s)", d->name ? d->name : "?", lo, hi);
}

/*
 * The placeholder name torch.export gives the user input at pytree path `path` (as
 * placeholder_naming_pass: the path's keys, a key's characters other than letters and digits
 * as '_', lower-cased, joined by '_': "['inputs']['b'][0]" -> "inputs_b_0"); a name taken by
 * an earlier input gets "_1", "_2", ... as torch's collision rule. Kept by the prog, or NULL.
 */
static const char *torch_input_name(prog *p, const char *path)
{
    size_t n = strlen(path), k = 0, i, j;
    char *out = sg__malloc(n + 24), *tmp;
    const char *s = path;
    bool first = true;

    if (!out)
        return NULL;
    while (*s == '[') {
        const char *e = s + 1;
        char q = (*e == '\'' || *e == '"') ? *e : 0;
        if (q) {
            e++;
            while (*e && *e != q)
                e++;
        } else
            while (*e && *e != ']')
                e++;
        if (!first)
            out[k++] = '_';
        first = false;
        for (const char *c = s + 1 + (q != 0); c < e; c++) {
            unsigned char ch = (unsigned char)*c;
            out[k++] = (char)((ch >= 'A' && ch <= 'Z') ? ch - 'A' + 'a'
                              : ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) ? ch : '_');
        }
        s = e + (q != 0);
        if (*s != ']')
            break;
        s++;
    }
    out[k] = '\0';
    for (j = 1;; j++) {
        bool taken = false;
        for (i = 0; i < p->ninputs && !taken; i++)
            taken = p->inputs[i].name && strcmp(p->inputs[i].name, out) == 0;
        if (!taken || j > 999)
            break;
        out[k] = '\0';
        snprintf(out + k, 24, "_%zu", j);
    }
    tmp = out;
    return prog_keep(p, tmp);
}

/* A trace as the program its export makes of it. Returns 0 or SG_ENOMEM. */
static int prog_from_trace(prog *p, const sg_trace *t, sg_error *err)
{
    const sg_input_dim *dims;
    size_t nd = 0, ns = 0, ng = 0, i, k;
    const sg_symbol_info *syms;
    const sg_guard *guards;
    const char *inputs_json = sg_trace_inputs_json(t);
    cJSON *ij = NULL;
    char leaf[200], lo[SG_INT_STRLEN];

    dims = sg_trace_inputs(t, &nd);
    syms = sg_trace_symbols(t, &ns);
    guards = sg_trace_guards(t, &ng);
    p->pool = sg_trace_pool(t);
    p->torch_version = sg_trace_torch_version(t)[0] ? sg_trace_torch_version(t) : NULL;
    if (!sg_trace_has_shape_env(t)) {
        snprintf(p->unread, sizeof p->unread, "torch never traced it (the spec was rejected first): no guards");
        p->inputs_unknown = true;
        return 0;
    }
    if (sg_trace_torch_failed_data_dependent(t)) {
        snprintf(p->unread, sizeof p->unread, "the export did not complete (torch stopped on a data-dependent "
                 "guard): its guards are only those recorded before");
        p->inputs_unknown = true;
        return 0;
    }
    if (sg_trace_torch_error(t))
        snprintf(p->note, sizeof p->note, "torch raised %.80s when exporting it: the domain is what its guards "
                 "accept within the spec's ranges (the program a spec torch accepts would export)",
                 sg_trace_torch_error(t));
    if (!(p->own_sizes = sg__calloc(nd + 1, sizeof *p->own_sizes)) || !(p->own_examples = sg__calloc(nd + 1, sizeof *p->own_examples)))
        goto oom;
    if (inputs_json)
        sg__json_parse(&ij, inputs_json, strlen(inputs_json), (size_t)1 << 26, 256, "inputs", NULL);
    /* the tensors: runs of dims with one path, in input order */
    for (i = 0; i < nd; i = k) {
        prog_input *pi;
        const cJSON *it;
        for (k = i; k < nd && strcmp(dims[k].path, dims[i].path) == 0; k++) {
            if (!dims[k].value) {
                snprintf(p->unread, sizeof p->unread, "%.100s dim %d was not traced", dims[k].path, dims[k].dim);
                goto done;
            }
            p->own_sizes[k] = dims[k].value;
            p->own_examples[k] = dims[k].size;
        }
        if (!(pi = prog_add_input(p)))
            goto oom;
        pi->path = dims[i].path;
        pi->tensor = true;
        pi->ndim = k - i;
        pi->sizes = &p->own_sizes[i];
        pi->examples = &p->own_examples[i];
        p->example_from = "the trace's example inputs";
        if (!(pi->name = torch_input_name(p, pi->path)))
            goto oom;
        cJSON_ArrayForEach(it, sg__json_get(ij, "flat")) {
            const char *path = sg__json_str(sg__json_get(it, "path")), *dt = sg__json_str(sg__json_get(it, "dtype"));
            if (path && dt && strcmp(path, pi->path) == 0)
                snprintf(pi->dtype, sizeof pi->dtype, "%s", dt);
        }
    }
    /* the non-tensor inputs, when the trace records its inputs (a capture does; a TORCH_TRACE log
     * does not): torch specialises them (an archive lists them as constant inputs, and its
     * module checks each call's value) */
    {
        const cJSON *flat = sg__json_get(ij, "flat"), *it;
        p->nontensor_known = cJSON_IsArray(flat) && cJSON_GetArraySize(flat) > 0;
        cJSON_ArrayForEach(it, flat) {
            const char *path = sg__json_str(sg__json_get(it, "path"));
            const cJSON *v = NULL;
            prog_input *pi;
            if (!path || sg__json_get(it, "tensor") || input_named(p, path))
                continue;
            if (!(pi = prog_add_input(p)) || !(pi->path = prog_keep(p, dupstr(path))))
                goto oom;
            if (!(pi->name = torch_input_name(p, path)))
                goto oom;
            if (symbol_of_source(syms, ns, path))
                pi->value = NULL; /* an int torch kept dynamic (a SymInt input: a symbol is `L[path]`) */
            else if (cJSON_IsTrue(sg__json_get(it, "none")))
                pi->value = "null";
            else if ((v = sg__json_get(it, "int")) || (v = sg__json_get(it, "float")) || (v = sg__json_get(it, "bool"))
                     || (v = sg__json_get(it, "str"))) {
                /* a float the capture wrote as text (nan, inf) is not compared */
                if (!(pi->value = prog_keep(p, cJSON_IsString(v) && sg__json_get(it, "float") ? dupstr("?") : json_text(v))))
                    goto oom;
            } else
                pi->value = "?";
        }
        /* in the record's (signature) order: the spec text nests them by path */
        if (p->nontensor_known) {
            prog_input *sorted = sg__calloc(p->ninputs + 1, sizeof *sorted);
            size_t m = 0, j;
            bool *used = sg__calloc(p->ninputs + 1, sizeof *used);
            if (!sorted || !used) {
                sg_free(sorted);
                sg_free(used);
                goto oom;
            }
            cJSON_ArrayForEach(it, flat) {
                const char *path = sg__json_str(sg__json_get(it, "path"));
                for (j = 0; path && j < p->ninputs; j++)
                    if (!used[j] && strcmp(p->inputs[j].path, path) == 0) {
                        used[j] = true;
                        sorted[m++] = p->inputs[j];
                        break;
                    }
            }
            for (j = 0; j < p->ninputs; j++)
                if (!used[j])
                    sorted[m++] = p->inputs[j];
            memcpy(p->inputs, sorted, p->ninputs * sizeof *sorted);
            sg_free(sorted);
            sg_free(used);
        }
    }
    /* symbols torch replaced (guards may still name them): through what replaced them */
    if (!(p->rep_sym = sg__calloc(ns + 1, sizeof *p->rep_sym)) || !(p->rep_by = sg__calloc(ns + 1, sizeof *p->rep_by)))
        goto oom;
    for (i = 0; i < ns; i++)
        if (syms[i].replacement) {
            p->rep_sym[p->nreps] = syms[i].sym;
            p->rep_by[p->nreps++] = syms[i].replacement;
        }
    /* the range torch's range_constraints gives each input dim: the spec's Dim bounds, else the
     * traced range (var_to_range) of the symbol the dim is */
    for (i = 0; i < nd; i++) {
        const sg_input_dim *d = &dims[i];
        if (sg_expr_kind(d->value) == SG_INT)
            continue;
        if (d->has_bounds && d->kind != SG_SPEC_AUTO && d->kind != SG_SPEC_DYNAMIC) {
            spec_leaf_text(leaf, sizeof leaf, d);
            if (!d->min.inf && d->min.v > 2
                && !prog_add_cond(p, d->value, SG_GE, d->min.v, "dynamic_shapes", NULL, true,
                                  "dynamic_shapes %s = %s min", d->source, leaf))
                goto oom;
            if (!d->max.inf
                && !prog_add_cond(p, d->value, SG_LE, d->max.v, "dynamic_shapes", NULL, true,
                                  "dynamic_shapes %s = %s max", d->source, leaf))
                goto oom;
        }
    }
    for (i = 0; i < ns; i++) {
        const sg_symbol_info *s = &syms[i];
        if (s->unbacked || !is_input_size(p, s->sym))
            continue;
        if (!s->lo.inf && s->lo.v > 2
            && !prog_add_cond(p, s->sym, SG_GE, s->lo.v, "range", NULL, true, "var_to_range['%s'] min%s",
                              sg_expr_symbol_name(s->sym), NULL))
            goto oom;
        if (!s->hi.inf
            && !prog_add_cond(p, s->sym, SG_LE, s->hi.v, "range", NULL, true, "var_to_range['%s'] max%s",
                              sg_expr_symbol_name(s->sym), NULL))
            goto oom;
    }
    for (i = 0; i < ng; i++) {
        const sg_guard *gd = &guards[i];
        bool ra = gd->origin == SG_GUARD_RUNTIME_ASSERT;
        snprintf(lo, sizeof lo, "%zu", i);
        if (!prog_add_cond(p, gd->expr, 0, 0, ra ? "runtime_assert" : "guard", gd->user_loc,
                           names_unbacked(t, gd->expr, 0), ra ? "runtime assert %s: %s" : "guard %s: %s", lo,
                           gd->text ? gd->text : ""))
            goto oom;
    }
done:
    cJSON_Delete(ij);
    return 0;
oom:
    cJSON_Delete(ij);
    return sg_error_set(err, SG_ENOMEM, "out of memory reading a trace for the gate");
}

/* ---- the gate over two progs ---------------------------------------------------------------- */

/* One condition of a side over the variables, with where it comes from. */
typedef struct cond {
    const sg_expr *e;     /* over the variables */
    const char *kind;     /* static string */
    char source[240];
    const char *loc;      /* borrowed from the prog, or NULL */
} cond;

typedef struct side {
    const prog *p;
    const sg_expr **map;  /* per symbol index of p's pool: the expression over the variables, or NULL */
    cond *conds;
    size_t n, cap;
    char unread[200];     /* why the domain cannot be written, or "" */
} side;

typedef struct gate_ctx {
    sg_pool *pool;        /* the variables and both domains */
    const char **vpath;   /* per variable: OLD's input path and dim */
    size_t *vdim;
    size_t nvars;
    const sg_expr **var;
    bool *dynamic;        /* the variable's size in OLD is not a literal */
    sg_error *err;
} gate_ctx;

/* The variable of (path, dim), or NULL. */
static const sg_expr *var_of(const gate_ctx *c, const char *path, size_t dim)
{
    size_t i;
    for (i = 0; i < c->nvars; i++)
        if (c->vdim[i] == dim && strcmp(c->vpath[i], path) == 0)
            return c->var[i];
    return NULL;
}

/* `e` of the prog's pool rebuilt over the variables; NULL when a symbol has no expression
 * (`*missing`) or a constructor failed. `memo` by expression id. */
static const sg_expr *over_vars(gate_ctx *c, side *s, sg_expr_copier *cp, const sg_expr **memo, const sg_expr *e,
                                bool *missing)
{
    const sg_expr *stack[16], **args = stack, *res = NULL;
    size_t n = sg_expr_nargs(e), i;
    uint32_t id = sg_expr_id(e);

    if (memo[id])
        return memo[id];
    if (sg_expr_kind(e) == SG_SYM) {
        res = s->map[sg_expr_symbol_index(e)];
        if (!res)
            *missing = true;
        return memo[id] = res;
    }
    if (n == 0)
        return memo[id] = sg_expr_copy(cp, e);
    if (n > 16 && !(args = sg__malloc(n * sizeof *args)))
        return NULL;
    for (i = 0; i < n; i++)
        if (!(args[i] = over_vars(c, s, cp, memo, sg_expr_arg(e, i), missing)))
            goto cleanup;
    res = sg_expr_apply(c->pool, sg_expr_kind(e), args, n);
cleanup:
    if (args != stack)
        sg_free((void *)args);
    return memo[id] = res;
}

static bool add_cond(side *s, const sg_expr *e, const char *kind, const char *loc, const char *fmt, const char *a,
                     const char *b)
{
    if (!e)
        return false;
    if (sg_expr_kind(e) == SG_TRUE)
        return true;
    if (sg__grow((void **)&s->conds, &s->cap, s->n + 1, sizeof *s->conds) != 0)
        return false;
    s->conds[s->n].e = e;
    s->conds[s->n].kind = kind;
    s->conds[s->n].loc = loc;
    snprintf(s->conds[s->n].source, sizeof s->conds[s->n].source, fmt, a, b ? b : "");
    s->n++;
    return true;
}

/* The domain of one version over the variables. Returns 0, SG_ENOMEM; `s->unread` says when the
 * domain cannot be written exactly. */
static int build_side(gate_ctx *c, side *s)
{
    const prog *p = s->p;
    size_t ns = sg_pool_nsymbols(p->pool), i, d, k;
    const sg_expr **memo = NULL;
    sg_expr_copier cp;
    char buf[64];
    int rc = 0;

    sg_expr_copier_init(&cp, c->pool);
    if (p->unread[0]) {
        snprintf(s->unread, sizeof s->unread, "%s", p->unread);
        goto cleanup;
    }
    s->map = sg__calloc(ns + 1, sizeof *s->map);
    memo = sg__calloc(sg_pool_size(p->pool) + 1, sizeof *memo);
    if (!s->map || !memo)
        goto oom;
    /* symbols: the first input dim that is exactly the symbol, else the root of an affine dim */
    for (i = 0; i < p->ninputs; i++)
        for (d = 0; d < p->inputs[i].ndim; d++) {
            const sg_expr *sz = p->inputs[i].sizes[d], *v = var_of(c, p->inputs[i].path, d);
            if (v && sg_expr_kind(sz) == SG_SYM && !s->map[sg_expr_symbol_index(sz)])
                s->map[sg_expr_symbol_index(sz)] = v;
        }
    for (i = 0; i < p->ninputs; i++)
        for (d = 0; d < p->inputs[i].ndim; d++) {
            const sg_expr *root = NULL, *v = var_of(c, p->inputs[i].path, d);
            sg_int a, b;
            uint32_t idx;
            if (!v || !sg_expr_affine(p->inputs[i].sizes[d], &root, &a, &b) || !root || a < 1)
                continue;
            idx = sg_expr_symbol_index(root);
            if (s->map[idx])
                continue;
            s->map[idx] = sg_expr_2(c->pool, SG_FLOORDIV, sg_expr_sub(c->pool, v, sg_expr_int(c->pool, b)),
                                    sg_expr_int(c->pool, a));
            if (!s->map[idx])
                goto oom;
        }
    /* symbols torch replaced: what replaced them, as far as that is determined (chains resolve
     * over the rounds) */
    for (k = 0; k < p->nreps + 1 && p->nreps; k++) {
        bool progress = false;
        for (i = 0; i < p->nreps; i++) {
            bool missing = false;
            const sg_expr *e;
            uint32_t idx = sg_expr_symbol_index(p->rep_sym[i]);
            if (s->map[idx])
                continue;
            e = over_vars(c, s, &cp, memo, p->rep_by[i], &missing);
            if (!missing && e) {
                s->map[idx] = e;
                memo[sg_expr_id(p->rep_sym[i])] = NULL;
                progress = true;
            }
        }
        if (!progress)
            break;
    }
    /* every input dim equals its size */
    for (i = 0; i < p->ninputs; i++)
        for (d = 0; d < p->inputs[i].ndim; d++) {
            bool missing = false;
            const sg_expr *v = var_of(c, p->inputs[i].path, d), *sz;
            if (!v)
                continue; /* a signature change: not compared */
            sz = over_vars(c, s, &cp, memo, p->inputs[i].sizes[d], &missing);
            if (missing) {
                snprintf(s->unread, sizeof s->unread, "the size of %.100s dim %zu is not determined by input dims",
                         p->inputs[i].path, d);
                goto cleanup;
            }
            snprintf(buf, sizeof buf, "%zu", d);
            if (!add_cond(s, sg_expr_2(c->pool, SG_EQ, v, sz),
                          sg_expr_kind(p->inputs[i].sizes[d]) == SG_INT ? "static size" : "shape", NULL,
                          "input %s dim %s", p->inputs[i].path, buf))
                goto oom;
        }
    for (k = 0; k < p->nconds; k++) {
        const prog_cond *pc = &p->conds[k];
        bool missing = false;
        const sg_expr *e = over_vars(c, s, &cp, memo, pc->e, &missing);
        if (missing) {
            if (pc->skip_missing)
                continue; /* over a data-dependent symbol */
            snprintf(s->unread, sizeof s->unread, "%.120s names a symbol no input dim determines", pc->source);
            goto cleanup;
        }
        if (e && pc->op)
            e = sg_expr_2(c->pool, pc->op, e, sg_expr_int(c->pool, pc->bound));
        if (!add_cond(s, e, pc->kind, pc->loc, "%s%s", pc->source, NULL))
            goto oom;
    }
    goto cleanup;
oom:
    rc = sg_error_set(c->err, SG_ENOMEM, "out of memory building the gate");
cleanup:
    sg_expr_copier_dispose(&cp);
    sg_free((void *)memo);
    return rc;
}

/* The conjunction of a side's conditions. */
static const sg_expr *domain(gate_ctx *c, const side *s)
{
    const sg_expr **a;
    const sg_expr *res;
    size_t i;

    if (s->n == 0)
        return sg_expr_bool(c->pool, true);
    if (s->n == 1)
        return s->conds[0].e;
    if (!(a = sg__malloc(s->n * sizeof *a)))
        return NULL;
    for (i = 0; i < s->n; i++)
        a[i] = s->conds[i].e;
    res = sg_expr_apply(c->pool, SG_AND, a, s->n);
    sg_free((void *)a);
    return res;
}

/* The tensor inputs of `p` as a witness filled from `vals`. */
static int fill_witness(gate_ctx *c, sg_gate_finding *f, const prog *p, const sg_int *vals)
{
    size_t i, d, n = 0;

    for (i = 0; i < p->ninputs; i++)
        n += p->inputs[i].tensor;
    if (!(f->witness = sg__calloc(n + 1, sizeof *f->witness)))
        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    for (i = 0; i < p->ninputs; i++) {
        const prog_input *in = &p->inputs[i];
        sg_gate_shape *w;
        if (!in->tensor)
            continue;
        w = &f->witness[f->nwitness++];
        w->path = dupstr(in->path);
        w->ndim = in->ndim;
        w->sizes = sg__calloc(w->ndim + 1, sizeof *w->sizes);
        if (!w->path || !w->sizes)
            return sg_error_set(c->err, SG_ENOMEM, "out of memory");
        for (d = 0; d < w->ndim; d++) {
            const sg_expr *v = var_of(c, in->path, d);
            w->sizes[d] = v ? vals[sg_expr_symbol_index(v)] : 0;
        }
    }
    return 0;
}

/* Flag (in `gt->dims`, through `which`) the dims whose variables `e` mentions. */
static int flag_dims(gate_ctx *c, sg_gate *gt, const sg_expr *e, bool widening)
{
    const sg_expr **syms = NULL;
    size_t n = 0, i, k;
    int rc = sg_expr_symbols(&syms, &n, c->pool, e, c->err);

    for (i = 0; rc == 0 && i < n; i++)
        for (k = 0; k < c->nvars && k < gt->ndims; k++)
            if (c->var[k] == syms[i]) {
                if (widening)
                    gt->dims[k].widened = true;
                else
                    gt->dims[k].regressed = true;
            }
    sg_free((void *)syms);
    return rc;
}

/* The first condition of `rej` that fails (false or undefined) at `vals`, into the finding. */
static int blame(gate_ctx *c, sg_gate_finding *f, const side *rej, const sg_int *vals)
{
    size_t i, ns = sg_pool_nsymbols(c->pool), pass;

    /* a failing condition with a user code line first (a guard says where the model requires it), else the first */
    for (pass = 0; pass < 2; pass++)
    for (i = 0; i < rej->n; i++) {
        sg_value v;
        sg_error e2 = SG_ERROR_INIT;
        char *txt = NULL;
        if (pass == 0 && !rej->conds[i].loc)
            continue;
        if (sg_expr_eval(&v, c->pool, rej->conds[i].e, vals, ns, &e2) == 0 && v.kind == SG_VAL_BOOL && v.num)
            continue;
        if (sg_expr_print(&txt, rej->conds[i].e, SG_SYNTAX_TORCH, NULL, NULL, c->err) != 0)
            return c->err ? c->err->code : SG_ENOMEM;
        f->rejected_by = txt;
        f->cond = rej->conds[i].e;
        f->kind = dupstr(rej->conds[i].kind);
        f->source = dupstr(rej->conds[i].source);
        f->loc = rej->conds[i].loc ? dupstr(rej->conds[i].loc) : NULL;
        if (!f->kind || !f->source || (rej->conds[i].loc && !f->loc))
            return sg_error_set(c->err, SG_ENOMEM, "out of memory");
        return 0;
    }
    return 0;
}

/*
 * Is there a point `acc` accepts (with `extra`, when not NULL) that `rej` rejects (`rej` NULL:
 * any point)? Sizes are never negative; dynamic sizes (`dyn`, per variable) from 2 on. On
 * SG_SAT_YES `vals` (one per symbol of the gate's pool) is the point, re-checked by exact
 * evaluation (`*exact` false when it does not pass). Returns 0 or an error; a condition Z3 cannot
 * take is SG_SAT_UNKNOWN with the reason.
 */
static int query(gate_ctx *c, const side *acc, const side *rej, const sg_expr *extra, const bool *dyn,
                 const sg_check_options *o, const sg_runtime *rt, sg_sat_answer *ans, sg_int *vals, bool *exact,
                 char *reason, size_t cap)
{
    const sg_expr *pos[4], *neg[1], **ge = NULL;
    sg_sat_query q;
    size_t i, nw = 0, np = 0;
    int rc = 0;

    memset(&q, 0, sizeof q);
    *exact = false;
    *ans = SG_SAT_UNKNOWN;
    if (!(ge = sg__calloc(2 * c->nvars + 1, sizeof *ge)))
        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    pos[np++] = domain(c, acc);
    neg[0] = rej ? domain(c, rej) : NULL;
    /* dynamic sizes from 2 on: torch.export promises nothing for 0 and 1 (it specialises them when
     * it exports, and kernels such as a view(-1, n) may not run on them); sizes are never negative */
    for (i = 0; i < c->nvars; i++)
        ge[nw++] = sg_expr_2(c->pool, SG_GE, c->var[i], sg_expr_int(c->pool, dyn[i] ? 2 : 0));
    pos[np++] = nw ? sg_expr_apply(c->pool, SG_AND, ge, nw) : sg_expr_bool(c->pool, true);
    if (extra)
        pos[np++] = extra;
    if (!pos[0] || !pos[1] || (rej && !neg[0])) {
        rc = sg_error_set(c->err, SG_ENOMEM, "out of memory building the gate");
        goto cleanup;
    }
    q.pool = c->pool;
    q.neg = neg;
    q.nneg = rej ? 1 : 0;
    q.pos = pos;
    q.npos = np;
    q.rlimit = o->query_rlimit;
    q.contexts = rt ? rt->contexts : NULL;
    if ((rc = sg_sat_find(ans, vals, &q, reason, cap, c->err)) != 0) {
        if (rc == SG_EUNSUPPORTED) { /* a condition Z3 cannot take: not decided */
            *ans = SG_SAT_UNKNOWN;
            snprintf(reason, cap, "%.150s", c->err ? c->err->msg : "unsupported");
            rc = 0;
        }
        goto cleanup;
    }
    if (*ans == SG_SAT_UNKNOWN && !reason[0])
        snprintf(reason, cap, "the solver's budget ran out");
    if (*ans != SG_SAT_YES)
        goto cleanup;
    /* the point re-checked by exact evaluation: every accepting condition true, sizes >= 0 */
    *exact = true;
    for (i = 0; i < acc->n && *exact; i++) {
        sg_value v;
        sg_error e2 = SG_ERROR_INIT;
        if (sg_expr_eval(&v, c->pool, acc->conds[i].e, vals, sg_pool_nsymbols(c->pool), &e2) != 0
            || v.kind != SG_VAL_BOOL || !v.num)
            *exact = false;
    }
    for (i = 0; i < c->nvars; i++)
        if (vals[sg_expr_symbol_index(c->var[i])] < 0)
            *exact = false;
cleanup:
    sg_free((void *)ge);
    return rc;
}

/* One direction: a point `acc` accepts and `rej` rejects. `rej` NULL: any point `acc` accepts. */
static int direction(gate_ctx *c, sg_gate_finding *f, const side *acc, const side *rej, const sg_check_options *o,
                     const sg_runtime *rt)
{
    sg_sat_answer ans;
    sg_int *vals = sg__calloc(sg_pool_nsymbols(c->pool) + c->nvars + 1, sizeof *vals);
    bool exact;
    int rc;

    if (!vals)
        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    if ((rc = query(c, acc, rej, NULL, c->dynamic, o, rt, &ans, vals, &exact, f->reason, sizeof f->reason)) != 0)
        goto cleanup;
    if (ans == SG_SAT_UNKNOWN) {
        f->unknown = true;
        goto cleanup;
    }
    if (ans == SG_SAT_NO)
        goto cleanup;
    if (!exact) {
        f->unknown = true;
        snprintf(f->reason, sizeof f->reason, "the solver's point does not pass exact evaluation");
        goto cleanup;
    }
    f->found = true;
    if ((rc = fill_witness(c, f, acc->p, vals)) != 0)
        goto cleanup;
    if (rej && (rc = blame(c, f, rej, vals)) == 0 && !f->rejected_by) {
        f->found = false; /* no rejecting condition fails on it exactly: not a finding */
        f->unknown = true;
        snprintf(f->reason, sizeof f->reason, "the solver's point passes every condition by exact evaluation");
    }
cleanup:
    sg_free(vals);
    return rc;
}


/* A line of what changed in the signature (at most 400 bytes). */
static bool note_line(sg_gate *gt, const char *line)
{
    if (sg__grow((void **)&gt->changes, &gt->capchanges, gt->nchanges + 1, sizeof *gt->changes) != 0)
        return false;
    if (!(gt->changes[gt->nchanges] = dupstr(line)))
        return false;
    gt->nchanges++;
    return true;
}

/*
 * Compare the signatures: every user input of OLD in NEW by path, the same kind (tensor, a
 * constant torch specialised, a dynamic int) and rank, a constant with the same value (torch
 * checks it on every call: "Expected input at *args[1] to be equal to 3", 2.14's guard
 * `n == 3`), and no new one. A version that does not list its non-tensor inputs (a trace
 * without a capture record) is compared on its tensors only, with a note.
 */
static int signature(sg_gate *gt, const prog *o, const prog *n, sg_error *err)
{
    size_t i, skipped = 0;
    char line[600], first[200] = "";

    for (i = 0; i < o->ninputs; i++) {
        const prog_input *a = &o->inputs[i], *hit = input_named(n, a->path);
        line[0] = '\0';
        if (!hit) {
            if (!a->tensor && !n->nontensor_known) {
                if (!skipped++)
                    snprintf(first, sizeof first, "%.150s", a->path);
                continue;
            }
            snprintf(line, sizeof line, "input %.300s removed (or renamed)", a->path);
        } else if (a->tensor != hit->tensor)
            snprintf(line, sizeof line, "input %.300s: %s -> %s", a->path, a->tensor ? "a tensor" : "not a tensor",
                     hit->tensor ? "a tensor" : "not a tensor");
        else if (a->tensor && a->ndim != hit->ndim)
            snprintf(line, sizeof line, "input %.300s: rank %zu -> %zu", a->path, a->ndim, hit->ndim);
        else if (!a->tensor && a->value && hit->value && strcmp(a->value, "?") != 0 && strcmp(hit->value, "?") != 0
                 && strcmp(a->value, hit->value) != 0)
            snprintf(line, sizeof line, "input %.200s: constant %.80s -> %.80s (torch checks the value on every call)",
                     a->path, a->value, hit->value);
        else if (!a->tensor && !a->value && hit->value && o->nontensor_known && n->nontensor_known
                 && strcmp(hit->value, "?") != 0)
            snprintf(line, sizeof line, "input %.200s: a dynamic int -> the constant %.80s", a->path, hit->value);
        if (line[0] && !note_line(gt, line))
            goto oom;
    }
    for (i = 0; i < n->ninputs; i++) {
        const prog_input *b = &n->inputs[i];
        if (input_named(o, b->path))
            continue;
        if (!b->tensor && !o->nontensor_known) {
            if (!skipped++)
                snprintf(first, sizeof first, "%.150s", b->path);
            continue;
        }
        snprintf(line, sizeof line, "input %.300s added", b->path);
        if (!note_line(gt, line))
            goto oom;
    }
    if (skipped) {
        bool old_blind = !o->nontensor_known;
        char *note = old_blind ? gt->old_note : gt->new_note;
        char add[400];
        snprintf(add, sizeof add, "its non-tensor inputs are not recorded (a trace without a capture record): "
                 "%s's %zu non-tensor input%s (%.100s%s) not compared", old_blind ? "NEW" : "OLD", skipped,
                 skipped == 1 ? "" : "s", first, skipped > 1 ? ", ..." : "");
        if (!note[0])
            snprintf(note, 240, "%.239s", add);
    }
    gt->signature_changed = gt->nchanges > 0;
    return 0;
oom:
    return sg_error_set(err, SG_ENOMEM, "out of memory");
}

/* The sympy text of `e`, or NULL. */
static char *text_of(const sg_expr *e)
{
    char *s = NULL;
    sg_error e2 = SG_ERROR_INIT;
    if (!e || sg_expr_print(&s, e, SG_SYNTAX_SYMPY, NULL, NULL, &e2) != 0)
        return NULL;
    return s;
}

/* The variables: one per dim of OLD's tensor inputs, and the per-dim sizes of both. */
static int make_vars(gate_ctx *c, sg_gate *gt, const prog *o, const prog *n)
{
    size_t i, d, total = 0;
    char name[1200];

    for (i = 0; i < o->ninputs; i++)
        total += o->inputs[i].ndim;
    if (total > MAX_VARS)
        return sg_error_set(c->err, SG_ELIMIT, "OLD has %zu input dims (at most %d)", total, MAX_VARS);
    if (!SG_CALLOC_ALL(SG_SLOT(c->vpath, total + 1), SG_SLOT(c->vdim, total + 1), SG_SLOT(c->var, total + 1),
                       SG_SLOT(c->dynamic, total + 1), SG_SLOT(gt->dims, total + 1)))
        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    for (i = 0; i < o->ninputs; i++) {
        const prog_input *in = &o->inputs[i], *nin = input_named(n, in->path);
        for (d = 0; d < in->ndim; d++) {
            sg_gate_dim *gd = &gt->dims[gt->ndims++];
            snprintf(name, sizeof name, "L%s.size()[%zu]", in->path, d);
            c->vpath[c->nvars] = in->path;
            c->vdim[c->nvars] = d;
            c->dynamic[c->nvars] = sg_expr_kind(in->sizes[d]) != SG_INT;
            if (!(c->var[c->nvars++] = sg_expr_symbol(c->pool, name, strlen(name))))
                return sg_error_set(c->err, SG_ENOMEM, "out of memory");
            gd->path = dupstr(in->path);
            gd->dim = d;
            gd->old_size = text_of(in->sizes[d]);
            gd->new_size = nin && d < nin->ndim ? text_of(nin->sizes[d]) : NULL;
            if (!gd->path || !gd->old_size)
                return sg_error_set(c->err, SG_ENOMEM, "out of memory");
        }
    }
    return 0;
}

/*
 * The policy's side: OLD's shape conditions (static sizes, shared and derived dims), OLD's range
 * conditions on dims the policy does not range, the policy's ranges and relations (kind
 * "relation": NEW may require them, so the regression question takes them too). OLD's
 * guards_code and asserts are not part of it: the policy says what NEW must accept.
 * {"require": {"['x'].size()[0]": [1, 64], ...}, "relations": ["L['x'].size()[0] == L['y'].size()[0]"]}
 */
static int policy_side(gate_ctx *c, side *pol, const side *so, const char *json)
{
    cJSON *root = NULL;
    const cJSON *req, *rel, *it;
    bool *ranged = sg__calloc(c->nvars + 1, sizeof *ranged);
    size_t i, k;
    int rc = 0;
    char name[1200];

    if (!ranged)
        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    if ((rc = sg__json_parse(&root, json, strlen(json), (size_t)1 << 24, 64, "policy", c->err)) != 0)
        goto cleanup;
    req = sg__json_get(root, "require");
    rel = sg__json_get(root, "relations");
    if (!cJSON_IsObject(root) || (req && !cJSON_IsObject(req)) || (rel && !cJSON_IsArray(rel))) {
        rc = sg_error_set(c->err, SG_EINVALID, "policy: expected {\"require\": {DIM: [MIN, MAX]}, \"relations\": [TEXT]}");
        goto cleanup;
    }
    pol->p = so->p;
    cJSON_ArrayForEach(it, req) {
        const sg_expr *v;
        sg_int lo, hi;
        snprintf(name, sizeof name, "L%s", it->string);
        if (!(v = sg_pool_find_symbol(c->pool, name, strlen(name)))) {
            rc = sg_error_set(c->err, SG_EINVALID, "policy: '%.200s' is not an input dim of OLD (write ['x'].size()[0])",
                              it->string);
            goto cleanup;
        }
        if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2 || !sg__json_int(it->child, &lo)
            || !(sg__json_int(it->child->next, &hi) || cJSON_IsNull(it->child->next)) || lo < 0) {
            rc = sg_error_set(c->err, SG_EINVALID, "policy: '%.200s': expected [MIN, MAX] (MAX may be null)", it->string);
            goto cleanup;
        }
        for (k = 0; k < c->nvars; k++)
            ranged[k] |= c->var[k] == v;
        if (!add_cond(pol, sg_expr_2(c->pool, SG_GE, v, sg_expr_int(c->pool, lo)), "policy", NULL, "policy require %s min",
                      it->string, NULL)
            || (!cJSON_IsNull(it->child->next)
                && !add_cond(pol, sg_expr_2(c->pool, SG_LE, v, sg_expr_int(c->pool, hi)), "policy", NULL,
                             "policy require %s max", it->string, NULL))) {
            rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
            goto cleanup;
        }
    }
    cJSON_ArrayForEach(it, rel) {
        const sg_expr *e = NULL;
        const char *t = sg__json_str(it);
        sg_error pe = SG_ERROR_INIT;
        const sg_expr **syms = NULL;
        size_t n = 0;
        if (!t || sg_expr_parse(&e, c->pool, t, strlen(t), &pe) != 0 || sg_expr_sort(e) != SG_SORT_BOOL) {
            rc = sg_error_set(c->err, SG_EINVALID, "policy: relation '%.200s': %s", t ? t : "(not a string)",
                              pe.code ? pe.msg : "not a condition");
            goto cleanup;
        }
        if ((rc = sg_expr_symbols(&syms, &n, c->pool, e, c->err)) != 0)
            goto cleanup;
        for (i = 0; i < n; i++) {
            for (k = 0; k < c->nvars && c->var[k] != syms[i]; k++)
                ;
            if (k == c->nvars) {
                rc = sg_error_set(c->err, SG_EINVALID, "policy: relation '%.200s' names '%.100s', not an input dim of OLD",
                                  t, sg_expr_symbol_name(syms[i]));
                sg_free((void *)syms);
                goto cleanup;
            }
        }
        sg_free((void *)syms);
        if (!add_cond(pol, e, "relation", NULL, "policy relation %s", t, NULL)) {
            rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
            goto cleanup;
        }
    }
    for (i = 0; i < so->n; i++) {
        const cond *cd = &so->conds[i];
        bool keep = strcmp(cd->kind, "shape") == 0 || strcmp(cd->kind, "static size") == 0;
        if ((strcmp(cd->kind, "range_constraints") == 0 || strcmp(cd->kind, "dynamic_shapes") == 0 || strcmp(cd->kind, "range") == 0)) {
            const sg_expr **syms = NULL;
            size_t n = 0;
            if ((rc = sg_expr_symbols(&syms, &n, c->pool, cd->e, c->err)) != 0)
                goto cleanup;
            for (k = 0; k < n && !keep; k++) {
                size_t j;
                for (j = 0; j < c->nvars && c->var[j] != syms[k]; j++)
                    ;
                keep = j < c->nvars && !ranged[j];
            }
            sg_free((void *)syms);
        }
        if (keep && !add_cond(pol, cd->e, cd->kind, cd->loc, "%s%s", cd->source, NULL)) {
            rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
            goto cleanup;
        }
    }
cleanup:
    cJSON_Delete(root);
    sg_free(ranged);
    return rc;
}

/* ---- serving descriptors: NEW's per-dim bounds ---------------------------------------------- */

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
            if ((rc = query(c, sn, NULL, cmp(c, SG_LE, c->var[k], mid), dyn, o, rt, &ans, vals, &exact, reason, cap)) != 0)
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
    if ((rc = query(c, sn, NULL, cmp(c, SG_GE, c->var[k], SERVING_BIG), dyn, o, rt, &ans, vals, &exact, reason, cap)) != 0)
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
        if ((rc = query(c, sn, NULL, cmp(c, SG_GE, c->var[k], probe), dyn, o, rt, &ans, vals, &exact, reason, cap)) != 0)
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
        if ((rc = query(c, sn, NULL, cmp(c, SG_GE, c->var[k], mid), dyn, o, rt, &ans, vals, &exact, reason, cap)) != 0)
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
        const prog_input *pi = input_named(p, c->vpath[k]);
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
            const prog_input *pi = input_named(p, c->vpath[k]);
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
                const prog_input *p0 = input_named(p, c->vpath[k0]);
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
            if (!add_cond(&spec, all, "spec", NULL, "%s%s", "dynamic_shapes", NULL)) {
                sg_free(spec.conds);
                goto oom;
            }
            rc = query(c, &spec, sn, NULL, dyn, o, rt, &ans, vals, &exact, reason, sizeof reason);
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
                        const prog_input *pi = input_named(p, c->vpath[k]);
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
            if (!(si->leaf[d] = dupstr(leaf)))
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
static int serving(gate_ctx *c, sg_gate *gt, const side *sn, const sg_gate_input *in, const sg_check_options *o,
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
        const prog_input *pi = input_named(p, c->vpath[k]);
        dyn[k] = pi && c->vdim[k] < pi->ndim && sg_expr_kind(pi->sizes[c->vdim[k]]) != SG_INT;
    }
    if ((rc = query(c, sn, NULL, NULL, dyn, o, rt, &ans, start, &exact, reason, sizeof reason)) != 0)
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
        si->path = dupstr(pi->path);
        si->name = pi->name ? dupstr(pi->name) : sg__malloc(strlen(pi->path) + 8);
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
            const sg_expr *v = var_of(c, pi->path, d);
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
                    const sg_expr *v = var_of(c, sv->inputs[i].path, d);
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

/* ---- the gate --------------------------------------------------------------------------------- */

/* Read one version into `p`: its graph or its trace. */
static int read_version(prog *p, const sg_graph *g, const sg_trace *t, const char *which, sg_error *err)
{
    if ((g != NULL) == (t != NULL))
        return sg_error_set(err, SG_EINVALID, "sg_engine_gate_run: %s needs a program or a trace (one of them)", which);
    return g ? prog_from_graph(p, g, err) : prog_from_trace(p, t, err);
}

int sg_gate_run(sg_gate **out, const sg_gate_input *in, const sg_check_options *opts, const sg_runtime *rt,
                sg_error *err)
{
    side sp;
    sg_gate *gt = NULL;
    gate_ctx c;
    side so, sn;
    prog po, pn;
    int rc;

    *out = NULL;
    memset(&c, 0, sizeof c);
    memset(&so, 0, sizeof so);
    memset(&sn, 0, sizeof sn);
    memset(&sp, 0, sizeof sp);
    memset(&po, 0, sizeof po);
    memset(&pn, 0, sizeof pn);
    c.err = err;
    so.p = &po;
    sn.p = &pn;
    if (!(gt = sg__calloc(1, sizeof *gt)) || (in->old_name && !(gt->old_name = dupstr(in->old_name)))
        || (in->new_name && !(gt->new_name = dupstr(in->new_name)))) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory");
        goto cleanup;
    }
    if ((rc = read_version(&po, in->old_graph, in->old_trace, "OLD", err)) != 0
        || (rc = read_version(&pn, in->new_graph, in->new_trace, "NEW", err)) != 0)
        goto cleanup;
    snprintf(gt->old_note, sizeof gt->old_note, "%s", po.note);
    snprintf(gt->new_note, sizeof gt->new_note, "%s", pn.note);
    gt->old_kind = in->old_graph ? "archive" : "trace";
    gt->new_kind = in->new_graph ? "archive" : "trace";
    /* a version not read at all (a trace whose export stopped early) has no known inputs either: no
     * signature comparison */
    if ((rc = sg_pool_new(&c.pool, err)) != 0 || (!po.inputs_unknown && !pn.inputs_unknown && (rc = signature(gt, &po, &pn, err)) != 0)
        || (rc = make_vars(&c, gt, &po, &pn)) != 0 || (rc = build_side(&c, &so)) != 0)
        goto cleanup;
    if (!gt->signature_changed && (rc = build_side(&c, &sn)) != 0)
        goto cleanup;
    if (so.unread[0] || sn.unread[0] || po.unread[0] || pn.unread[0]) {
        const char *why = po.unread[0] ? po.unread : pn.unread[0] ? pn.unread : so.unread[0] ? so.unread : sn.unread;
        gt->verdict = SG_GATE_UNKNOWN;
        snprintf(gt->reason, sizeof gt->reason, "%s: %.180s", po.unread[0] || (!pn.unread[0] && so.unread[0]) ? "OLD" : "NEW",
                 why);
        /* a version that is not read at all (a trace whose export stopped early): its inputs are
         * not known either, so neither is a signature change */
        if (!gt->signature_changed || po.unread[0] || pn.unread[0])
            goto done;
    }
    if (gt->signature_changed) {
        /* any shape OLD accepts: NEW cannot be called as OLD was */
        if ((rc = direction(&c, &gt->regression, &so, NULL, opts, rt)) != 0)
            goto cleanup;
        if (gt->regression.found) {
            gt->regression.kind = dupstr("signature");
            gt->regression.source = dupstr(gt->changes[0]);
            if (!gt->regression.kind || !gt->regression.source) {
                rc = sg_error_set(err, SG_ENOMEM, "out of memory");
                goto cleanup;
            }
        }
        gt->verdict = SG_GATE_REGRESSION;
        if (in->serving)
            snprintf(gt->serving.reason, sizeof gt->serving.reason, "the signature changed");
        gt->has_serving = in->serving;
        goto done;
    }
    /* the widening against OLD as it is; the regression and the policy with the relations the
     * policy lets NEW require (a shape outside them is not one NEW must accept) */
    if ((rc = direction(&c, &gt->widening, &sn, &so, opts, rt)) != 0)
        goto cleanup;
    if (in->policy) {
        size_t i;
        gt->has_policy = true;
        if (sg_gate__policy_is_python(in->policy)) {
            char *js = NULL;
            if ((rc = sg_gate__policy_from_python(&js, in->policy, err)) == 0)
                rc = policy_side(&c, &sp, &so, js);
            sg_free(js);
        } else
            rc = policy_side(&c, &sp, &so, in->policy);
        if (rc != 0)
            goto cleanup;
        for (i = 0; i < sp.n; i++)
            if (strcmp(sp.conds[i].kind, "relation") == 0
                && !add_cond(&so, sp.conds[i].e, "relation", NULL, "%s%s", sp.conds[i].source, NULL)) {
                rc = sg_error_set(err, SG_ENOMEM, "out of memory");
                goto cleanup;
            }
        if ((rc = direction(&c, &gt->policy, &sp, &sn, opts, rt)) != 0)
            goto cleanup;
    }
    if ((rc = direction(&c, &gt->regression, &so, &sn, opts, rt)) != 0)
        goto cleanup;
    if ((gt->regression.cond && (rc = flag_dims(&c, gt, gt->regression.cond, false)) != 0)
        || (gt->widening.cond && (rc = flag_dims(&c, gt, gt->widening.cond, true)) != 0)
        || (gt->policy.cond && (rc = flag_dims(&c, gt, gt->policy.cond, false)) != 0))
        goto cleanup;
    if (gt->regression.found || gt->policy.found)
        gt->verdict = SG_GATE_REGRESSION;
    else if (gt->policy.unknown) {
        gt->verdict = SG_GATE_UNKNOWN;
        snprintf(gt->reason, sizeof gt->reason, "policy query: %.160s", gt->policy.reason);
    }
    else if (gt->regression.unknown) {
        gt->verdict = SG_GATE_UNKNOWN;
        snprintf(gt->reason, sizeof gt->reason, "regression query: %.160s", gt->regression.reason);
    } else
        gt->verdict = SG_GATE_PASS;
    if (in->serving && (rc = serving(&c, gt, &sn, in, opts, rt)) != 0)
        goto cleanup;
done:
    if (in->serving && !gt->has_serving) {
        gt->has_serving = true;
        if (!gt->serving.reason[0])
            snprintf(gt->serving.reason, sizeof gt->serving.reason, "%.180s", gt->reason);
    }
    gt->regression.cond = gt->widening.cond = gt->policy.cond = NULL; /* they live in the pool freed below */
    *out = gt;
    gt = NULL;
    rc = 0;
cleanup:
    sg_gate_free(gt);
    SG_FREE_ALL(so.map, so.conds, sn.map, sn.conds, sp.conds);
    sg_free((void *)c.vpath);
    sg_free(c.vdim);
    sg_free((void *)c.var);
    sg_free(c.dynamic);
    sg_pool_free(c.pool);
    prog_dispose(&po);
    prog_dispose(&pn);
    return rc;
}
