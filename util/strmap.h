/*
 * strmap.h - sg_strmap, a map from borrowed strings to indices (open
 * addressing, FNV-1a), for the lookups by name that would otherwise scan a
 * list per item (a Dim's first use, the inputs a fix line names, one line per
 * name). Library-internal, like util.h.
 *
 * The map borrows its keys: each must outlive the map and not change. It owns
 * only its table. Zero-initialised (SG_STRMAP_INIT) it is empty and valid.
 */
#ifndef SG_UTIL_STRMAP_H
#define SG_UTIL_STRMAP_H

#include <stddef.h>

typedef struct sg_strmap {
    const char **key; /* cap slots; NULL: free */
    size_t *val;
    size_t cap, n;
} sg_strmap;

#define SG_STRMAP_INIT {NULL, NULL, 0, 0}

/* Frees the table; the map is empty again. NULL-safe. */
void sg_strmap_dispose(sg_strmap *m);

/* The value stored for `key`, or SIZE_MAX when it has none. */
size_t sg_strmap_get(const sg_strmap *m, const char *key);

/* The value slot of `key`, added with SIZE_MAX when new (the map grows: earlier slot pointers
 * are then invalid); NULL when out of memory (the map is unchanged). */
size_t *sg_strmap_slot(sg_strmap *m, const char *key);

#endif
