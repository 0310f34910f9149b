/*
 * arena.h - sg_arena, a bump allocator for records that are freed all at
 * once: a pool's expression nodes and names (expr/expr.c), a term store's
 * terms' arguments and texts (solver/term.c). Library-internal, like util.h.
 *
 * Memory comes in chunks of 64 KiB (or one item's size when larger), carved
 * front to back in 16-byte aligned pieces; nothing is freed before
 * sg_arena_dispose(). Zero-initialised (SG_ARENA_INIT) an arena is empty and
 * valid. An arena belongs to one thread at a time.
 */
#ifndef SG_UTIL_ARENA_H
#define SG_UTIL_ARENA_H

#include <stddef.h>

struct sg_arena_chunk;

typedef struct sg_arena {
    struct sg_arena_chunk *chunks; /* the newest first */
} sg_arena;

#define SG_ARENA_INIT {NULL}

/* `n` bytes, 16-byte aligned, valid until sg_arena_dispose(); NULL when out of memory. */
void *sg_arena_alloc(sg_arena *a, size_t n);

/* Frees every chunk; the arena is empty again. NULL-safe. */
void sg_arena_dispose(sg_arena *a);

#endif
