// quantized_matmul on f32 activations as a call to the block kernels (tessera/kernels/quant): the
// activations are quantized to the 8-bit block type that pairs with the weights and each block pair is
// an integer dot product, as llama.cpp computes it. That differs from the op's exact definition (the
// reference backend decodes the weights and multiplies in double) by the activations' rounding, about
// 0.4% of each block's largest value. Weight types without a kernel, and other activation dtypes, stay
// on the reference kernel. Constant Q4_0/Q8_0/Q4_K weights with rows in eights are re-laid once, when the
// executable binds its constants, into the x8 layout (kernels/quant/interleave_x8.h), on which the AVX2
// kernels need about half the instructions.
#include <fmt/format.h>

#include "tessera/backends/cpu/library_ops.h"
#include "tessera/core/page_out.h"
#include "tessera/kernels/quant/interleave_x8.h"
#include "tessera/kernels/quant/quant_matmul.h"
#include "tessera/quant/quantize.h"

namespace tessera::backends::cpu {
namespace {

using kernels::quant::GgmlType;

bool claim_quantized_matmul(const ir::Node& node) {
  const ir::Value& x = node.input(0);
  const ir::Value& w = node.input(1);
  if (x.dtype() != DType::f32 || node.output_types()[0].dtype != DType::f32) return false;
  if (w.dtype() != DType::u8 || w.rank() != 2) return false;
  return kernels::quant::has_kernel(quant::parse_type(node.attrs().get_string("type")));
}

class QuantizedMatmulStep final : public Step {
 public:
  QuantizedMatmulStep(GgmlType type, bool x8, int64_t m, int64_t n, int64_t k, Operand x, Operand w, Operand y)
      : type_(type), x8_(x8), m_(m), n_(n), k_(k), x_(x), w_(w), y_(y) {}
  void run(const RunContext& ctx) const override {
    const auto* w = ctx.ptr<const uint8_t>(w_);
    if (x8_) {
      kernels::quant::quantized_matmul_x8(type_, w, n_, k_, ctx.ptr<const float>(x_), m_, ctx.ptr<float>(y_), ctx.pool);
    } else {
      kernels::quant::quantized_matmul(type_, w, n_, k_, ctx.ptr<const float>(x_), m_, ctx.ptr<float>(y_), ctx.pool);
    }
  }
  StepKind kind() const override { return StepKind::library; }
  std::string describe() const override {
    return fmt::format("quantized_matmul {}{} [{}, {}] x [{}, {}]^T", quant::type_name(type_), x8_ ? " x8" : "", m_, k_,
                       n_, k_);
  }

 private:
  GgmlType type_;
  bool x8_;
  int64_t m_, n_, k_;
  Operand x_, w_, y_;
};

// The weights in the x8 layout when they are a whole graph constant that can take it, else -1.
int32_t x8_weights(Lowering& L, int32_t w, GgmlType type, int64_t n, int64_t k) {
  if (!kernels::quant::can_interleave_x8(type, n)) return -1;
  const Shape shape = L.info(w).layout.shape;
  return L.derived_constant(w, "x8", DType::u8, shape, [type, n, k](const Array& rows) {
    Array x8 = Array::empty(DType::u8, rows.shape());
    page_in(rows.raw_data(), rows.nbytes());
    kernels::quant::interleave_x8(type, rows.data<const uint8_t>(), n, k, x8.data<uint8_t>());
    // The kernels read only the copy now: the source (usually a mapped GGUF file) need not stay resident.
    page_out(rows.raw_data(), rows.nbytes());
    return x8;
  });
}

bool lower_quantized_matmul(Lowering& L, const ir::NodePtr& node) {
  if (!claim_quantized_matmul(*node)) return false;
  const GgmlType type = quant::parse_type(node->attrs().get_string("type"));
  const int32_t x = L.packed(L.value(node->input(0)));
  const int64_t k = node->input(0).shape().back();
  const int64_t m = k == 0 ? 0 : node->input(0).type().numel() / k;
  const int64_t n = node->input(1).shape()[0];
  const int32_t w_given = L.value(node->input(1));
  const int32_t w_x8 = x8_weights(L, w_given, type, n, k);
  const int32_t w = w_x8 >= 0 ? w_x8 : L.packed(w_given);
  const int32_t y = L.produce(ir::Value(node, 0));
  L.emit(std::make_unique<QuantizedMatmulStep>(type, w_x8 >= 0, m, n, k, L.operand(x), L.operand(w), L.operand(y)),
         {x, w}, {y});
  return true;
}

}  // namespace

void register_quant_lowerings(LoweringTable& table) {
  table["quantized_matmul"] = {lower_quantized_matmul, claim_quantized_matmul, true};
}

}  // namespace tessera::backends::cpu
