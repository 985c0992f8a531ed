#pragma once
// NumPy .npy files (format versions 1.0 for writing; 1.0, 2.0 and 3.0 for reading): the magic
// "\x93NUMPY", a version, a little-endian header length, a Python-literal dict header
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a newline to a multiple of 64 bytes, then the raw element data.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/core/array.h"

namespace tessera::io {

// Writes `array` (any strides) in C order, little-endian, atomically. Descriptors: <f4 <f8 <f2 |i1 <i4
// <i8 |u1 |b1; bf16 has no NumPy type and is written as <f4 (exactly, every bf16 is an f32).
void save_npy(const std::string& path, const Array& array);
// The exact bytes save_npy writes.
std::string serialize_npy(const Array& array);

// Reads the descriptors above in either byte order ('<', '>', '|', '='), C or Fortran order; other
// types (structured, object, u2, c8, ...) throw tessera::Error naming the file and the descriptor.
Array load_npy(const std::string& path);
// Parses an in-memory .npy image of `size` bytes (copying the elements out); `what` names it in errors.
Array load_npy_from_memory(const uint8_t* data, size_t size, const std::string& what);

}  // namespace tessera::io
