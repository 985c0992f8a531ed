#pragma once
// Elementwise functions of two (or three) tensors with NumPy broadcasting. Operand dtypes promote by
// promote_types (tessera/core/dtype.h); div and pow of integers compute in f32.
#include <optional>

#include "tessera/api/tensor.h"

namespace tessera::ops {

Tensor add(const Tensor& a, const Tensor& b);  // a + b
Tensor sub(const Tensor& a, const Tensor& b);  // a - b
Tensor mul(const Tensor& a, const Tensor& b);  // a * b
Tensor div(const Tensor& a, const Tensor& b);  // a / b
Tensor pow(const Tensor& a, const Tensor& b);  // a^b
Tensor pow(const Tensor& a, double exponent);  // a^b
// Gradient at a tie (a == b): half to each operand, as PyTorch's torch.maximum / torch.minimum.
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);  // elementwise min

// Comparisons and logic give bool tensors.
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);           // a != b
Tensor lt(const Tensor& a, const Tensor& b);           // a < b
Tensor le(const Tensor& a, const Tensor& b);           // a <= b
Tensor gt(const Tensor& a, const Tensor& b);           // a > b
Tensor ge(const Tensor& a, const Tensor& b);           // a >= b
Tensor logical_and(const Tensor& a, const Tensor& b);  // a && b
Tensor logical_or(const Tensor& a, const Tensor& b);   // a || b

// cond ? a : b elementwise; cond is bool, a and b promote; all three broadcast.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
// Limits x to [lo, hi]; either bound may be absent. Gradient: 1 on the closed interval lo <= x <= hi
// (at a bound too, as PyTorch), 0 outside.
Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi);

}  // namespace tessera::ops
