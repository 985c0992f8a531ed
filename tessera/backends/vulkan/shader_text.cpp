#include "tessera/backends/vulkan/shader_text.h"

#include <cstring>

#include <fmt/format.h>

#include "tessera/core/array.h"

#include "tessera/core/error.h"

namespace tessera::backends::vulkan {

std::string storage_extensions(size_t element_bytes) {
  switch (element_bytes) {
    case 1:
      return "#extension GL_EXT_shader_8bit_storage : require\n"
             "#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require\n";
    case 2:
      return "#extension GL_EXT_shader_16bit_storage : require\n"
             "#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require\n";
    default:
      return "";
  }
}

std::string raw_element_type(size_t element_bytes) {
  switch (element_bytes) {
    case 1:
      return "uint8_t";
    case 2:
      return "uint16_t";
    case 4:
      return "uint";
    case 8:
      return "uvec2";
    default:
      fail("vulkan: no shader element of {} bytes", element_bytes);
  }
}

std::string FloatStorage::load(const std::string& element) const {
  return dtype == DType::f16 ? fmt::format("unpackHalf2x16(uint({})).x", element) : element;
}

std::string FloatStorage::store(const std::string& value) const {
  return dtype == DType::f16 ? fmt::format("uint16_t(packHalf2x16(vec2({}, 0.0)) & 0xffffu)", value) : value;
}

FloatStorage float_storage(DType dtype) {
  TESSERA_CHECK(library_float(dtype), "vulkan: library shaders take f32 or f16, not {}", dtype_name(dtype));
  return {dtype, dtype == DType::f16 ? "uint16_t" : "float"};
}

bool library_float(DType dtype) { return dtype == DType::f32 || dtype == DType::f16; }

std::string one_bits_glsl(DType dtype) {
  const Array one = Array::full(dtype, {}, 1.0);
  uint64_t bits = 0;
  std::memcpy(&bits, one.raw_data(), dtype_size(dtype));
  const std::string raw = raw_element_type(dtype_size(dtype));
  if (dtype_size(dtype) == 8) return fmt::format("uvec2({:#x}u, {:#x}u)", bits & 0xffffffffu, bits >> 32);
  return fmt::format("{}({:#x}u)", raw, bits);
}

bool library_index(DType dtype) { return dtype == DType::i32 || dtype == DType::i64; }

std::string index_reader_glsl(DType dtype, const std::string& function, const std::string& buffer,
                              const std::string& shift) {
  TESSERA_CHECK(library_index(dtype), "vulkan: indices must be i32 or i64, not {}", dtype_name(dtype));
  if (dtype == DType::i32) return fmt::format("int {}(int k) {{ return {}[{} + k]; }}\n", function, buffer, shift);
  // Little-endian words: the index fits in an int when its high word is the low word's sign.
  return fmt::format(
      "int {0}(int k) {{\n"
      "  const int lo = {1}[{2} + 2 * k], hi = {1}[{2} + 2 * k + 1];\n"
      "  return hi == (lo >> 31) ? lo : -1;\n"
      "}}\n",
      function, buffer, shift);
}

std::string status_glsl(int binding) {
  return fmt::format(
      "layout(std430, binding = {}) coherent buffer TsrStatus {{ uint tsr_status[]; }};\n"
      "void report(uint bits) {{ atomicOr(tsr_status[0], bits); }}\n",
      binding);
}

std::string coordinates_glsl(const Shape& shape, const std::string& linear, const std::string& prefix) {
  std::string code = fmt::format("int {}_rest = int({});\n", prefix, linear);
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 1) {
      code += fmt::format("const int {}{} = 0;\n", prefix, d);
      continue;
    }
    code += fmt::format("const int {0}{1} = {0}_rest % {2}; {0}_rest /= {2};\n", prefix, d, shape[d]);
  }
  return code;
}

std::string offset_glsl(int64_t offset, const Shape& shape, const Strides& strides, int64_t skip,
                        const std::string& prefix) {
  std::string e = std::to_string(offset);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (static_cast<int64_t>(d) == skip || strides[d] == 0 || shape[d] == 1) continue;
    e += fmt::format(" + {}{} * {}", prefix, d, strides[d]);
  }
  return e;
}

}  // namespace tessera::backends::vulkan
