/*
 * trace_impl.h - the inside of sg_trace, shared by its two adapters:
 * trace/trace.c (the struct, accessors, the capture-folder adapter) and
 * trace/adapters/json.c (the single-file JSON trace, read and written).
 * Solver-internal.
 *
 * A trace owns one expression pool, one bump arena for every string and small
 * array it hands out, and three growable arrays (symbols, guards, inputs).
 * Builders below add to them; they return NULL / an error code on allocation
 * failure and leave the trace safe to free.
 */
#ifndef SG_TRACE_IMPL_H
#define SG_TRACE_IMPL_H

#include <stdatomic.h>
#include <stdint.h>

#include "trace/trace.h"
#include <cjson/cJSON.h>

#include "trace/edit.h"
#include "util/util.h"

typedef struct sg_trace_block sg_trace_block;
typedef struct sg_trace_parsed sg_trace_parsed;

struct sg_trace {
    atomic_uint refs;               /* holders: the caller, and every report made from it */
    sg_trace *origin;               /* a copy (sg_trace_clone): the trace whose arena and pool it shares */
    sg_pool *pool;                  /* a copy: an overlay of the origin's pool */
    sg_trace_block *mem;            /* arena: strings and small arrays */
    const char *name;               /* the path it was loaded from, or NULL */
    const char *torch_version;      /* never NULL ("" when unknown) */
    bool strict;
    bool has_shape_env;
    bool has_flat_spec;
    bool spec_overridden;           /* the spec was replaced after tracing (sg_trace_with_dims, typed edits, ...) */
    bool sizes_from_min;            /* an archive's: its module checks every size, 0 and 1 too, so Dims are
                                     * analysed from their declared min (else from 2: torch specialises 0/1) */
    const char *dynamic_shapes_json; /* compact JSON or NULL */
    const char *inputs_json;         /* compact JSON or NULL */
    const char *torch_fixes_json;    /* torch's "Suggested fixes" lines, a JSON array, or NULL */
    const char *torch_error;         /* the exception torch raised ("torch._dynamo.exc.UserError"), or NULL */
    const char *torch_error_message; /* the first line of its message, or NULL */
    sg_symbol_info *symbols;
    size_t nsymbols, csymbols;
    sg_guard *guards;
    size_t nguards, cguards;
    sg_input_dim *inputs;
    size_t ninputs, cinputs;
    uint32_t *sym_map;               /* pool symbol index -> 1 + index into symbols; 0: none */
    size_t nsym_map;
    _Atomic(sg_trace_parsed *) parsed; /* dynamic_shapes_json and inputs_json parsed, at first use */
};

/* The state of one JSON read (a capture folder's files or a JSON trace): errors read
 * "<what>: <field>: <message>". */
typedef struct sg_trace__reader {
    sg_trace *t;
    sg_error *err;
    const char *what;  /* the file or text being read */
    char field[192];   /* the field being read now */
} sg_trace__reader;

/* Record `code` with "<what>: <field>: <message>"; returns `code`. */
int sg_trace__fail(sg_trace__reader *R, int code, const char *fmt, ...) SG_PRINTF(3, 4);
int sg_trace__oom(sg_trace__reader *R);
/* Set the current field name with printf formatting. */
void sg_trace__set_field(sg_trace__reader *R, const char *fmt, ...) SG_PRINTF(2, 3);

/* Take one more reference to `t` (released by sg_trace_free); returns `t`. NULL-safe.
 * A trace is immutable once loaded, so holders on several threads only read it. */
sg_trace *sg_trace__ref(const sg_trace *t);

/* A new empty trace with its pool. Returns 0 or SG_ENOMEM. */
int sg_trace__new(sg_trace **out, sg_error *err);

/* `n` bytes from the arena, zeroed and aligned for any type; NULL when out of memory. */
void *sg_trace__alloc(sg_trace *t, size_t n);

/* A copy of `s` (`n` bytes, NUL added) in the arena; NULL when out of memory. */
char *sg_trace__strndup(sg_trace *t, const char *s, size_t n);

/* A copy of NUL-terminated `s` in the arena, or NULL when `s` is NULL or out of memory. */
char *sg_trace__strdup(sg_trace *t, const char *s);

/*
 * The info record of symbol `sym`, added (range -int_oo..int_oo, nothing else
 * known) when the trace has none yet; `*added` (may be NULL) tells which.
 * The pointer is valid until the next symbol is added. NULL when out of memory.
 */
sg_symbol_info *sg_trace__symbol(sg_trace *t, const sg_expr *sym, bool *added);

/* A new zeroed guard / input dim at the end; NULL when out of memory. Valid until the next add. */
sg_guard *sg_trace__add_guard(sg_trace *t);
sg_input_dim *sg_trace__add_input(sg_trace *t);

/*
 * Parse expression `text` into the trace's pool. On failure the message is
 * "<what>: <field>: column N: <parser message>" and the parser's code is kept
 * (SG_EINVALID, SG_EUNSUPPORTED, SG_ELIMIT, SG_EUNDEFINED, SG_EOVERFLOW, SG_ENOMEM).
 * With `want_bool`, an expression that is not boolean is SG_EINVALID.
 */
int sg_trace__parse(const sg_expr **out, sg_trace *t, const char *text, bool want_bool,
                    const char *what, const char *field, sg_error *err);

/*
 * The symbol named `name`: `name` must parse to a bare symbol of that name
 * (so that it prints and re-parses to itself). SG_EINVALID otherwise, with the
 * message "<what>: <field>: '<name>' is not a symbol name".
 */
int sg_trace__symbol_named(const sg_expr **out, sg_trace *t, const char *name, const char *what,
                           const char *field, sg_error *err);

/* Check that derived expression `e` (read from `text`, the field `label`) is A*ROOT + B with
 * integers A >= 1 and B, ROOT the symbol named `root_name` (torch's derived Dims): 0, or the
 * failure recorded through R (SG_EINVALID, SG_ENOMEM). */
int sg_trace__check_derived(sg_trace__reader *R, const sg_expr *e, const char *label, const char *text,
                            const char *root_name);

/* The pieces both trace readers (the v1 JSON reader, the TORCH_TRACE adapter) build a trace
 * from, with one set of checks and messages ("<what>: <field>.<part>: ..."):
 * - a symbol's replacement `text` parsed into `*out`: a number, not a boolean;
 * - a guard of `origin` parsed from `text` (an arena string, kept as the guard's text) and
 *   added; `*out` (may be NULL) is the new guard, valid until the next add;
 * - input dim `d`'s value parsed from `text`: an integer expression;
 * - any integer expression from `text` into `*out`, the parse naming <field>.<key> (key NULL:
 *   the reader's field), the sort check "<key>: '<text>' is not an integer expression". */
int sg_trace__read_replacement(sg_trace__reader *R, const char *text, const sg_expr **out);
int sg_trace__read_guard(sg_trace__reader *R, const char *text, sg_guard_origin origin, sg_guard **out);
int sg_trace__read_value(sg_trace__reader *R, sg_input_dim *d, const char *text);
int sg_trace__read_int_expr(sg_trace__reader *R, const sg_expr **out, const char *text, const char *key);
/* Symbol `info->sym` (named `name`) added with everything `info` says of it: its range, hint,
 * flags, replacement and sources (arena). SG_EINVALID when the trace lists it already. */
int sg_trace__add_symbol(sg_trace__reader *R, const sg_symbol_info *info, const char *name);

/* sg_trace_load_json() with `what` naming the text in messages (a file name). */
int sg_trace__load_json_named(sg_trace **out, const char *json, size_t len, const char *what,
                              sg_error *err);

/* ---- copies and typed spec edits (trace/edit.c; the edits themselves in trace/edit.h) ---- */

/* A structured copy of `t` (see sg_trace_clone); mutable until it is handed out. */
int sg_trace__clone(sg_trace **out, const sg_trace *t, sg_error *err);
/* SG_EINVALID (or `code`) with "dim override 'TEXT': <message>"; returns `code`. */
int sg_trace__edit_fail(sg_error *err, int code, const char *text, const char *fmt, ...) SG_PRINTF(4, 5);
/* Whether `name[0..len)` can be a Dim name: an identifier that reads back as a bare symbol
 * (parsed in `pool`, an overlay); `text` names the edit in the message. */
int sg_trace__check_dim_name(sg_pool *pool, const char *text, const char *name, size_t len, sg_error *err);
/* Edit `i` against the earlier ones of `e`: one dim set twice, or one Dim given two ranges. */
int sg_trace__edit_conflict(const sg_trace *t, const sg_spec_edits *e, size_t i, sg_error *err);

/* Replace the whole spec of `t` (a trace being built, or a fresh copy) by structured JSON,
 * all or nothing (sg_trace_with_spec_json does it on a copy). */
int sg_trace__set_spec_json(sg_trace *t, const char *json, size_t len, const char *what, sg_error *err);

/* ---- the readers' shared pieces (trace/trace.c) ---- */

/* A range bound: an integer, "oo" / "-oo" (also "int_oo" / "-int_oo"). Returns 1 for any
 * other string (left to the caller), else 0 or the failure recorded through R. */
int sg_trace__read_bound(sg_trace__reader *R, sg_bound *b, const cJSON *j, const char *key);
/* Member `key` of `obj` into *out when `is` (cJSON_IsObject, cJSON_IsArray, ...) accepts it;
 * absent or null: *out NULL and 0. Otherwise the error "expected <expected>", after "<key>: "
 * when `name_key` (a reader whose field does not name the member yet). */
int sg_trace__get_member(sg_trace__reader *R, const cJSON **out, const cJSON *obj, const char *key,
                         cJSON_bool (*is)(const cJSON *), const char *expected, bool name_key);
/* A compact copy of JSON member `j` in the arena (`*out` NULL for absent / null). */
int sg_trace__keep_json(sg_trace__reader *R, const char **out, const cJSON *j);

/*
 * dynamic_shapes_json and inputs_json of `t` parsed (sg__json_doc_parse, util/json.h: big integers
 * are Raw nodes, read them with sg__json_int; each NULL when absent or not JSON), read-only. The first call on a trace keeps them with it (any thread may
 * ask, the first to finish installs them), so that the spec's validation - run by the check and
 * again by torch's message - parses them once per trace, not twice per call. Returns a handle to
 * give back to sg_trace__parsed_release (NULL-safe), NULL when out of memory; the trees live as
 * long as the handle. A trace whose texts were replaced after the first call gets trees of its
 * own, freed at the release.
 */
typedef struct sg_trace_parsed {
    const char *spec_text, *inputs_text; /* the texts parsed */
    const cJSON *spec, *inputs;          /* their trees, in the documents below */
    struct sg__json_doc *spec_doc, *inputs_doc;
    bool kept;                           /* the trace's own (freed with it) */
} sg_trace_parsed;
const sg_trace_parsed *sg_trace__parsed(const sg_trace *t);
void sg_trace__parsed_release(const sg_trace_parsed *h);
/* `fmt` formatted into a new string in the arena; NULL when out of memory. */
const char *sg_trace__printf(sg_trace *t, const char *fmt, ...) SG_PRINTF(2, 3);

/* ---- pytree paths (trace/paths.c) ---- */

/* One component of a pytree path at `p`: "['key']" (`*key`, `*keylen`; returns 1), "[N]"
 * (`*index`; returns 2); 0 at the end of the path, -1 for anything else; `*next` past it. */
int sg_trace__path_component(const char *p, const char **key, size_t *keylen, long *index,
                             const char **next);
/* "x (2 dims), y (1 dim)": the tensor inputs, cut short past about 120 bytes. */
void sg_trace__put_input_list(sg_buf *b, const sg_input_dim *in, size_t n);
/* The first input dim of the tensor at `path[0..len)` (bracketed exactly, or dotted) and its
 * number of dims; false when there is none. */
bool sg_trace__find_tensor(const sg_input_dim *in, size_t n, const char *path, size_t len, size_t *first,
                           size_t *rank);
/* Whether some tensor's path is `path[0..len)` or lies below it. */
bool sg_trace__path_known(const sg_input_dim *in, size_t n, const char *path, size_t len);
/* A non-negative decimal integer `s[0..len)`; false when it is not one or too large. */
bool sg_trace__parse_nat(const char *s, size_t len, sg_int *out);
/* Whether `s[0..len)` is an identifier. */
bool sg_trace__is_ident(const char *s, size_t len);

/* ---- per-dim specs (trace/spec.c) ---- */

/* The spec of one dim from a structured leaf (a dynamic_shapes_flat[].spec value). */
int sg_trace__read_spec(sg_trace__reader *R, sg_input_dim *d, const cJSON *spec);
/* Forget the spec of `d` (kind UNSET); where it is and what torch traced stay. */
void sg_trace__clear_spec(sg_input_dim *d);
/* Copy the spec fields of `from` into `to`, keeping `to`'s place and traced value. */
void sg_trace__copy_spec(sg_input_dim *to, const sg_input_dim *from);
/* `e` as A*root + B with integers A, B; false otherwise or on overflow. */
bool sg_trace__affine_in(const sg_expr *e, const sg_expr *root, sg_int *a, sg_int *b);
/* Recompute the derived bounds of DERIVED `d` from its root's bounds, as torch does. */
int sg_trace__derive_bounds(sg_trace *t, sg_input_dim *d, sg_error *err);
/* The spec of `t` replaced after tracing: the per-dim specs `in` (a working copy of its t->ninputs
 * dims) and its structured dynamic_shapes `json` (arena, or NULL); `flat`: the specs are per dim. */
void sg_trace__install_spec(sg_trace *t, const sg_input_dim *in, bool flat, const char *json);
/* The structured dynamic_shapes of the per-dim specs `in` (n of them), into `*out` (arena). */
int sg_trace__rebuild_spec_json(sg_trace *t, const sg_input_dim *in, size_t n, const char **out,
                                sg_error *err);

#endif
