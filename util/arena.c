/*
 * arena.c - the bump allocator of util/arena.h.
 */
#include <stdint.h>

#include "util/arena.h"
#include "util/util.h"

#define ARENA_CHUNK ((size_t)64 << 10)

struct sg_arena_chunk {
    struct sg_arena_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

void *sg_arena_alloc(sg_arena *a, size_t n)
{
    struct sg_arena_chunk *c = a->chunks;
    if (n > SIZE_MAX - 15)
        return NULL;
    n = (n + 15) & ~(size_t)15;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
        if (cap > SIZE_MAX - sizeof *c || !(c = sg__malloc(sizeof *c + cap)))
            return NULL;
        c->next = a->chunks;
        c->used = 0;
        c->cap = cap;
        a->chunks = c;
    }
    c->used += n;
    return c->data + c->used - n;
}

void sg_arena_dispose(sg_arena *a)
{
    struct sg_arena_chunk *c, *next;
    if (!a)
        return;
    for (c = a->chunks; c; c = next) {
        next = c->next;
        sg_free(c);
    }
    a->chunks = NULL;
}
