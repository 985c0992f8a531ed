#pragma once
// Ops on GGML-quantized weights. Tessera's DType has no block types, so a quantized tensor is a u8
// tensor of its raw blocks, shaped like the logical tensor except that the last dimension counts
// bytes (row_bytes) instead of values, with the block format named by the string attribute `type`
// ("q4_k", "q8_0", ...; see tessera/quant/ggml_type.h). The logical row length K follows from the
// byte count: K = row_bytes / type_size * block_size.
#include <string>

#include "tessera/api/tensor.h"

namespace tessera::ops {

// f32 [..., K] from u8 blocks [..., row_bytes] of `type`. Not differentiable (the input is bytes).
Tensor dequantize(const Tensor& blocks, const std::string& type);

// y = x · Wᵀ with W [N, K] given as u8 blocks [N, row_bytes] of `type`: x is floating [..., K] and y
// is [..., N] in x's dtype (nn.Linear's and ggml mul_mat's convention). Differentiable in x.
Tensor quantized_matmul(const Tensor& x, const Tensor& w, const std::string& type);
// As above with y in `output_dtype` (attribute output_dtype): 16-bit x into an f32 product, summed
// as exactly as the f32 form (what the tensor cores compute from rounded activations).
Tensor quantized_matmul(const Tensor& x, const Tensor& w, const std::string& type, DType output_dtype);

// Host-side helpers: encode a floating array [..., K] (row-major) into the u8 blocks tensor above,
// and decode one back.
Tensor quantize_weights(const Array& values, const std::string& type, const std::string& name = "");
Array quantize_array(const Array& values, const std::string& type);
Array dequantize_array(const Array& blocks, const std::string& type);

}  // namespace tessera::ops
