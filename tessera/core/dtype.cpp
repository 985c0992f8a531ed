#include "tessera/core/dtype.h"

#include "tessera/core/error.h"

namespace tessera {

size_t dtype_size(DType dt) {
  switch (dt) {
    case DType::f64:
    case DType::i64: return 8;
    case DType::f32:
    case DType::i32: return 4;
    case DType::f16:
    case DType::bf16: return 2;
    case DType::i8:
    case DType::u8:
    case DType::boolean: return 1;
  }
  return 0;
}

const char* dtype_name(DType dt) {
  switch (dt) {
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::i8: return "i8";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::u8: return "u8";
    case DType::boolean: return "bool";
  }
  return "?";
}

DType parse_dtype(std::string_view name) {
  for (DType dt : kAllDTypes) {
    if (name == dtype_name(dt)) return dt;
  }
  fail("unknown dtype '{}': expected one of f32, f64, f16, bf16, i8, i32, i64, u8, bool", name);
}

bool is_floating(DType dt) {
  return dt == DType::f32 || dt == DType::f64 || dt == DType::f16 || dt == DType::bf16;
}

bool is_integral(DType dt) {
  return dt == DType::i8 || dt == DType::i32 || dt == DType::i64 || dt == DType::u8;
}

bool is_signed(DType dt) { return dt != DType::u8 && dt != DType::boolean; }

namespace {
// Rank within a category; promotion takes the wider, with special cases for mixed signedness and the
// two 16-bit float formats.
int float_rank(DType dt) {
  switch (dt) {
    case DType::f16: return 1;
    case DType::bf16: return 1;
    case DType::f32: return 2;
    case DType::f64: return 3;
    default: return 0;
  }
}
int int_bits(DType dt) {
  switch (dt) {
    case DType::i8:
    case DType::u8: return 8;
    case DType::i32: return 32;
    case DType::i64: return 64;
    default: return 0;
  }
}
}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::boolean) return b;
  if (b == DType::boolean) return a;
  if (is_floating(a) && is_floating(b)) {
    if (float_rank(a) == float_rank(b)) return DType::f32;  // f16 with bf16
    return float_rank(a) > float_rank(b) ? a : b;
  }
  if (is_floating(a)) return a;  // float with integer: the float type
  if (is_floating(b)) return b;
  // Both integers.
  if ((a == DType::u8 && b == DType::i8) || (a == DType::i8 && b == DType::u8)) return DType::i32;
  return int_bits(a) >= int_bits(b) ? a : b;
}

}  // namespace tessera
