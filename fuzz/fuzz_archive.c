/*
 * fuzz_archive.c - libFuzzer target for the .pt2 archive reader.
 *
 * The bytes are written to an anonymous temporary file and opened with
 * sg_archive_open_fd (zip structure, names, layout, markers, versions). When
 * the archive opens, every model JSON is read (schema check), its non-finite
 * floats quoted and the result parsed as a graph (sg_graph_parse), and every member is read with a small bound (CRC, sizes).
 * Failures must leave the out-parameters empty; a failed open says why on one line.
 */
#define _POSIX_C_SOURCE 200809L /* fileno */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "shapegate/archive.h"
#include "shapegate/graph.h"

/* Open the bytes as an archive and read what it lists. Returns 0. */
int sg_fuzz_archive(const uint8_t *data, size_t size)
{
    sg_archive_limits lim = SG_ARCHIVE_LIMITS_INIT;
    sg_error err = SG_ERROR_INIT;
    sg_archive *a = NULL;
    FILE *f = NULL;
    char *buf = NULL;
    size_t len = 0, i;
    int rc;

    lim.max_member_size = (size_t)1 << 20; /* keep decompression bombs cheap */
    lim.max_json_size = (size_t)4 << 20;
    f = tmpfile();
    if (!f)
        goto cleanup;
    if (size && fwrite(data, 1, size, f) != size)
        goto cleanup;
    if (fflush(f) != 0)
        goto cleanup;
    rc = sg_archive_open_fd(&a, fileno(f), &lim, &err);
    if (rc != 0) {
        if (a)
            SG_FUZZ_FAIL("failed open (%d) left an archive", rc);
        if (!err.msg[0] || strchr(err.msg, '\n'))
            SG_FUZZ_FAIL("failed open (%d) without a one-line message: '%s'", rc, err.msg);
        goto cleanup;
    }
    for (i = 0; i < sg_archive_model_count(a); i++) {
        const sg_archive_model *m = sg_archive_model_at(a, i);
        sg_archive_schema schema;

        rc = sg_archive_read_model(&buf, &len, &schema, a, m->name, &err);
        if (rc != 0) {
            if (buf || len)
                SG_FUZZ_FAIL("failed read_model (%d) left data", rc);
            continue;
        }
        if (buf[len] != '\0')
            SG_FUZZ_FAIL("model JSON not NUL-terminated");
        if (sg_archive_json_quote_nonfinite(&buf, &len, NULL, &err) == 0) {
            sg_graph *g = NULL;

            rc = sg_graph_parse(&g, buf, len, &err);
            if (rc != 0 && g)
                SG_FUZZ_FAIL("failed graph parse (%d) left a graph", rc);
            sg_graph_free(g);
        }
        sg_free(buf);
        buf = NULL;
    }
    for (i = 0; i < sg_archive_member_count(a); i++) {
        const sg_archive_member *mem = sg_archive_member_at(a, i);

        rc = sg_archive_read_member(&buf, &len, a, mem->rel, (size_t)1 << 20, &err);
        if (rc != 0 && (buf || len))
            SG_FUZZ_FAIL("failed read_member (%d) left data", rc);
        sg_free(buf);
        buf = NULL;
    }
cleanup:
    sg_free(buf);
    sg_archive_free(a);
    if (f)
        fclose(f);
    return 0;
}

SG_FUZZ_ENTRY(sg_fuzz_archive)
