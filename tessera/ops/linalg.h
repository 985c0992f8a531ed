#pragma once
#include "tessera/api/tensor.h"

namespace tessera::ops {

// NumPy matmul: 1-D operands are promoted to matrices and the added axis removed afterwards; leading
// (batch) axes broadcast.
Tensor matmul(const Tensor& a, const Tensor& b);

// PyTorch's F.linear: y = x @ weight^T + bias, with weight [out, in] (nn::Linear's layout, not [in, out]),
// bias [out] or undefined and x [..., in] (y [..., out]), all floating; mixed dtypes promote as in matmul
// (PyTorch requires them equal).
// A composite of transpose, matmul and add, so the CPU backend runs it as one GEMM that reads the
// weight transposed in place and adds the bias in its epilogue.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = {});

}  // namespace tessera::ops
