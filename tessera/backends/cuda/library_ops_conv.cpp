// 2-D f32 convolutions and their two gradients on the CUDA backend, as implicit GEMMs (conv_gemm.h), or
// where many channels meet on both sides as an explicit im2col and a cuBLASLt product (conv_im2col.h).
// What is not claimed here (other dtypes and ranks, groups > 1) decomposes into im2col and products
// before the lowering (ops/conv_decompose.cpp).
#include "tessera/backends/common/conv_geometry.h"
#include "tessera/backends/cuda/conv_gemm.h"
#include "tessera/backends/cuda/conv_im2col.h"
#include "tessera/backends/cuda/steps.h"

namespace tessera::backends::cuda {

namespace {

using common::Lowering;
using common::Operand;

std::optional<kernels::Conv2dGeometry> implicit_gemm_geometry(const ir::Node& node) {
  std::optional<kernels::Conv2dGeometry> g = common::f32_conv2d_geometry(node);
  if (!g || !conv_gemm_suits(*g)) return std::nullopt;
  return g;
}

class ConvStep final : public common::Step {
 public:
  ConvStep(std::unique_ptr<SimtGemm> plan, Operand a, Operand b, Operand bias, Operand residual, Operand d)
      : plan_(std::move(plan)), a_(a), b_(b), bias_(bias), residual_(residual), d_(d) {}
  void run(const common::RunContext& ctx) const override {
    const void* bias = plan_->shape().bias ? ctx.ptr<const std::byte>(bias_) : nullptr;
    const void* residual = plan_->shape().residual ? ctx.ptr<const std::byte>(residual_) : nullptr;
    plan_->run(ctx.ptr<const std::byte>(a_), ctx.ptr<const std::byte>(b_), bias, residual, ctx.ptr<std::byte>(d_),
               stream_of(ctx));
  }
  common::StepKind kind() const override { return common::StepKind::library; }
  std::string describe() const override { return plan_->describe(); }

 private:
  std::unique_ptr<SimtGemm> plan_;
  Operand a_, b_, bias_, residual_, d_;
};

// The explicit form: the same operands, plus the columns and the channel-major matrix in scratch memory.
class Im2colConvStep final : public common::Step {
 public:
  Im2colConvStep(std::unique_ptr<Im2colConv> plan, Operand a, Operand b, Operand bias, Operand residual, Operand d,
                 Operand columns, Operand transposed)
      : plan_(std::move(plan)), a_(a), b_(b), bias_(bias), residual_(residual), d_(d), columns_(columns),
        transposed_(transposed) {}
  void run(const common::RunContext& ctx) const override {
    const void* bias = bias_.buffer >= 0 ? ctx.ptr<const std::byte>(bias_) : nullptr;
    const void* residual = residual_.buffer >= 0 ? ctx.ptr<const std::byte>(residual_) : nullptr;
    plan_->run(ctx.ptr<const std::byte>(a_), ctx.ptr<const std::byte>(b_), bias, residual, ctx.ptr<std::byte>(d_),
               ctx.ptr<std::byte>(columns_), ctx.ptr<std::byte>(transposed_), stream_of(ctx));
  }
  common::StepKind kind() const override { return common::StepKind::library; }
  std::string describe() const override { return plan_->describe(); }

 private:
  std::unique_ptr<Im2colConv> plan_;
  Operand a_, b_, bias_, residual_, d_, columns_, transposed_;
};

bool claim_conv(const ir::Node& node) { return implicit_gemm_geometry(node).has_value(); }

bool lower_conv(Lowering& L, const ir::NodePtr& node) {
  const std::optional<kernels::Conv2dGeometry> g = implicit_gemm_geometry(*node);
  if (!g) return false;
  // The kernel's A and B: conv (x, w[, bias]) -> A = w, B = x; conv_input_grad (dy, w) -> A = w, B = dy;
  // conv_weight_grad (x, dy) -> A = dy, B = x.
  const ConvProduct kind = common::conv_product_of(*node);
  const int32_t a = L.packed(L.value(node->input(1)));
  const int32_t b = L.packed(L.value(node->input(0)));
  std::vector<int32_t> reads = {a, b};
  const bool has_bias = kind == ConvProduct::forward && node->inputs().size() == 3;
  Operand bias;
  if (has_bias) {
    reads.push_back(L.packed(L.value(node->input(2))));
    bias = L.operand(reads.back());
  }
  // The forward pass's fused tail (common/epilogues.h, within the CUDA limits: activation(v + bias +
  // residual), ReLU or tanh-GELU), applied as the product stores.
  const common::Epilogue* epi = kind == ConvProduct::forward ? L.epilogue(*node) : nullptr;
  ConvTail tail;
  Operand residual;
  if (epi != nullptr) {
    if (epi->bias.defined() || epi->post_activation != kernels::Activation::none ||
        (epi->activation != kernels::Activation::none && epi->activation != kernels::Activation::relu &&
         epi->activation != kernels::Activation::gelu_tanh)) {
      throw common::LoweringFault(node.get(), "cuda: a convolution epilogue the implicit GEMM's tail lacks");
    }
    tail.activation = epi->activation == kernels::Activation::relu        ? GemmActivation::relu
                      : epi->activation == kernels::Activation::gelu_tanh ? GemmActivation::gelu
                                                                           : GemmActivation::none;
    if (epi->residual.defined()) {
      reads.push_back(L.packed(L.value(epi->residual)));
      residual = L.operand(reads.back());
      tail.residual = true;
    }
  }
  tail.bias = has_bias;
  const int32_t d = L.produce(epi != nullptr ? epi->result : ir::Value(node, 0));
  if (im2col_conv_suits(kind, *g)) {
    const Operand a_operand = L.operand(a), d_operand = L.operand(d);
    auto plan = std::make_unique<Im2colConv>(lowering_context(), kind, *g, tail, a_operand.byte_offset % 16 == 0,
                                             d_operand.byte_offset % 16 == 0);
    const std::vector<int32_t> scratch = {L.scratch(plan->columns_bytes()), L.scratch(plan->transposed_bytes())};
    L.emit(std::make_unique<Im2colConvStep>(std::move(plan), a_operand, L.operand(b), bias, residual, d_operand,
                                            Operand{scratch[0], 0}, Operand{scratch[1], 0}),
           reads, {d}, scratch);
    return true;
  }
  L.emit(std::make_unique<ConvStep>(make_conv_gemm(lowering_context(), kind, *g, tail), L.operand(a), L.operand(b),
                                    bias, residual, L.operand(d)),
         reads, {d});
  return true;
}

}  // namespace

void register_conv_lowerings(common::LoweringTable& table) {
  for (const char* op : {"conv", "conv_input_grad", "conv_weight_grad"}) table[op] = {lower_conv, claim_conv, true};
}

}  // namespace tessera::backends::cuda
