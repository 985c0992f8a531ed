#pragma once
// Integer arithmetic that wraps on overflow (two's complement, as NumPy does) instead of being
// undefined behaviour: signed values are computed in the unsigned type of the same width. Floating
// and bool operands use the plain operators.
#include <type_traits>

namespace tessera::ops {

template <class T>
inline constexpr bool is_wrapping_v = std::is_integral_v<T> && std::is_signed_v<T> && !std::is_same_v<T, bool>;

template <class T>
T wrapping_add(T a, T b) {
  if constexpr (is_wrapping_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return static_cast<T>(a + b);
  }
}

template <class T>
T wrapping_sub(T a, T b) {
  if constexpr (is_wrapping_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  } else {
    return static_cast<T>(a - b);
  }
}

template <class T>
T wrapping_mul(T a, T b) {
  if constexpr (is_wrapping_v<T>) {
    using U = std::make_unsigned_t<T>;
    // Multiply in at least `unsigned int` so that narrow types do not promote back to signed int.
    using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    return static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b))));
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, T>;
    return static_cast<T>(static_cast<W>(a) * static_cast<W>(b));
  } else {
    return static_cast<T>(a * b);
  }
}

template <class T>
T wrapping_neg(T a) {
  if constexpr (is_wrapping_v<T>) {
    return wrapping_sub(T(0), a);
  } else {
    return static_cast<T>(-a);  // keeps -0.0 for floats
  }
}

}  // namespace tessera::ops
