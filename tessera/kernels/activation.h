#pragma once
// The activations a fused GEMM or convolution epilogue can apply. Backend-neutral: the graph-level
// epilogue analysis (backends/common/epilogues.h) names them, and each backend's kernels implement
// them (the CPU's formulas: kernels/cpu/activation.h).
namespace tessera::kernels {

// relu6 is minimum(maximum(x, 0), 6) (ONNX Clip(0, 6), MobileNet's activation), NaN passing through.
enum class Activation { none, relu, gelu, gelu_tanh, silu, sigmoid, tanh, relu6 };

// The name step descriptions and kernel names print ("" for none).
constexpr const char* activation_name(Activation a) {
  switch (a) {
    case Activation::none:
      return "";
    case Activation::relu:
      return "relu";
    case Activation::gelu:
      return "gelu";
    case Activation::gelu_tanh:
      return "tanh-gelu";
    case Activation::silu:
      return "silu";
    case Activation::sigmoid:
      return "sigmoid";
    case Activation::tanh:
      return "tanh";
    case Activation::relu6:
      return "relu6";
  }
  return "?";
}

}  // namespace tessera::kernels
