/*
 * gate_prog.c - one version of the release gate read into one model
 * (analysis/gate_ctx.h): an exported program (an sg_graph) or a trace, as
 * the program its loaded module is: its tensor inputs with their sizes
 * (expressions over the version's own symbols) and the conditions its
 * accepted domain is made of, each with its kind, where it is ("source")
 * and the user code line it came from when the input records one. What a
 * version accepts is said in analysis/gate.c's opening comment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gate_ctx.h"
#include "util/json.h"

void sg_gate__prog_dispose(prog *p)
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
    if (loc && !(c->loc = sg__strdup(loc)))
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
int sg_gate__prog_from_graph(prog *p, const sg_graph *g, sg_error *err)
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
    /* the kernels' shape conditions (graph/kernels.c): the module raises where one is false */
    for (i = 0; i < sg_graph_kernel_check_count(g); i++) {
        const sg_graph_kernel_check *kc = sg_graph_kernel_check_at(g, i);
        user_frame_of_stack(loc, sizeof loc, kc->stack_trace);
        if (!prog_add_cond(p, kc->expr, 0, 0, "kernel", loc[0] ? loc : NULL, true, "kernel %s%s", kc->what, NULL))
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
    char *txt = cJSON_PrintUnformatted(j), *out = txt ? sg__strdup(txt) : NULL;
    cJSON_free(txt);
    return out;
}

/* The input of `p` at `path`, or NULL. */
const prog_input *sg_gate__input_named(const prog *p, const char *path)
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
int sg_gate__prog_from_trace(prog *p, const sg_trace *t, sg_error *err)
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
            if (!path || sg__json_get(it, "tensor") || sg_gate__input_named(p, path))
                continue;
            if (!(pi = prog_add_input(p)) || !(pi->path = prog_keep(p, sg__strdup(path))))
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
                if (!(pi->value = prog_keep(p, cJSON_IsString(v) && sg__json_get(it, "float") ? sg__strdup("?") : json_text(v))))
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
