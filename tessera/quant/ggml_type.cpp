#include "tessera/quant/ggml_type.h"

#include <cctype>

#include "tessera/core/error.h"

namespace tessera::quant {

namespace {

// Sizes follow ggml's block structs (tessera/quant/blocks.h asserts the ones Tessera decodes). The
// i-quants, ternary and mxfp4 types are listed so that files holding them can be read and inspected.
constexpr TypeTraits kTypes[] = {
    {GgmlType::f32, "f32", 1, 4, true, true},
    {GgmlType::f16, "f16", 1, 2, true, true},
    {GgmlType::q4_0, "q4_0", 32, 18, true, true},
    {GgmlType::q4_1, "q4_1", 32, 20, true, true},
    {GgmlType::q5_0, "q5_0", 32, 22, true, true},
    {GgmlType::q5_1, "q5_1", 32, 24, true, true},
    {GgmlType::q8_0, "q8_0", 32, 34, true, true},
    {GgmlType::q8_1, "q8_1", 32, 36, true, true},
    {GgmlType::q2_k, "q2_k", 256, 84, true, true},
    {GgmlType::q3_k, "q3_k", 256, 110, true, true},
    {GgmlType::q4_k, "q4_k", 256, 144, true, true},
    {GgmlType::q5_k, "q5_k", 256, 176, true, true},
    {GgmlType::q6_k, "q6_k", 256, 210, true, true},
    {GgmlType::q8_k, "q8_k", 256, 292, true, true},
    {GgmlType::iq2_xxs, "iq2_xxs", 256, 66, false, false},
    {GgmlType::iq2_xs, "iq2_xs", 256, 74, false, false},
    {GgmlType::iq3_xxs, "iq3_xxs", 256, 98, false, false},
    {GgmlType::iq1_s, "iq1_s", 256, 50, false, false},
    {GgmlType::iq4_nl, "iq4_nl", 32, 18, false, false},
    {GgmlType::iq3_s, "iq3_s", 256, 110, false, false},
    {GgmlType::iq2_s, "iq2_s", 256, 82, false, false},
    {GgmlType::iq4_xs, "iq4_xs", 256, 136, false, false},
    {GgmlType::i8, "i8", 1, 1, true, false},
    {GgmlType::i16, "i16", 1, 2, true, false},
    {GgmlType::i32, "i32", 1, 4, true, false},
    {GgmlType::i64, "i64", 1, 8, true, false},
    {GgmlType::f64, "f64", 1, 8, true, false},
    {GgmlType::iq1_m, "iq1_m", 256, 56, false, false},
    {GgmlType::bf16, "bf16", 1, 2, true, true},
    {GgmlType::tq1_0, "tq1_0", 256, 54, false, false},
    {GgmlType::tq2_0, "tq2_0", 256, 66, false, false},
    {GgmlType::mxfp4, "mxfp4", 32, 17, false, false},
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

const TypeTraits* find_type(uint32_t id) {
  for (const TypeTraits& t : kTypes) {
    if (static_cast<uint32_t>(t.type) == id) return &t;
  }
  return nullptr;
}

const TypeTraits& type_traits(GgmlType type) {
  const TypeTraits* t = find_type(static_cast<uint32_t>(type));
  TESSERA_CHECK(t != nullptr, "unknown ggml type id {}", static_cast<uint32_t>(type));
  return *t;
}

const char* type_name(GgmlType type) {
  return type_traits(type).name;
}

GgmlType parse_type(std::string_view name) {
  const std::string key = lower(name);
  for (const TypeTraits& t : kTypes) {
    if (key == t.name) return t.type;
  }
  std::string known;
  for (GgmlType t : quantizable_types()) known += std::string(known.empty() ? "" : ", ") + type_name(t);
  fail("unknown tensor type '{}'; expected one of {}", name, known);
}

std::vector<GgmlType> quantizable_types() {
  std::vector<GgmlType> out;
  for (const TypeTraits& t : kTypes) {
    if (t.can_quantize) out.push_back(t.type);
  }
  return out;
}

int64_t row_bytes(GgmlType type, int64_t n, std::string_view what) {
  const TypeTraits& t = type_traits(type);
  if (n < 0 || n % t.block_size != 0) {
    fail("{}: {} values do not fill whole {} blocks ({} values per block)", what, n, t.name, t.block_size);
  }
  return n / t.block_size * t.type_size;
}

int64_t row_values(GgmlType type, int64_t bytes, std::string_view what) {
  const TypeTraits& t = type_traits(type);
  if (bytes < 0 || bytes % t.type_size != 0) {
    fail("{}: {} bytes are not a whole number of {} blocks ({} bytes per block)", what, bytes, t.name, t.type_size);
  }
  return bytes / t.type_size * t.block_size;
}

}  // namespace tessera::quant
