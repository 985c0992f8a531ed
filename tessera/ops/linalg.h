#pragma once
#include "tessera/api/tensor.h"

namespace tessera::ops {

// NumPy matmul: 1-D operands are promoted to matrices and the added axis removed afterwards; leading
// (batch) axes broadcast.
Tensor matmul(const Tensor& a, const Tensor& b);

}  // namespace tessera::ops
