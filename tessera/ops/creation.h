#pragma once
#include "tessera/api/tensor.h"

namespace tessera::ops {

// A one-element constant (shape []) of `like`'s dtype; if `like` is integral or bool and `value` is not
// a whole number, the constant is f32 so that promotion keeps the fraction.
Tensor scalar_like(const Tensor& like, double value);

Tensor full(const Shape& shape, double value, DType dtype = DType::f32);  // every element `value`
Tensor zeros(const Shape& shape, DType dtype = DType::f32);               // every element 0
Tensor ones(const Shape& shape, DType dtype = DType::f32);                // every element 1
Tensor full_like(const Tensor& like, double value);  // `like`'s shape and dtype, every element `value`
Tensor zeros_like(const Tensor& like);               // `like`'s shape and dtype, zeros
Tensor ones_like(const Tensor& like);                // `like`'s shape and dtype, ones
// Values start, start+step, ... below stop (above it for a negative step), like numpy.arange.
Tensor arange(double start, double stop, double step = 1.0, DType dtype = DType::f32);
Tensor arange(int64_t n, DType dtype = DType::i64);
// n x m identity (m = n when negative), ones on the diagonal offset by k.
Tensor eye(int64_t n, int64_t m = -1, int64_t k = 0, DType dtype = DType::f32);

}  // namespace tessera::ops
