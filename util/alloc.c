/*
 * alloc.c - shapegate's allocator: malloc/calloc/realloc behind a per-thread
 * counter, so tests can make the N-th allocation of their thread fail
 * (sg_alloc_fail_after, util/alloc.h) and check that every library call then
 * reports SG_ENOMEM and leaks nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Per thread: a test that injects failures on one thread never disturbs another (the engine's
 * threads, a service's workers), and counting needs no lock. */
static _Thread_local long fail_after = -1;      /* allocations left before failing; <0: never */
static _Thread_local unsigned long alloc_count; /* successful and failed attempts */

void sg_alloc_fail_after(long n) { fail_after = n; }

unsigned long sg_alloc_count(void) { return alloc_count; }

/* True when this allocation must fail. */
static bool inject_failure(void)
{
    alloc_count++;
    if (fail_after < 0)
        return false;
    if (fail_after == 0)
        return true;
    fail_after--;
    return false;
}

void *sg__malloc(size_t n)
{
    if (inject_failure())
        return NULL;
    return malloc(n ? n : 1);
}

void *sg__calloc(size_t count, size_t size)
{
    if (inject_failure())
        return NULL;
    return calloc(count ? count : 1, size ? size : 1);
}

void *sg__realloc(void *p, size_t n)
{
    if (inject_failure())
        return NULL;
    return realloc(p, n ? n : 1);
}

char *sg__strndup(const char *s, size_t n)
{
    char *r = sg__malloc(n + 1);
    if (!r)
        return NULL;
    memcpy(r, s, n);
    r[n] = '\0';
    return r;
}

char *sg__strdup(const char *s) { return s ? sg__strndup(s, strlen(s)) : NULL; }

void sg_free(void *p) { free(p); }

void sg__free_array(void *arr, size_t n)
{
    void **a = arr;
    size_t i;
    for (i = 0; a && i < n; i++)
        sg_free(a[i]);
    sg_free(a);
}

bool sg__calloc_slots(const sg__slot *slots, size_t n)
{
    size_t i;
    bool ok = true;
    for (i = 0; i < n; i++)
        ok &= (*slots[i].at = sg__calloc(slots[i].count, slots[i].size)) != NULL;
    return ok;
}

void sg__free_each(void *const *ptrs, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        sg_free(ptrs[i]);
}

void *sg__push(void **arr, size_t *cap, size_t *n, size_t elem)
{
    char *x;
    if (sg__grow(arr, cap, *n + 1, elem))
        return NULL;
    x = (char *)*arr + *n * elem;
    memset(x, 0, elem);
    (*n)++;
    return x;
}

int sg__grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    size_t ncap;
    void *p;

    if (need <= *cap)
        return 0;
    ncap = *cap ? *cap : 8;
    while (ncap < need) {
        if (ncap > ((size_t)-1 / 2) / elem)
            return SG_ENOMEM;
        ncap *= 2;
    }
    p = sg__realloc(*arr, ncap * elem);
    if (!p)
        return SG_ENOMEM;
    *arr = p;
    *cap = ncap;
    return 0;
}

int sg__grow_zeroed(void **arr, size_t *cap, size_t need, size_t elem)
{
    size_t old = *cap;
    int rc = sg__grow(arr, cap, need, elem);
    if (!rc && *cap > old)
        memset((char *)*arr + old * elem, 0, (*cap - old) * elem);
    return rc;
}

typedef struct twin_key {
    size_t k[3], i;
} twin_key;

static int cmp_twin(const void *a, const void *b)
{
    const twin_key *x = a, *y = b;
    int j;
    for (j = 0; j < 3; j++)
        if (x->k[j] != y->k[j])
            return x->k[j] < y->k[j] ? -1 : 1;
    return 0;
}

bool sg__mark_twins(const size_t (*key)[3], size_t n, bool *twin)
{
    twin_key *t = sg__malloc((n + 1) * sizeof *t);
    size_t i, j;
    if (!t)
        return false;
    for (i = 0; i < n; i++) {
        memcpy(t[i].k, key[i], sizeof t[i].k);
        t[i].i = i;
        twin[i] = false;
    }
    qsort(t, n, sizeof *t, cmp_twin);
    for (i = 0; i < n; i = j) {
        for (j = i + 1; j < n && cmp_twin(&t[i], &t[j]) == 0; j++)
            ;
        if (j - i > 1)
            for (; i < j; i++)
                twin[t[i].i] = true;
    }
    sg_free(t);
    return true;
}
