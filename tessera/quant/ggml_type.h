#pragma once
// The element types of GGML/GGUF tensors: plain scalars (f32, f16, bf16, integers) and block formats
// that store `block_size` values in `type_size` bytes. The numeric ids are the ones GGUF files carry
// (ggml's `enum ggml_type`); ids that ggml retired (4, 5, 31-33, 36-38) are unknown here.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::quant {

enum class GgmlType : uint32_t {
  f32 = 0,
  f16 = 1,
  q4_0 = 2,
  q4_1 = 3,
  q5_0 = 6,
  q5_1 = 7,
  q8_0 = 8,
  q8_1 = 9,
  q2_k = 10,
  q3_k = 11,
  q4_k = 12,
  q5_k = 13,
  q6_k = 14,
  q8_k = 15,
  iq2_xxs = 16,
  iq2_xs = 17,
  iq3_xxs = 18,
  iq1_s = 19,
  iq4_nl = 20,
  iq3_s = 21,
  iq2_s = 22,
  iq4_xs = 23,
  i8 = 24,
  i16 = 25,
  i32 = 26,
  i64 = 27,
  f64 = 28,
  iq1_m = 29,
  bf16 = 30,
  tq1_0 = 34,
  tq2_0 = 35,
  mxfp4 = 39,
};

struct TypeTraits {
  GgmlType type;
  const char* name;     // lower case, e.g. "q4_k"
  int64_t block_size;   // values per block (1 for scalars)
  int64_t type_size;    // bytes per block
  bool can_dequantize;  // Tessera decodes it to f32
  bool can_quantize;    // Tessera encodes f32 into it
};

// Traits of a type id read from a file; nullptr for ids ggml does not define.
const TypeTraits* find_type(uint32_t id);
const TypeTraits& type_traits(GgmlType type);
const char* type_name(GgmlType type);
// Case-insensitive name ("q4_k", "Q4_K", "bf16") to type; throws tessera::Error listing the valid names.
GgmlType parse_type(std::string_view name);
// Every type Tessera can quantize into, in id order.
std::vector<GgmlType> quantizable_types();

inline bool is_block_type(GgmlType type) {
  return type_traits(type).block_size > 1;
}

// Bytes of one row of `n` values; throws unless n is a non-negative multiple of the block size
// (`what` names the tensor in the message).
int64_t row_bytes(GgmlType type, int64_t n, std::string_view what = "row");
// Number of values in a row of `bytes` bytes; throws unless bytes is a whole number of blocks.
int64_t row_values(GgmlType type, int64_t bytes, std::string_view what = "row");

}  // namespace tessera::quant
