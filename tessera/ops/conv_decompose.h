#pragma once
// Decompositions (OpDef::decompose) of the convolution, pooling and resampling ops into gather/scatter_add on
// constant indices, where, reductions, reshapes/permutes and one matmul per convolution: ops the CUDA
// backend keeps, so CNNs run on the GPU without convolution kernels of their own.
#include <vector>

#include "tessera/ir/op_def.h"

namespace tessera::ops::conv_detail {

using DecomposeIn = std::vector<ir::Value>;

std::vector<ir::Value> conv_decompose(const DecomposeIn& in, const ir::Attrs& a);              // conv_decompose.cpp
std::vector<ir::Value> conv_input_grad_decompose(const DecomposeIn& in, const ir::Attrs& a);   // conv_decompose.cpp
std::vector<ir::Value> conv_weight_grad_decompose(const DecomposeIn& in, const ir::Attrs& a);  // conv_decompose.cpp
std::vector<ir::Value> max_pool_decompose(const DecomposeIn& in, const ir::Attrs& a);          // pool_decompose.cpp
std::vector<ir::Value> max_pool_grad_decompose(const DecomposeIn& in, const ir::Attrs& a);     // pool_decompose.cpp
std::vector<ir::Value> max_pool_gather_decompose(const DecomposeIn& in, const ir::Attrs& a);   // pool_decompose.cpp
std::vector<ir::Value> avg_pool_decompose(const DecomposeIn& in, const ir::Attrs& a);          // pool_decompose.cpp
std::vector<ir::Value> avg_pool_grad_decompose(const DecomposeIn& in, const ir::Attrs& a);     // pool_decompose.cpp
// The separable window operators, one product per spatial axis with an [out, in] matrix of the axis's
// taps (its transpose for the gradients); nearest resampling, one index_select per axis (exact in any
// dtype).
std::vector<ir::Value> adaptive_avg_pool_decompose(const DecomposeIn& in, const ir::Attrs& a);       // resample_decompose.cpp
std::vector<ir::Value> adaptive_avg_pool_grad_decompose(const DecomposeIn& in, const ir::Attrs& a);  // resample_decompose.cpp
std::vector<ir::Value> upsample_decompose(const DecomposeIn& in, const ir::Attrs& a);                // resample_decompose.cpp
std::vector<ir::Value> upsample_grad_decompose(const DecomposeIn& in, const ir::Attrs& a);           // resample_decompose.cpp

}  // namespace tessera::ops::conv_detail
