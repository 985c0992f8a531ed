#pragma once
// Which nodes fuse into the tail of a matmul or convolution: a graph-level fusion decision, made once
// for every backend. A backend's matmul/conv lowering reads the result through Lowering::epilogue and
// may decline it (the unit's nodes are then lowered one by one).
#include <functional>
#include <unordered_map>
#include <vector>

#include "tessera/backends/common/compile_options.h"
#include "tessera/backends/common/lowering.h"
#include "tessera/ir/graph.h"

namespace tessera::backends::common {

// Fused tails found in `graph`, keyed by the matmul/conv node: f32 and f64 matmuls whose only use
// swaps the last two axes compute the transposed product (Fusion::transposed_product); f32 matmuls and
// f32 4-D convolutions take [+ bias] [activation] [+ residual] [activation] (Fusion::epilogue; ReLU6 is
// maximum(x, 0) then minimum(., 6) with scalar constants), and where the limits
// allow, quantized_matmul takes [+ bias] [+ residual]; each step the only
// use of the previous value. Each node is absorbed by at most one producer (the first in graph order),
// so two matmuls that meet in one add never both claim it.
// What a backend's fused tails can do (the CPU's kernels do all of it; cuBLASLt applies an activation
// to the sum of the product, the residual and the bias, so a residual after an activation is not
// its form, and it has ReLU and tanh-GELU only).
struct EpilogueLimits {
  std::vector<kernels::Activation> activations = {
      kernels::Activation::relu,    kernels::Activation::gelu, kernels::Activation::gelu_tanh, kernels::Activation::silu,
      kernels::Activation::sigmoid, kernels::Activation::tanh, kernels::Activation::relu6};
  bool residual_after_activation = true;
  // An activation of the sum with the residual (a ResNet block's ReLU), as Epilogue::post_activation.
  bool activation_after_residual = true;
  bool products = true;  // matmul heads (a backend whose product shader has no tails says no)
  bool convolutions = true;
  // quantized_matmul heads (f32 activations and result) taking [+ bias] [activation] [+ residual]: the
  // GPU matvecs apply them as they store (a decode step's residual adds were launches of their own),
  // with the activations in `quantized_activations` (none by default).
  bool quantized_products = false;
  std::vector<kernels::Activation> quantized_activations;
};

// The activations the GPU backends' product kernels and shaders apply as they store: cuBLASLt's
// epilogues have ReLU and tanh-GELU, and the CUDA matvecs and GLSL tails write the same two.
inline const std::vector<kernels::Activation> kGpuTailActivations = {kernels::Activation::relu,
                                                                     kernels::Activation::gelu_tanh};
// None, or one of kGpuTailActivations.
bool gpu_tail_applies(kernels::Activation a);

std::unordered_map<const ir::Node*, Epilogue> find_epilogues(const ir::Graph& graph,
                                                             const std::function<int64_t(const ir::Value&)>& uses,
                                                             FusionSet fusion, const EpilogueLimits& limits = {});

}  // namespace tessera::backends::common
