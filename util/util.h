/*
 * util.h - library-internal helpers shared by every module: the allocator
 * (with the failure-injection hook of common.h), and a bounded string builder.
 * Not installed; never included by cli/ or service/.
 */
#ifndef SG_UTIL_H
#define SG_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "shapegate/common.h"
#include "shapegate/error.h"
#include "util/int.h"

#if defined(__GNUC__) || defined(__clang__)
#define SG_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define SG_PRINTF(fmt, args)
#endif

/*
 * Record an error: sets `err->code = code`, `err->col = 0` and formats the
 * message. Does nothing when `err` is NULL. Returns `code`, so that
 * `return sg_error_set(err, SG_EINVALID, "...")` reads naturally.
 */
int sg_error_set(sg_error *err, int code, const char *fmt, ...) SG_PRINTF(3, 4);

/* As sg_error_set(), and also records the column `col`. */
int sg_error_set_at(sg_error *err, int code, int col, const char *fmt, ...) SG_PRINTF(4, 5);

/*
 * The checks a public entry point `fn` starts with: an output to write (`*out` is then cleared),
 * else SG_EINVALID "FN: no output"; then its inputs (`have`), else SG_EINVALID with `msg`.
 * Returns from the calling function; `err` is its sg_error.
 */
#define SG_ENTRY_CHECK(fn, out, have, msg, err)                                                        \
    do {                                                                                               \
        if (!(out))                                                                                    \
            return sg_error_set((err), SG_EINVALID, "%s: no output", (fn));                            \
        *(out) = NULL;                                                                                 \
        if (!(have))                                                                                   \
            return sg_error_set((err), SG_EINVALID, "%s", (msg));                                      \
    } while (0)

/*
 * Allocation-failure injection for tests (docs/robustness.md): after `n`
 * more successful allocations of the calling thread through shapegate's
 * allocator, every further one of that thread fails until this is called
 * again; `n < 0` turns injection off (the default). Per thread, so a test
 * injecting on one thread never disturbs another.
 */
void sg_alloc_fail_after(long n);

/* Number of allocations the calling thread made through shapegate's allocator. */
unsigned long sg_alloc_count(void);

/* Allocation through these can be made to fail by sg_alloc_fail_after(). */
void *sg__malloc(size_t n);
void *sg__calloc(size_t count, size_t size);
void *sg__realloc(void *p, size_t n);
char *sg__strndup(const char *s, size_t n);
/* A copy of `s`; NULL when `s` is NULL or out of memory. */
char *sg__strdup(const char *s);

/* Free each of the `n` pointers of `arr` (an array of owned allocations: strings, records),
 * then `arr` itself. NULL-safe (`arr` and its entries). */
void sg__free_array(void *arr, size_t n);

/* sg_free() each of the `n` pointers of `ptrs` (NULL entries too). SG_FREE_ALL(a, b, ...) is the
 * dispose step of a record owning several plain arrays: SG_FREE_ALL(p->x, p->y, p->z). */
void sg__free_each(void *const *ptrs, size_t n);
#define SG_FREE_ALL(...) \
    sg__free_each((void *const[]){__VA_ARGS__}, sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

/* Zeroed arrays for several pointers at once: SG_CALLOC_ALL(SG_SLOT(p->a, n + 1), SG_SLOT(p->b, n + 1))
 * sets each `*at` to sg__calloc(count, size) and is true when every one was allocated; otherwise
 * the others are left allocated for the caller's cleanup. One call, so no pointer can be left out
 * of the NULL check. */
typedef struct sg__slot {
    void **at;
    size_t count, size;
} sg__slot;
#define SG_SLOT(ptr, n) {(void **)&(ptr), (n), sizeof *(ptr)}
bool sg__calloc_slots(const sg__slot *slots, size_t n);
#define SG_CALLOC_ALL(...) \
    sg__calloc_slots((const sg__slot[]){__VA_ARGS__}, sizeof((const sg__slot[]){__VA_ARGS__}) / sizeof(sg__slot))

/* Grow `*arr` (of `*cap` elements of `elem` bytes) to hold at least `need`.
 * Returns 0 or SG_ENOMEM (then `*arr` is unchanged). */
int sg__grow(void **arr, size_t *cap, size_t need, size_t elem);
/* sg__grow, the new elements zeroed (marks and tables indexed by an id that grows). */
int sg__grow_zeroed(void **arr, size_t *cap, size_t need, size_t elem);

/* twin[i] for i < n: whether key[i] (three sizes) is also another entry's key - the components
 * whose sizes no other has, which no other can be isomorphic to. False: out of memory. */
bool sg__mark_twins(const size_t (*key)[3], size_t n, bool *twin);

/* Append one zeroed element to `*arr` (`*n` elements of `elem` bytes, room for `*cap`):
 * returns it (and *n grows by one), or NULL when out of memory (nothing changed). */
void *sg__push(void **arr, size_t *cap, size_t *n, size_t elem);

/*
 * sg_buf: a growable NUL-terminated byte string with a hard maximum length.
 * Appends fail with SG_ELIMIT past `max` and SG_ENOMEM when out of memory;
 * after a failure the buffer keeps its earlier content and later appends
 * fail with the same code (check once at the end).
 */
typedef struct sg_buf {
    char *data;
    size_t len;
    size_t cap;
    size_t max;
    int failed;
} sg_buf;

/*
 * `fmt` with `ap` formatted: into `small` (`cap` bytes) when it fits, else into a new
 * sg__malloc'd string; *out is the result (sg_free it when it is not `small`), *len its
 * length. Returns 0, SG_ERROR (a format error) or SG_ENOMEM; *out is NULL then. `ap` is
 * read through a copy, so the caller still owns (and va_ends) it.
 */
int sg__vformat(char *small, size_t cap, char **out, size_t *len, const char *fmt, va_list ap);

void sg_buf_init(sg_buf *b, size_t max);
void sg_buf_dispose(sg_buf *b);
int sg_buf_append(sg_buf *b, const char *s, size_t n);
int sg_buf_puts(sg_buf *b, const char *s);
int sg_buf_putc(sg_buf *b, char c);
/* n in decimal, then `end` (no printf: for writers that append many numbers). */
int sg_buf_put_size(sg_buf *b, size_t n, char end);
/* v in decimal, then `end`; a bound as its value or "-" / "+" for an infinite one. */
int sg_buf_put_int(sg_buf *b, sg_int v, char end);
int sg_buf_put_bound(sg_buf *b, sg_bound x, char end);
int sg_buf_printf(sg_buf *b, const char *fmt, ...) SG_PRINTF(2, 3);
/* Hand the string over (caller frees with sg_free()); the buffer is left empty. */
char *sg_buf_take(sg_buf *b);
/* Hand the string over into `*out` (0), or on a failed buffer dispose of it and
 * report "WHAT longer than MAX bytes" (SG_ELIMIT) or SG_ENOMEM; `*out` NULL then. */
int sg_buf_finish(sg_buf *b, char **out, const char *what, sg_error *err);

/* Make `err->msg` one line: control characters (from hostile names and keys) become '?'.
 * NULL-safe. */
void sg__error_one_line(sg_error *err);

/* The status a reader of files reports when expression text in its input fails to parse with
 * `rc`: what sg_expr_parse calls undefined (`nan`, `zoo`, a constant 1/0) is malformed input,
 * SG_EINVALID; a literal beyond 128 bits is over a limit, SG_ELIMIT; other codes unchanged. */
int sg__input_code(int rc);

#endif
