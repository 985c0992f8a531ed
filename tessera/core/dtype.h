#pragma once
// Element types. Promotion between them is written down once here (promote_types) and documented in
// docs/architecture.md: bool < unsigned/signed integers < floating point, widening to the smallest type
// that holds both operands' ranges (u8 with i8 gives i32; f16 with bf16 gives f32).
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "tessera/core/half.h"

namespace tessera {

// bool_ is the spelling NumPy and PyTorch users guess (torch.bool, np.bool_); boolean is the same dtype.
enum class DType : uint8_t { f32, f64, f16, bf16, i8, i32, i64, u8, boolean, bool_ = boolean };

// Every dtype once (bool_ is an alias of boolean), in declaration order: for tests and tables.
inline constexpr DType kAllDTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i8,
                                       DType::i32, DType::i64, DType::u8,  DType::boolean};

size_t dtype_size(DType dt);  // bytes per element: 8 for f64/i64, 4 for f32/i32, 2 for f16/bf16, 1 otherwise
const char* dtype_name(DType dt);          // "f32", "bf16", "bool", ...
DType parse_dtype(std::string_view name);  // inverse of dtype_name; throws Error on unknown names
bool is_floating(DType dt);  // f32, f64, f16, bf16
bool is_integral(DType dt);  // integers, excluding bool
bool is_signed(DType dt);  // can hold negative values: every dtype but u8 and bool
// The dtype a binary op of `a` and `b` computes in (the rules in this header's opening comment);
// symmetric, and promote_types(t, t) == t.
DType promote_types(DType a, DType b);

// C++ element type for each dtype, and back.
template <DType D> struct dtype_cpp;
template <> struct dtype_cpp<DType::f32> { using type = float; };      // f32 elements are float
template <> struct dtype_cpp<DType::f64> { using type = double; };     // f64 elements are double
template <> struct dtype_cpp<DType::f16> { using type = f16_t; };      // f16 elements are IEEE binary16 (core/half.h)
template <> struct dtype_cpp<DType::bf16> { using type = bf16_t; };    // bf16 elements are bfloat16 (core/half.h)
template <> struct dtype_cpp<DType::i8> { using type = int8_t; };      // i8 elements are int8_t
template <> struct dtype_cpp<DType::i32> { using type = int32_t; };    // i32 elements are int32_t
template <> struct dtype_cpp<DType::i64> { using type = int64_t; };    // i64 elements are int64_t
template <> struct dtype_cpp<DType::u8> { using type = uint8_t; };     // u8 elements are uint8_t
template <> struct dtype_cpp<DType::boolean> { using type = bool; };  // bool elements are one-byte bool

// The dtype whose elements are T: dtype_of<float>() is DType::f32 (only the types listed here).
template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<double>() { return DType::f64; }
template <> constexpr DType dtype_of<f16_t>() { return DType::f16; }
template <> constexpr DType dtype_of<bf16_t>() { return DType::bf16; }
template <> constexpr DType dtype_of<int8_t>() { return DType::i8; }
template <> constexpr DType dtype_of<int32_t>() { return DType::i32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::i64; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::u8; }
template <> constexpr DType dtype_of<bool>() { return DType::boolean; }

// The type reference kernels compute in: f16/bf16 widen to float, everything else is itself.
template <class T>
using compute_t = std::conditional_t<std::is_same_v<T, f16_t> || std::is_same_v<T, bf16_t>, float, T>;

// Calls f(T{}) with T the element type of `dt`:  dispatch_dtype(dt, [&](auto tag) { using T = decltype(tag); ... });
template <class F>
decltype(auto) dispatch_dtype(DType dt, F&& f) {
  switch (dt) {
    case DType::f32: return f(float{});
    case DType::f64: return f(double{});
    case DType::f16: return f(f16_t{});
    case DType::bf16: return f(bf16_t{});
    case DType::i8: return f(int8_t{});
    case DType::i32: return f(int32_t{});
    case DType::i64: return f(int64_t{});
    case DType::u8: return f(uint8_t{});
    case DType::boolean: return f(bool{});
  }
  return f(float{});  // unreachable: every enumerator is handled above
}

// As dispatch_dtype, restricted to floating types (f32, f64, f16, bf16); other dtypes throw with `what`.
template <class F>
decltype(auto) dispatch_floating(DType dt, const char* what, F&& f);

}  // namespace tessera

#include "tessera/core/error.h"

namespace tessera {
template <class F>
decltype(auto) dispatch_floating(DType dt, const char* what, F&& f) {
  switch (dt) {
    case DType::f32: return f(float{});
    case DType::f64: return f(double{});
    case DType::f16: return f(f16_t{});
    case DType::bf16: return f(bf16_t{});
    default: fail("{}: expected a floating dtype (f32, f64, f16, bf16), got {}", what, dtype_name(dt));
  }
}
}  // namespace tessera
