#!/usr/bin/env python3
"""make_hostile_archives.py OUTDIR [CORPUS_DIR]

Writes the .pt2 files that tests/test_archive.c opens, and OUTDIR/manifest.tsv
saying what each must do. Two kinds:

- layout samples that must open: torch 2.8 (pickled weights), 2.9+ (raw
  weights), a Python-zipfile rewrite with a deflated model JSON, several
  models, a big-endian producer, an old container version, a flat 2.7 file;
- hostile files: not zips, truncated or bit-flipped zips, sizes that lie, zip
  bombs, '..'/absolute/control-character/duplicate names, overlapping members,
  missing or wrong markers and versions.

Model JSON and sample inputs come from a real torch 2.14 archive of the
corpus (tests/corpus/cases/ok_dynamic_hint_eq_named/model.pt2). Zips are built
byte by byte (struct, zlib) the way torch's PyTorchStreamWriter writes them:
stored members, flags 0x0808, 64-byte aligned data behind an "FB" extra field,
data descriptors, a zip64 end record always - unless a test breaks that.

manifest.tsv columns: file, stage ("open", "model", "member:<rel>"), expected
code (OK, EINVALID, ELIMIT, EUNSUPPORTED, EIO), a substring the error message
must contain ("-" for none), limits ("-" or "key=value;key=value").
Standard library only.
"""
import json
import os
import struct
import sys
import zipfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
BASE_CASE = "cases/ok_dynamic_hint_eq_named/model.pt2"


class Entry:
    """One member for build(). `name` is the full zip name (str or bytes).
    Keyword overrides corrupt what is written: cd_name, local_name, cd_size,
    cd_csize, cd_crc, cd_method, local_method, flags, local_sig, zip64_marker."""

    def __init__(self, name, data, method=0, **kw):
        self.name = name.encode() if isinstance(name, str) else name
        self.data = data
        self.method = method
        self.kw = kw


def deflate(data):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def build(entries, zip64=True, align=64, eocd=None, trailing=b"", extra_cd=None, cd_junk=b""):
    """A zip in torch's layout. `eocd` may override end-record fields
    (count_delta, count64_delta, disks, cd_size_delta); `extra_cd` adds directory entries
    that point into other members: (name, entry index, delta, size)."""
    out = bytearray()
    cd = []
    for e in entries:
        payload = deflate(e.data) if e.method == 8 else e.data
        crc = zlib.crc32(e.data) & 0xFFFFFFFF
        off = len(out)
        lname = e.kw.get("local_name", e.name)
        if align:
            base = off + 30 + len(lname) + 4
            pad = (-base) % align
            extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
        else:
            extra = b""
        flags = e.kw.get("flags", 0x0808)
        sig = e.kw.get("local_sig", 0x04034B50)
        lmethod = e.kw.get("local_method", e.method)
        out += struct.pack("<IHHHHHIIIHH", sig, 20 if not align else 0, flags, lmethod, 0, 0,
                           0, 0, 0, len(lname), len(extra)) + lname + extra
        data_off = len(out)
        out += payload
        out += struct.pack("<IIII", 0x08074B50, crc, len(payload), len(e.data))
        cd.append(dict(name=e.kw.get("cd_name", e.name), crc=e.kw.get("cd_crc", crc),
                       csize=e.kw.get("cd_csize", len(payload)), usize=e.kw.get("cd_size", len(e.data)),
                       off=e.kw.get("cd_offset", off), method=e.kw.get("cd_method", e.method), flags=flags,
                       data_off=data_off, zip64_marker=e.kw.get("zip64_marker", False),
                       force64=e.kw.get("force_zip64", False)))
    for name, idx, delta, size in extra_cd or []:
        t = cd[idx]
        cd.append(dict(name=name, crc=0, csize=size, usize=size, off=t["data_off"] + delta, method=0,
                       flags=0x0808, data_off=0, zip64_marker=False, force64=False))
    cd_off = len(out)
    for c in cd:
        usize, csize, offset, z64 = c["usize"], c["csize"], c["off"], b""
        if usize >= 0xFFFFFFFF or c["force64"]:  # zip64: the value moves to the extra field
            z64 += struct.pack("<Q", usize)
            usize = 0xFFFFFFFF
        if csize >= 0xFFFFFFFF or c["force64"]:
            z64 += struct.pack("<Q", csize)
            csize = 0xFFFFFFFF
        if offset >= 0xFFFFFFFF or c["force64"]:
            z64 += struct.pack("<Q", offset)
            offset = 0xFFFFFFFF
        ext = struct.pack("<HH", 1, len(z64)) + z64 if z64 else b""
        if c["zip64_marker"]:  # the marker without the extra field
            usize = 0xFFFFFFFF
        out += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0, 20 if not align else 0, c["flags"],
                           c["method"], 0, 0, c["crc"], csize, usize, len(c["name"]), len(ext), 0, 0, 0,
                           0, offset) + c["name"] + ext
    out += cd_junk
    cd_size = len(out) - cd_off
    eocd = eocd or {}
    n = len(cd) + eocd.get("count_delta", 0)
    n64 = len(cd) + eocd.get("count64_delta", eocd.get("count_delta", 0))
    if zip64:
        eocd64_off = len(out)
        out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 0x031E, 45, 0, 0, n64, n64, cd_size, cd_off)
        out += struct.pack("<IIQI", 0x07064B50, 0, eocd64_off, eocd.get("disks", 1))
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, cd_size + eocd.get("cd_size_delta", 0), cd_off, 0)
    return bytes(out + trailing)


def pyzip(records, method=zipfile.ZIP_STORED, deflate_names=()):
    """A zip written by Python's zipfile (no alignment, no data descriptors)."""
    import io
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, data in records:
            z.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), data,
                       compress_type=zipfile.ZIP_DEFLATED if name in deflate_names else method)
    return buf.getvalue()


def load_base(corpus):
    with zipfile.ZipFile(os.path.join(corpus, BASE_CASE)) as z:
        recs = {}
        for info in z.infolist():
            recs[info.filename.split("/", 1)[1]] = z.read(info)
    return recs


def model_json(base, major=8, minor=20, torch_version="2.14.1", drop_schema=False, schema_value=None):
    j = json.loads(base["models/model.json"])
    if drop_schema:
        del j["schema_version"]
    elif schema_value is not None:
        j["schema_version"] = schema_value
    else:
        j["schema_version"] = {"major": major, "minor": minor}
    j["torch_version"] = torch_version
    return json.dumps(j, separators=(", ", ": ")).encode()


def pt2_records(base, kind="raw", model="model", mjson=None, markers=None, extra=()):
    """(rel, data) pairs of a PT2 archive, in torch's write order.
    kind: "raw" (2.9+) or "pickle" (2.8)."""
    recs = []
    if kind == "pickle":
        blob = base["data/sample_inputs/model.pt"]  # a real torch.save zip as stand-in
        recs += [(f"data/weights/{model}.pt", blob), (f"data/constants/{model}.pt", blob)]
    else:
        wcfg = {"config": {"lin.weight": {"path_name": "weight_0", "is_param": True, "use_pickle": False,
                                          "tensor_meta": None}}}
        recs += [("data/weights/weight_0", struct.pack("<4f", 1, 2, 3, 4)),
                 (f"data/weights/{model}_weights_config.json", json.dumps(wcfg).encode()),
                 (f"data/constants/{model}_constants_config.json", b'{"config": {}}')]
    recs.append((f"models/{model}.json", mjson if mjson is not None else base["models/model.json"]))
    recs.append((f"data/sample_inputs/{model}.pt", base["data/sample_inputs/model.pt"]))
    recs += list(extra)
    m = {"archive_format": b"pt2", "archive_version": b"0", ".data/version": b"6\n",
         "byteorder": b"little", ".data/serialization_id": b"1" * 40}
    m.update(markers or {})
    recs += [(k, v) for k, v in m.items() if v is not None]
    return recs


def entries(recs, root="model", **per_name):
    out = []
    for rel, data in recs:
        full = f"{root}/{rel}" if root else rel
        out.append(Entry(full, data, **per_name.get(rel, {})))
    return out


def flip(data, at):
    b = bytearray(data)
    b[at] ^= 0x20
    return bytes(b)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    corpus = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "corpus")
    os.makedirs(outdir, exist_ok=True)
    for f in os.listdir(outdir):
        if f.endswith(".pt2") or f == "manifest.tsv":
            os.remove(os.path.join(outdir, f))
    base = load_base(corpus)
    rows = []

    def add(name, data, stage, code, needle="-", limits="-"):
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(data)
        rows.append((name, stage, code, needle, limits))

    ok_recs = pt2_records(base)
    ok = build(entries(ok_recs))

    # ---- layouts that must open -------------------------------------------------------
    add("ok_torch_layout.pt2", ok, "model", "OK")
    add("ok_checkcons.pt2", ok, "model", "OK", limits="flags=1")
    add("ok_marker_member.pt2", ok, "member:archive_format", "OK")
    add("pt2_28_pickled.pt2",
        build(entries(pt2_records(base, "pickle", mjson=model_json(base, 8, 8, "2.8.0")), root="m28")),
        "model", "OK")
    add("pt2_29_raw.pt2",
        build(entries(pt2_records(base, "raw", mjson=model_json(base, 8, 14, "2.9.0")), root="archive")),
        "model", "OK")
    add("pt2_212_pyzip.pt2",
        pyzip([("state_and_constants/" + r, d)
               for r, d in pt2_records(base, mjson=model_json(base, 8, 20, "2.12.1"))],
              deflate_names=("state_and_constants/models/model.json",)),
        "model", "OK")
    multi = pt2_records(base) + [r for r in pt2_records(base, "pickle", model="aux")
                                 if r[0].startswith(("models/", "data/"))]
    add("pt2_multi.pt2", build(entries(multi)), "model", "OK")
    two = [r for r in pt2_records(base, "pickle", model="a") if r[0].startswith(("models/", "data/"))] + \
        pt2_records(base, model="b")
    add("pt2_two_unnamed.pt2", build(entries(two)), "model", "EINVALID", "none is called 'model'")
    add("pt2_big_endian.pt2", build(entries(pt2_records(base, markers={"byteorder": b"big"}))), "model", "OK")
    add("pt2_old_container.pt2",
        build(entries(pt2_records(base, markers={".data/version": None, "version": b"3\n"}))), "model", "OK")
    add("pt2_extra.pt2",
        build(entries(pt2_records(base, extra=[("extra/shapegate.json", b'{"note": "hello"}')]))),
        "member:extra/shapegate.json", "OK")
    flat = [("serialized_exported_program.json", model_json(base, 8, 7, "2.7.0")),
            ("serialized_state_dict.pt", base["data/sample_inputs/model.pt"]),
            ("serialized_constants.pt", base["data/sample_inputs/model.pt"]),
            ("serialized_example_inputs.pt", base["data/sample_inputs/model.pt"]),
            ("version", b"8.7")]
    add("flat_27.pt2", pyzip(flat), "model", "OK")

    # ---- not zips, truncated, damaged -------------------------------------------------
    add("empty.pt2", b"", "open", "EINVALID", "empty file")
    add("text.pt2", b"this is not a zip archive at all\n" * 8, "open", "EINVALID", "not a zip archive")
    add("tiny.pt2", b"PK\x03\x04", "open", "EINVALID", "truncated")
    add("truncated_half.pt2", ok[: len(ok) // 2], "open", "EINVALID", "truncated")
    add("truncated_tail.pt2", ok[:-5], "open", "EINVALID", "truncated")
    add("trailing_garbage.pt2", ok + b"JUNK", "open", "EINVALID", "followed by 4 bytes")
    cd_off = struct.unpack("<I", ok[-6:-2])[0]
    add("cd_bad_signature.pt2", flip(ok, cd_off + 1), "open", "EINVALID", "bad signature")
    add("cd_name_flipped.pt2", flip(ok, cd_off + 46 + 8), "open", "EINVALID", "local header names another file")
    add("no_members.pt2", struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0, 0, 0, 0, 0), "open", "EINVALID",
        "no members")
    add("eocd_count_lie.pt2", build(entries(ok_recs), eocd={"count_delta": 1}), "open", "EINVALID",
        "central directory")
    add("eocd64_disagrees.pt2", build(entries(ok_recs), eocd={"count_delta": -1, "count64_delta": 0}), "open", "EINVALID", "disagree")
    add("eocd_cd_size_lie.pt2", build(entries(ok_recs), zip64=False, eocd={"cd_size_delta": 7}), "open",
        "EINVALID", "does not end at its end record")
    add("cd_junk.pt2", build(entries(ok_recs), cd_junk=b"\0" * 50), "open", "EINVALID", "bytes after its")
    add("multidisk.pt2", build(entries(ok_recs), eocd={"disks": 2}), "open", "EUNSUPPORTED", "multi-disk")
    add("local_bad_signature.pt2",
        build(entries(ok_recs, **{"models/model.json": {"local_sig": 0x04034B51}})), "open", "EINVALID",
        "no local header")
    add("local_method_differs.pt2",
        build(entries(ok_recs, **{"models/model.json": {"local_method": 8}})), "open", "EINVALID",
        "compression method")
    add("zip64_extra_missing.pt2",
        build(entries(ok_recs, **{"byteorder": {"zip64_marker": True}})), "open", "EINVALID", "zip64")

    # ---- sizes and CRCs that lie, bombs --------------------------------------------------
    mj_len = len(base["models/model.json"])
    e = entries(ok_recs)
    crc_flip = bytearray(build(e))
    i = crc_flip.find(b'"graph_module"')
    crc_flip[i + 3] ^= 0x01
    add("crc_flipped.pt2", bytes(crc_flip), "model", "EINVALID", "CRC mismatch")
    add("size_lie_short.pt2",
        build(entries(ok_recs, **{"models/model.json": {"cd_size": mj_len - 10, "cd_csize": mj_len - 10}})),
        "model", "EINVALID", "models/model.json")
    add("size_lie_past_end.pt2",
        build(entries(ok_recs, **{"models/model.json": {"cd_size": 10**7, "cd_csize": 10**7}})),
        "open", "EINVALID", "run into the central directory")
    add("stored_sizes_differ.pt2",
        build(entries(ok_recs, **{"models/model.json": {"cd_size": mj_len + 10}})), "open", "EINVALID",
        "is stored but")
    add("deflate_size_lie.pt2",
        build(entries(ok_recs, **{"models/model.json": {"method": 8, "cd_size": 100}})), "model", "EINVALID",
        "models/model.json")
    add("zip64_extra_ok.pt2", build(entries(ok_recs, **{"models/model.json": {"force_zip64": True}})), "model",
        "OK")
    add("local_offset_past.pt2", build(entries(ok_recs, **{"byteorder": {"cd_offset": 10**6}})), "open",
        "EINVALID", "is not before the central directory")
    add("deflate_ok.pt2", build(entries(ok_recs, **{"models/model.json": {"method": 8}})), "model", "OK")
    bomb_decl = ok_recs + [("extra/bomb.bin", b"\0" * 1000)]
    add("bomb_declared.pt2",
        build(entries(bomb_decl, **{"extra/bomb.bin": {"method": 8, "cd_size": 1 << 41}})), "open", "ELIMIT",
        "over the limit")
    add("bomb_declared_member.pt2",
        build(entries(bomb_decl, **{"extra/bomb.bin": {"method": 8, "cd_size": 1 << 33}})),
        "member:extra/bomb.bin", "ELIMIT", "extra/bomb.bin")
    zeros = ok_recs + [("extra/zeros.bin", b"\0" * (32 << 20))]
    add("bomb_real.pt2", build(entries(zeros, **{"extra/zeros.bin": {"method": 8}})),
        "member:extra/zeros.bin", "ELIMIT", "extra/zeros.bin", "max_member_size=1048576")
    add("bomb_total_limit.pt2", build(entries(zeros, **{"extra/zeros.bin": {"method": 8}})), "open", "ELIMIT",
        "in total", "max_total_size=1048576")
    add("json_over_limit.pt2", ok, "model", "ELIMIT", "models/model.json", "max_json_size=1000")
    add("too_many_members.pt2", ok, "open", "ELIMIT", "members", "max_members=5")
    add("encrypted.pt2", build(entries(ok_recs, **{"models/model.json": {"flags": 0x0809}})), "model",
        "EUNSUPPORTED", "encrypted")
    add("method_unknown.pt2",
        build(entries(ok_recs, **{"models/model.json": {"cd_method": 77, "local_method": 77}})), "model",
        "EUNSUPPORTED", "compression method 77")
    add("member_absent.pt2", ok, "member:extra/nothing.txt", "EINVALID", "no member")

    # overlapping members: a directory entry pointing inside another member's data,
    # where a local header for it has been planted
    inner_data = b"planted"
    inner = struct.pack("<IHHHHHIIIHH", 0x04034B50, 0, 0, 0, 0, 0, zlib.crc32(inner_data), len(inner_data),
                        len(inner_data), len(b"model/extra/inner"), 0) + b"model/extra/inner" + inner_data
    ov = ok_recs + [("extra/outer.bin", inner)]
    add("overlap.pt2", build(entries(ov), extra_cd=[(b"model/extra/inner", len(ov) - 1, 0, len(inner_data))]),
        "open", "EINVALID", "overlap")

    # ---- names --------------------------------------------------------------------
    def with_member(name, data=b"x", first=False):
        es = entries(ok_recs)
        extra = Entry(name, data)
        return build([extra] + es if first else es + [extra])

    add("long_name.pt2", with_member("model/extra/" + "a" * 2000), "open", "ELIMIT", "name of 2012 bytes")
    add("dotdot.pt2", with_member("model/../evil.txt"), "open", "EINVALID", "'..' path component")
    add("dot.pt2", with_member("model/./x.txt"), "open", "EINVALID", "'.' path component")
    add("absolute.pt2", with_member("/etc/passwd", first=True), "open", "EINVALID", "absolute path")
    add("drive_letter.pt2", with_member("C:/evil.txt", first=True), "open", "EINVALID", "absolute path")
    add("backslash.pt2", with_member("model\\extra\\x.txt"), "open", "EINVALID", "backslash")
    add("control_char.pt2", with_member("model/extra/a\nb"), "open", "EINVALID", "a\\x0ab")
    add("nul_in_name.pt2", with_member(b"model/extra/a\0b"), "open", "EINVALID", "NUL byte")
    add("bad_utf8.pt2", with_member(b"model/extra/\xff\xfe.txt"), "open", "EINVALID", "UTF-8")
    add("empty_component.pt2", with_member("model//x.txt"), "open", "EINVALID", "empty path component")
    add("empty_name.pt2", with_member(""), "open", "EINVALID", "empty name")
    add("duplicate.pt2", build(entries(ok_recs + [("models/model.json", b"{}")])), "open", "EINVALID",
        "duplicate member 'model/models/model.json'")
    add("not_under_root.pt2", with_member("other/x.txt"), "open", "EINVALID", "not inside the root folder")
    add("flat_dotdot.pt2", pyzip(flat + [("../../x.txt", b"x")]), "open", "EINVALID", "'..' path component")
    add("models_dir_entry.pt2", with_member("model/models/", b""), "open", "EINVALID", "models/")
    add("models_other_file.pt2", with_member("model/models/readme.txt"), "open", "EINVALID", "unexpected member")
    add("models_nested.pt2", with_member("model/models/sub/x.json"), "open", "EINVALID", "unexpected member")

    # ---- containers, markers, versions ---------------------------------------------------
    def pt2_without(rel):
        return build(entries([r for r in ok_recs if r[0] != rel]))

    def pt2_marker(rel, value):
        return build(entries(pt2_records(base, markers={rel: value})))

    add("missing_archive_version.pt2", pt2_without("archive_version"), "open", "EINVALID",
        "missing required member 'model/archive_version'")
    add("missing_data_version.pt2", pt2_without(".data/version"), "open", "EINVALID", ".data/version")
    add("missing_sample_inputs.pt2", pt2_without("data/sample_inputs/model.pt"), "open", "EINVALID",
        "model/data/sample_inputs/model.pt")
    add("missing_weights.pt2", pt2_without("data/weights/model_weights_config.json"), "open", "EINVALID",
        "model/data/weights/model_weights_config.json")
    add("missing_constants.pt2", pt2_without("data/constants/model_constants_config.json"), "open", "EINVALID",
        "model_constants_config.json")
    add("no_models.pt2", pt2_without("models/model.json"), "open", "EINVALID", "holds no model")
    aoti = [r for r in ok_recs if not r[0].startswith(("models/", "data/"))] + \
        [("data/aotinductor/model/model.so", b"\x7fELF"), ("data/aotinductor/model/weights_config.json", b"{}")]
    add("aoti_only.pt2", build(entries(aoti)), "open", "EUNSUPPORTED", "AOTInductor")
    add("aoti_flat.pt2", pyzip([("archive_format", b"pt2"), ("version", b"0"),
                                ("data/aotinductor/model/model.so", b"\x7fELF")]), "open", "EUNSUPPORTED",
        "AOTInductor")
    add("torch_save.pt2", build([Entry("archive/data.pkl", b"\x80\x02}q\x00."), Entry("archive/byteorder", b"little"),
                                 Entry("archive/data/0", b"\0" * 16), Entry("archive/.data/version", b"3\n")]),
        "open", "EUNSUPPORTED", "torch.save checkpoint")
    add("plain_zip.pt2", pyzip([("hello.txt", b"hello")]), "open", "EINVALID", "not a torch.export archive")
    add("plain_zip_folder.pt2", pyzip([("docs/readme.txt", b"hello")]), "open", "EINVALID",
        "not a torch.export archive")
    add("archive_format_pt3.pt2", pt2_marker("archive_format", b"pt3"), "open", "EINVALID", "'pt3'")
    add("archive_format_long.pt2", pt2_marker("archive_format", b"pt2" * 40), "open", "EINVALID",
        "a marker has at most")
    add("archive_version_1.pt2", pt2_marker("archive_version", b"1"), "open", "EUNSUPPORTED", "archive version 1")
    add("archive_version_newline.pt2", pt2_marker("archive_version", b"0\n"), "open", "EINVALID",
        "archive_version' is '0\\x0a'")
    add("data_version_11.pt2", pt2_marker(".data/version", b"11\n"), "open", "EUNSUPPORTED", "container version 11")
    add("data_version_0.pt2", pt2_marker(".data/version", b"0\n"), "open", "EUNSUPPORTED", "container version 0")
    add("data_version_text.pt2", pt2_marker(".data/version", b"six\n"), "open", "EINVALID", "not a number")
    add("byteorder_bad.pt2", pt2_marker("byteorder", b"middle"), "open", "EINVALID", "byteorder")
    add("schema_major_9.pt2", build(entries(pt2_records(base, mjson=model_json(base, 9, 0)))), "model",
        "EUNSUPPORTED", "schema version 9.0")
    add("schema_wildcard.pt2", build(entries(pt2_records(base, mjson=model_json(base, 0, 0)))), "model", "OK")
    add("schema_missing.pt2", build(entries(pt2_records(base, mjson=model_json(base, drop_schema=True)))),
        "model", "EINVALID", "no schema_version")
    add("schema_int.pt2", build(entries(pt2_records(base, mjson=model_json(base, schema_value=2)))), "model",
        "EUNSUPPORTED", "single number 2")
    add("schema_string.pt2", build(entries(pt2_records(base, mjson=model_json(base, schema_value="8.20")))),
        "model", "EINVALID", "not an object")
    add("json_not_object.pt2", build(entries(pt2_records(base, mjson=b"[1, 2, 3]"))), "model", "EINVALID",
        "not a JSON object")
    add("json_truncated.pt2", build(entries(pt2_records(base, mjson=base["models/model.json"][:100]))),
        "model", "EINVALID", "malformed")
    flat_v = [r for r in flat if r[0] != "version"]
    add("flat_version_newline.pt2", pyzip(flat_v + [("version", b"8.7\n")]), "model", "OK")
    add("flat_version_5.pt2", pyzip(flat_v + [("version", b"5.3")]), "open", "EUNSUPPORTED", "5.3")
    add("flat_version_2.pt2", pyzip(flat_v + [("version", b"2")]), "open", "EUNSUPPORTED", "single-number")
    add("flat_version_text.pt2", pyzip(flat_v + [("version", b"8.x")]), "open", "EINVALID", "'8.x'")
    add("flat_missing_version.pt2", pyzip(flat_v), "open", "EINVALID", "missing required member 'version'")

    with open(os.path.join(outdir, "manifest.tsv"), "w") as f:
        for r in rows:
            f.write("\t".join(r) + "\n")
    print(f"wrote {len(rows)} archives to {outdir}")


if __name__ == "__main__":
    main()
