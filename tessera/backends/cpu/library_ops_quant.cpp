// quantized_matmul on f32 activations as a call to the block kernels (tessera/kernels/quant): the
// activations are quantized to the 8-bit block type that pairs with the weights and each block pair is
// an integer dot product, as llama.cpp computes it. That differs from the op's exact definition (the
// reference backend decodes the weights and multiplies in double) by the activations' rounding, about
// 0.4% of each block's largest value. Weight types without a kernel, and other activation dtypes, stay
// on the reference kernel.
#include <fmt/format.h>

#include "tessera/backends/cpu/lowering.h"
#include "tessera/kernels/quant/quant_matmul.h"
#include "tessera/quant/quantize.h"

namespace tessera::backends::cpu {
namespace {

using kernels::quant::GgmlType;

bool has_kernel(GgmlType type) {
  try {
    (void)kernels::quant::activation_type(type);
    return true;
  } catch (const Error&) {
    return false;
  }
}

bool claim_quantized_matmul(const ir::Node& node) {
  const ir::Value& x = node.input(0);
  const ir::Value& w = node.input(1);
  if (x.dtype() != DType::f32 || node.output_types()[0].dtype != DType::f32) return false;
  if (w.dtype() != DType::u8 || w.rank() != 2) return false;
  return has_kernel(quant::parse_type(node.attrs().get_string("type")));
}

class QuantizedMatmulStep final : public Step {
 public:
  QuantizedMatmulStep(GgmlType type, int64_t m, int64_t n, int64_t k, Operand x, Operand w, Operand y)
      : type_(type), m_(m), n_(n), k_(k), x_(x), w_(w), y_(y) {}
  void run(const RunContext& ctx) const override {
    kernels::quant::quantized_matmul(type_, ctx.ptr<const uint8_t>(w_), n_, k_, ctx.ptr<const float>(x_), m_,
                                     ctx.ptr<float>(y_), ctx.pool);
  }
  StepKind kind() const override { return StepKind::library; }
  std::string describe() const override {
    return fmt::format("quantized_matmul {} [{}, {}] x [{}, {}]^T", quant::type_name(type_), m_, k_, n_, k_);
  }

 private:
  GgmlType type_;
  int64_t m_, n_, k_;
  Operand x_, w_, y_;
};

bool lower_quantized_matmul(Lowering& L, const ir::NodePtr& node) {
  if (!claim_quantized_matmul(*node)) return false;
  const GgmlType type = quant::parse_type(node->attrs().get_string("type"));
  const int32_t x = L.packed(L.value(node->input(0)));
  const int32_t w = L.packed(L.value(node->input(1)));
  const int32_t y = L.produce(ir::Value(node, 0));
  const int64_t k = node->input(0).shape().back();
  const int64_t m = k == 0 ? 0 : node->input(0).type().numel() / k;
  const int64_t n = node->input(1).shape()[0];
  L.emit(std::make_unique<QuantizedMatmulStep>(type, m, n, k, L.operand(x), L.operand(w), L.operand(y)), {x, w}, {y});
  return true;
}

}  // namespace

void register_quant_lowerings(LoweringTable& table) {
  table["quantized_matmul"] = {lower_quantized_matmul, claim_quantized_matmul, true};
}

}  // namespace tessera::backends::cpu
