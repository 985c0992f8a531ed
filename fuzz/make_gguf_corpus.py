#!/usr/bin/env python3
"""Writes the GGUF fuzzer's seed corpus into fuzz/corpus/gguf/ (see fuzz/README.md).

valid_* files must load and broken_* files must be rejected with tessera::Error; tests/gguf/
test_fuzz_corpus.cpp replays them. The files are built here from the GGUF description
(little-endian; u64-length strings; tensor data aligned to general.alignment, default 32),
independently of Tessera's writer. Run: python3 fuzz/make_gguf_corpus.py
"""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "gguf")
U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
SCALAR = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f", BOOL: "<?",
          U64: "<Q", I64: "<q", F64: "<d"}


def s(text):
    b = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(b)) + b


def value(t, v):
    if t == STR:
        return s(v)
    if t == ARR:
        et, items = v
        return struct.pack("<IQ", et, len(items)) + b"".join(value(et, x) for x in items)
    return struct.pack(SCALAR[t], v)


def kv(key, t, v):
    return s(key) + struct.pack("<I", t) + value(t, v)


def tensor_info(name, ne, ggml_type, offset):
    return s(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d) for d in ne) + \
        struct.pack("<IQ", ggml_type, offset)


def pad(b, align=32):
    return b + b"\0" * ((align - len(b) % align) % align)


def gguf(kvs, infos, data=b"", align=32, version=3, n_tensors=None, n_kv=None):
    head = struct.pack("<4sIQQ", b"GGUF", version, len(infos) if n_tensors is None else n_tensors,
                       len(kvs) if n_kv is None else n_kv)
    body = head + b"".join(kvs) + b"".join(infos)
    return pad(body, align) + data if infos else body


def put(name, data):
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


f32x8 = struct.pack("<8f", *[0.5 * i - 2 for i in range(8)])
# One Q8_0 block (f16 d = 0.5, codes -16..15) and one Q4_0 block (d = 0.25, nibbles 0..15).
q8_0 = struct.pack("<H", 0x3800) + bytes((i - 16) & 0xFF for i in range(32))
q4_0 = struct.pack("<H", 0x3400) + bytes((i & 15) | ((15 - (i & 15)) << 4) for i in range(16))
# One Q4_K super-block: d, dmin, 12 scale bytes, 128 nibble bytes.
q4_k = struct.pack("<HH", 0x2C00, 0x2000) + bytes(range(1, 13)) + bytes((i * 37) & 0xFF for i in range(128))

every_type = [
    kv("general.architecture", STR, "fuzz"), kv("u8", U8, 7), kv("i8", I8, -7), kv("u16", U16, 700),
    kv("i16", I16, -700), kv("u32", U32, 70000), kv("i32", I32, -70000), kv("f32", F32, 0.25),
    kv("bool", BOOL, True), kv("u64", U64, 2**40), kv("i64", I64, -2**40), kv("f64", F64, 1e-300),
    kv("tokens", ARR, (STR, ["<s>", "", "hello"])), kv("scores", ARR, (F32, [0.0, -1.0])),
    kv("nested", ARR, (ARR, [(I32, [1, 2]), (STR, ["x"])])), kv("empty", ARR, (U64, [])),
]
put("valid_no_tensors", gguf([kv("general.name", STR, "vocab")], []))
put("valid_every_value_type", gguf(every_type, []))
put("valid_tensors", gguf(
    [kv("general.architecture", STR, "llama")],
    [tensor_info("norm", [8], 0, 0), tensor_info("w.q8_0", [32], 8, 32), tensor_info("w.q4_0", [32], 2, 96),
     tensor_info("w.q4_k", [256], 12, 128)],
    pad(f32x8) + pad(q8_0) + pad(q4_0) + pad(q4_k)))
put("valid_custom_alignment", gguf([kv("general.alignment", U32, 64)],
                                   [tensor_info("a", [8], 0, 0), tensor_info("b", [2, 2], 1, 64)],
                                   pad(f32x8, 64) + b"\0" * 8, align=64))
put("valid_v2", gguf([kv("k", U32, 1)], [tensor_info("t", [8], 0, 0)], f32x8, version=2))

put("broken_magic", b"GGML" + gguf([], [])[4:])
put("broken_version", gguf([], [], version=1))
put("broken_truncated", gguf(every_type, [])[:-5])
put("broken_huge_kv_count", gguf([], [], n_kv=2**62))
put("broken_huge_string", struct.pack("<4sIQQ", b"GGUF", 3, 0, 1) + struct.pack("<Q", 2**63))
put("broken_huge_array", gguf([s("a") + struct.pack("<IIQ", ARR, F32, 2**60)], [], n_kv=1))
put("broken_value_type", gguf([s("a") + struct.pack("<I", 42)], [], n_kv=1))
put("broken_unknown_ggml_type", gguf([], [tensor_info("t", [8], 77, 0)], f32x8))
put("broken_too_many_dims", gguf([], [tensor_info("t", [1, 1, 1, 1, 1], 0, 0)], f32x8))
put("broken_dim_overflow", gguf([], [tensor_info("t", [2**40, 2**40], 0, 0)], f32x8))
put("broken_partial_block", gguf([], [tensor_info("t", [16], 8, 0)], pad(q8_0)))
put("broken_misaligned", gguf([], [tensor_info("t", [8], 0, 4)], pad(f32x8) + b"\0" * 32))
put("broken_past_end", gguf([], [tensor_info("t", [64], 0, 0)], f32x8))
put("broken_overlap", gguf([], [tensor_info("a", [16], 0, 0), tensor_info("b", [8], 0, 32)], b"\0" * 96))
put("broken_alignment", gguf([kv("general.alignment", U32, 48)], []))
put("broken_duplicate_key", gguf([kv("a", U8, 1), kv("a", U8, 2)], []))
put("broken_bool", gguf([s("b") + struct.pack("<IB", BOOL, 9)], [], n_kv=1))
