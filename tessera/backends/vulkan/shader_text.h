#pragma once
// Pieces of GLSL the library shaders share: how f32 and f16 values are stored (f16 as 16-bit words
// computed in f32), raw element types for shaders that only move data, reading i32 or i64 indices
// (i64 as two 32-bit words, so no 64-bit shader arithmetic is needed), the status word, and the
// coordinate arithmetic of shaders whose shapes and strides are written into their text.
#include <cstdint>
#include <string>

#include "tessera/core/dtype.h"
#include "tessera/core/shape.h"

namespace tessera::backends::vulkan {

/// The #extension lines for buffers of `element_bytes`-byte elements (8- or 16-bit storage).
std::string storage_extensions(size_t element_bytes);
/// The GLSL type that moves an element of that many bytes unchanged (uint8_t, uint16_t, uint, uvec2).
std::string raw_element_type(size_t element_bytes);

/// A floating dtype as a shader stores it: f32 as float, f16 as uint16_t bits, computed in f32.
struct FloatStorage {
  DType dtype = DType::f32;
  std::string type;                                  // the buffer's element type
  std::string load(const std::string& element) const;  // an f32 expression of a stored element
  std::string store(const std::string& value) const;    // the stored form of an f32 expression
};
/// f32 or f16 (the only floating types the library shaders take).
FloatStorage float_storage(DType dtype);
/// Whether a library shader takes values of this dtype (f32; f16, which supports() allows only where
/// the device has 16-bit storage).
bool library_float(DType dtype);
/// The bits of 1 in `dtype` as a GLSL literal of its raw element type (raw_element_type).
std::string one_bits_glsl(DType dtype);

/// Whether indices of this dtype can be read (i32, i64).
bool library_index(DType dtype);

/// A GLSL function `int <function>(int k)`: element k of the index buffer `buffer` (declared `int[]`,
/// its binding shift `shift`), or -1 when an i64 index does not fit in an int (so it is out of range).
std::string index_reader_glsl(DType dtype, const std::string& function, const std::string& buffer,
                              const std::string& shift);
/// The words of an index binding (i64 indices are read as two int words).
inline uint32_t index_words(DType dtype) { return dtype == DType::i64 ? 2 : 1; }

/// The status word at `binding` and `void report(uint bits)`, which sets bits of it.
std::string status_glsl(int binding);

/// `const int c0 = ...; ...`: the coordinates over `shape` (innermost last) of the linear index `linear`.
std::string coordinates_glsl(const Shape& shape, const std::string& linear, const std::string& prefix = "c");
/// `offset + c0 * s0 + ...` over the axes other than `skip` (zero strides and size-1 axes left out).
std::string offset_glsl(int64_t offset, const Shape& shape, const Strides& strides, int64_t skip = -1,
                        const std::string& prefix = "c");

}  // namespace tessera::backends::vulkan
