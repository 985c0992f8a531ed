#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora into fuzz/corpus/<reader>/.

Files named valid_* must load, broken_* must be rejected with tessera::Error (tests/io/
test_corpus_replay.cpp checks both); anything else a fuzzer adds only has to do one or the other.
The files are produced here, independently of Tessera's own writers, straight from the format
descriptions. Run: python3 fuzz/make_corpus.py
"""
import gzip
import json
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(reader, name, data):
    d = os.path.join(ROOT, reader)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# --- safetensors --------------------------------------------------------------------------------


def safetensors(header, data=b"", pad=True):
    h = json.dumps(header, separators=(",", ":")).encode() if not isinstance(header, bytes) else header
    if pad:
        h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + data


def st_entry(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


f32x6 = struct.pack("<6f", 1, -2, 3.5, 0, -0.0, 1e-3)
put("safetensors", "valid_f32_matrix", safetensors({"w": st_entry("F32", [2, 3], 0, 24)}, f32x6))
put(
    "safetensors",
    "valid_mixed_with_metadata",
    safetensors(
        {
            "__metadata__": {"format": "pt", "epoch": "3"},
            "a.bias": st_entry("BF16", [2], 0, 4),
            "a.count": st_entry("I64", [], 4, 12),
            "mask": st_entry("BOOL", [3], 12, 15),
            "tok": st_entry("U8", [0], 15, 15),
            "h": st_entry("F16", [1], 15, 17),
        },
        struct.pack("<2H", 0x3F80, 0xC000) + struct.pack("<q", 42) + b"\x01\x00\x01" + struct.pack("<H", 0x3C00),
    ),
)
put("safetensors", "valid_empty", safetensors({}))
put(
    "safetensors",
    "valid_all_int_types",
    safetensors(
        {
            "i8": st_entry("I8", [2], 0, 2),
            "i32": st_entry("I32", [1], 2, 6),
            "f64": st_entry("F64", [1], 6, 14),
        },
        b"\x80\x7f" + struct.pack("<i", -7) + struct.pack("<d", 2.25),
    ),
)
put("safetensors", "broken_truncated_data", safetensors({"w": st_entry("F32", [2, 3], 0, 24)}, f32x6[:20]))
put("safetensors", "broken_header_too_long", struct.pack("<Q", 1 << 40) + b'{"a":1}')
put("safetensors", "broken_json", safetensors(b'{"w":{"dtype":"F32",', b""))
put("safetensors", "broken_overlap",
    safetensors({"a": st_entry("F32", [2], 0, 8), "b": st_entry("F32", [2], 4, 12)}, b"\0" * 12))
put("safetensors", "broken_size_mismatch", safetensors({"a": st_entry("F32", [3], 0, 8)}, b"\0" * 8))
put("safetensors", "broken_unknown_dtype", safetensors({"a": st_entry("C64", [1], 0, 8)}, b"\0" * 8))
put("safetensors", "broken_duplicate",
    safetensors(b'{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"\0"))
put("safetensors", "broken_overflow", safetensors({"a": st_entry("U8", [1 << 40, 1 << 40], 0, 0)}))

# --- npy ------------------------------------------------------------------------------------------


def npy(descr, shape, data, fortran=False, major=1):
    shape_text = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape_text)
    prefix = 10 if major == 1 else 12
    total = prefix + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    length = struct.pack("<H", len(header)) if major == 1 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes([major, 0]) + length + header.encode() + data


put("npy", "valid_f4_matrix", npy("<f4", [2, 3], f32x6))
put("npy", "valid_u1_scalar", npy("|u1", [], b"\x07"))
put("npy", "valid_be_i8_fortran", npy(">i8", [2, 2], struct.pack(">4q", 1, 2, 3, -4), fortran=True))
put("npy", "valid_b1_empty", npy("|b1", [0, 5], b""))
put("npy", "valid_v2_f8", npy("<f8", [1], struct.pack("<d", 0.5), major=2))
put("npy", "valid_f2", npy("<f2", [2], struct.pack("<2H", 0x3C00, 0x7E00)))
put("npy", "broken_truncated", npy("<f4", [2, 3], f32x6[:10]))
put("npy", "broken_descr", npy("<c8", [1], b"\0" * 8))
put("npy", "broken_magic", b"\x93NUMPX\x01\x00" + npy("<f4", [1], b"\0" * 4)[8:])
put("npy", "broken_header", b"\x93NUMPY\x01\x00\x20\x00{'descr': '<f4', 'shape': (1,) \n")
put("npy", "broken_version", b"\x93NUMPY\x09\x00" + npy("<f4", [1], b"\0" * 4)[8:])

# --- idx ------------------------------------------------------------------------------------------


def idx(type_code, shape, data):
    return bytes([0, 0, type_code, len(shape)]) + b"".join(struct.pack(">I", d) for d in shape) + data


labels = idx(0x08, [6], bytes([0, 9, 3, 3, 1, 0]))
images = idx(0x08, [2, 3, 3], bytes(range(18)))
put("idx", "valid_labels", labels)
put("idx", "valid_images", images)
put("idx", "valid_labels_gz", gzip.compress(labels, mtime=0))
put("idx", "valid_images_gz", gzip.compress(images, mtime=0))
put("idx", "valid_two_members_gz", gzip.compress(images[:9], mtime=0) + gzip.compress(images[9:], mtime=0))
put("idx", "valid_f32", idx(0x0D, [2], struct.pack(">2f", 1.5, -2)))
put("idx", "valid_i32", idx(0x0C, [1, 2], struct.pack(">2i", 1, -1)))
put("idx", "broken_magic", b"\x01\x00\x08\x01" + labels[4:])
put("idx", "broken_dims", idx(0x08, [7], bytes(6)))
put("idx", "broken_truncated_gz", gzip.compress(images, mtime=0)[:-6])
put("idx", "broken_i16", idx(0x0B, [1], b"\0\0"))
crc_flipped = bytearray(gzip.compress(labels, mtime=0))
crc_flipped[-8] ^= 0xFF
put("idx", "broken_crc_gz", bytes(crc_flipped))
