#pragma once
// Element conversion without undefined behaviour: float -> integer saturates (NaN becomes 0), any
// value -> bool is "not zero". Used by cast, astype and every reference kernel that stores results.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "tessera/core/half.h"

namespace tessera {

template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, f16_t> || std::is_same_v<T, bf16_t>;

template <class To, class From>
To convert_element(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_half_v<From>) {
    return convert_element<To>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (is_half_v<To>) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(v);
  } else if constexpr (std::is_floating_point_v<From>) {
    // float -> integer: truncate toward zero, saturate, NaN -> 0.
    if (std::isnan(v)) return To(0);
    constexpr double lo = static_cast<double>(std::numeric_limits<To>::min());
    constexpr double hi = static_cast<double>(std::numeric_limits<To>::max());
    const double d = static_cast<double>(v);
    if (d <= lo) return std::numeric_limits<To>::min();
    if (d >= hi) return std::numeric_limits<To>::max();
    return static_cast<To>(d);
  } else {
    return static_cast<To>(v);  // integer -> integer wraps (two's complement), as in NumPy
  }
}

}  // namespace tessera
