#!/usr/bin/env python3
"""Writes the small reproducers of issue 12's hostile inputs into fuzz/corpus/<reader>/regress_*.

Each file once crashed, hung, exhausted memory or misled a reader (the comment above it says how);
the corpus replay tests and the fuzzers' CI stage run them through the fuzz harnesses, which check
that they now load or are refused with a short, plain tessera::Error. Larger reproducers (70,000
levels of JSON, an 8 MB key, a million tensors) are built inside the tests instead.
Run: python3 fuzz/make_regressions.py
"""
import json
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(reader, name, data):
    d = os.path.join(ROOT, reader)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "regress_" + name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# --- safetensors --------------------------------------------------------------------------------


def safetensors(header, data=b""):
    h = header if isinstance(header, bytes) else header.encode()
    return struct.pack("<Q", len(h)) + h + data


def st_tensor(name, shape_json, begin=0, end=0):
    return '"%s":{"dtype":"F32","shape":%s,"data_offsets":[%d,%d]}' % (name, shape_json, begin, end)


# Deep nesting: error messages dumped the value with a recursive printer (70,000 levels crashed).
put("safetensors", "deep_nesting_shape", safetensors("{" + st_tensor("a", "[" * 100 + "0" + "]" * 100) + "}"))
put("safetensors", "deep_nesting_metadata", safetensors('{"__metadata__":{"k":' + "{" * 100 + "}" * 100 + "}}"))
# A NUL ended nlohmann's input early, so whatever followed it was ignored.
put("safetensors", "nul_then_junk", safetensors("{" + st_tensor("a", "[2]", 0, 8) + "}\0{\"b\":1}", b"\0" * 8))
# Messages quoted huge values whole and printed names raw.
put("safetensors", "huge_string_in_shape", safetensors("{" + st_tensor("a", '["' + "x" * 4000 + '"]') + "}"))
put("safetensors", "escape_in_name", safetensors("{" + st_tensor("evil\\u001b[2J\\nforged", "[2]", 0, 8) + "}",
                                                 b"\0" * 8))

# --- GGUF ---------------------------------------------------------------------------------------

U8, U32, STR, I16 = 0, 4, 8, 25


def s(text):
    b = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(b)) + b


def kv_u32(key, v):
    return s(key) + struct.pack("<II", U32, v)


def gguf(kvs, infos=(), data=b""):
    head = struct.pack("<4sIQQ", b"GGUF", 3, len(infos), len(kvs)) + b"".join(kvs) + b"".join(infos)
    return head + b"\0" * ((32 - len(head) % 32) % 32) + data if infos else head


def tensor_info(name, ne, ggml_type, offset=0):
    return s(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d) for d in ne) + \
        struct.pack("<IQ", ggml_type, offset)


# 57 bytes that made `quantize` write 2 GiB of alignment padding.
put("gguf", "alignment_2_31", gguf([kv_u32("general.alignment", 1 << 31)]))
# One long key padded every line of `inspect` to its length (the fuzz harness bounds the summary).
put("gguf", "long_key_widens_lines", gguf([kv_u32("k" * 2000, 1)] + [kv_u32("key.%d" % i, i) for i in range(300)]))
# Keys and names with terminal escapes and newlines were printed raw.
put("gguf", "escape_names", gguf([s("evil\x1b[2J\nforged") + struct.pack("<I", STR) + s("value\x1b[31m\x07")],
                                 [tensor_info("t\x1b]0;pwned\x07\nx", [2], 0)], b"\0" * 8))
# An i16 tensor: the harness expected its view to keep 2 bytes per value (views widen i16 to i32).
put("gguf", "i16_tensor", gguf([], [tensor_info("counts", [4], I16)], struct.pack("<4h", -1, 0, 1, 32767)))

# --- IR text ------------------------------------------------------------------------------------

# A short dense literal declaring 2^47 bytes was allocated before its length was checked.
put("ir_text", "dense_huge_size.tsr",
    "graph @g() {\n  %0 = constant() {value = dense<u8[140737488355328], 0x00>} : u8[140737488355328]\n"
    "  return %0\n}\n")
# A zero dimension stopped Array::empty's overflow check (the strides of the others overflowed).
put("ir_text", "empty_array_huge_dims.tsr",
    "graph @g() {\n  %0 = constant() {value = dense<u8[0, 4611686018427387904, 4611686018427387904], 0x>} : "
    "u8[0, 4611686018427387904, 4611686018427387904]\n  return %0\n}\n")
# reshape multiplied the known dimensions without an overflow check.
put("ir_text", "reshape_overflow.tsr",
    'graph @g(%0: f32[2, 3] {name = "x"}) {\n  %1 = reshape(%0) {shape = [4294967296, 4294967296, -1]} : '
    "f32[1]\n  return %1\n}\n")
put("ir_text", "reshape_empty_huge.tsr",
    'graph @g(%0: f32[0] {name = "x"}) {\n  %1 = reshape(%0) {shape = [0, 4611686018427387904, '
    "4611686018427387904]} : f32[0, 4611686018427387904, 4611686018427387904]\n  return %1\n}\n")

# --- npy ----------------------------------------------------------------------------------------

# A malformed header was quoted whole and raw (control characters included) in the message.
header = b"{'descr': '\x1b[2J<f4', 'fortran_order': False, 'shape': (2,), }"
header += b" " * ((64 - (10 + len(header) + 1) % 64) % 64) + b"\n"
put("npy", "escape_in_descr", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + b"\0" * 8)
