/*
 * strmap.c - sg_strmap (util/strmap.h): open addressing with linear probing,
 * at most half full, doubled when it would be more.
 */
#include <stdint.h>
#include <string.h>

#include "util/strmap.h"
#include "util/util.h"

static size_t hash_key(const char *s)
{
    size_t h = (size_t)1469598103934665603u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * (size_t)1099511628211u;
    return h;
}

/* The slot of `key` in a table of `cap` slots: its own, or the free one where it belongs. */
static size_t find(const char *const *keys, size_t cap, const char *key)
{
    size_t i = hash_key(key) & (cap - 1);
    while (keys[i] && strcmp(keys[i], key) != 0)
        i = (i + 1) & (cap - 1);
    return i;
}

void sg_strmap_dispose(sg_strmap *m)
{
    if (!m)
        return;
    sg_free((void *)m->key);
    sg_free(m->val);
    memset(m, 0, sizeof *m);
}

size_t sg_strmap_get(const sg_strmap *m, const char *key)
{
    size_t i;
    if (!m->cap)
        return SIZE_MAX;
    i = find(m->key, m->cap, key);
    return m->key[i] ? m->val[i] : SIZE_MAX;
}

/* Double the table (or make its first, of 16 slots). 0 or SG_ENOMEM (the map unchanged). */
static int grow(sg_strmap *m)
{
    size_t cap = m->cap ? 2 * m->cap : 16, i;
    const char **key = sg__calloc(cap, sizeof *key);
    size_t *val = sg__malloc(cap * sizeof *val);
    if (!key || !val) {
        sg_free((void *)key);
        sg_free(val);
        return SG_ENOMEM;
    }
    for (i = 0; i < m->cap; i++)
        if (m->key[i]) {
            size_t j = find(key, cap, m->key[i]);
            key[j] = m->key[i];
            val[j] = m->val[i];
        }
    sg_free((void *)m->key);
    sg_free(m->val);
    m->key = key;
    m->val = val;
    m->cap = cap;
    return 0;
}

size_t *sg_strmap_slot(sg_strmap *m, const char *key)
{
    size_t i;
    if (m->cap) {
        i = find(m->key, m->cap, key);
        if (m->key[i])
            return &m->val[i];
    }
    if (2 * (m->n + 1) > m->cap && grow(m))
        return NULL;
    i = find(m->key, m->cap, key);
    m->key[i] = key;
    m->val[i] = SIZE_MAX;
    m->n++;
    return &m->val[i];
}
