// quantized_matmul and dequantize on the CUDA backend, reading the GGUF blocks where they lie
// (quant_kernels.h). A product with few activation rows (decode, short prefill chunks) runs as matvec
// launches of up to 8 rows each, which read the weight once per launch at memory speed. Longer
// products decode the weight to f16 (16-bit float weights are used as they are), round the
// activations to the same type and multiply on the tensor cores through cuBLASLt into f32.
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "tessera/backends/common/epilogues.h"
#include "tessera/backends/common/quant_operands.h"
#include "tessera/backends/cuda/gemm.h"
#include "tessera/backends/cuda/narrow_activations.h"
#include "tessera/backends/cuda/quant_kernels.h"
#include "tessera/backends/cuda/steps.h"
#include "tessera/quant/ggml_type.h"

namespace tessera::backends::cuda {

namespace {

using common::Lowering;
using common::Operand;
using quant::GgmlType;

// Activation rows up to which the product stays a sequence of matvec launches: each launch reads every
// activation row once per weight value, so past a few rows the tensor cores win, at once for float
// weights (used in place) and past two launches for blocks (decoded to f16 first, a pass over the weight).
int64_t matvec_row_limit(GgmlType type) {
  return type == GgmlType::f32 || type == GgmlType::f16 || type == GgmlType::bf16 ? 4 : 16;
}
using common::QuantOperands;

bool parse(const ir::Node& node, QuantOperands& q) {
  if (!common::parse_quant_operands(node, q)) return false;
  return gpu_decodes(q.type, q.k);
}

// The weight as a tensor-core operand: f16/bf16/f32 rows are one already; other types decode to f16.
DType product_dtype(GgmlType type) {
  switch (type) {
    case GgmlType::f32:
      return DType::f32;
    case GgmlType::bf16:
      return DType::bf16;
    default:
      return DType::f16;
  }
}

bool claim_quantized_matmul(const ir::Node& node) {
  QuantOperands q;
  if (node.inputs().size() != 2 || node.input(1).rank() != 2 || node.output_types()[0].dtype != DType::f32) {
    return false;
  }
  if (!parse(node, q) || node.output_types()[0].numel() == 0) return false;
  const DType x = node.input(0).dtype();
  if (x == DType::f32) return true;
  // Activations already rounded to the product's 16-bit type (narrow_activations.h): tensor cores only.
  return x == product_dtype(q.type) && x != DType::f32 && node.input(0).type().numel() / q.k > matvec_row_limit(q.type);
}

bool claim_dequantize(const ir::Node& node) {
  QuantOperands q;
  return node.inputs().size() == 1 && parse(node, q) && node.output_types()[0].numel() > 0;
}

// The value in a packed buffer whose address suits 16-byte loads (a copy when it is a view at an
// unaligned offset).
int32_t aligned(Lowering& L, int32_t id, DType dt) {
  const int32_t p = L.packed(id);
  if (L.operand(p).byte_offset % 16 == 0) return p;
  const int32_t t = L.temporary(dt, L.info(p).layout.shape);
  const common::CopyPlan plan = common::CopyPlan::make(L.info(p).layout, L.info(t).layout, dtype_size(dt));
  L.emit(L.steps().copy(plan, Operand{L.info(p).buffer, 0}, Operand{L.info(t).buffer, 0}, "quant operand alignment"),
         {p}, {t});
  return t;
}

// A fused tail (common/epilogues.h): a bias [n], an activation of the biased product, and a residual
// laid out as the result; buffer -1 where the tail has none.
struct TailOperands {
  Operand bias, residual;
  kernels::Activation activation = kernels::Activation::none;
  template <class T>
  const T* bias_ptr(const common::RunContext& ctx) const {
    return bias.buffer < 0 ? nullptr : ctx.ptr<const T>(bias);
  }
  template <class T>
  const T* residual_ptr(const common::RunContext& ctx) const {
    return residual.buffer < 0 ? nullptr : ctx.ptr<const T>(residual);
  }
  std::string describe() const {
    const std::string act =
        activation == kernels::Activation::none ? "" : std::string(" ") + kernels::activation_name(activation);
    return std::string(bias.buffer >= 0 ? " +bias" : "") + act + (residual.buffer >= 0 ? " +residual" : "");
  }
};

class MatvecStep final : public common::Step {
 public:
  MatvecStep(Context& ctx, const QuantOperands& q, Operand w, Operand x, Operand y, TailOperands adds)
      : q_(q), w_(w), x_(x), y_(y), tail_operands_(adds) {
    full_ = quant_matvec_kernel(ctx, q.type, static_cast<int>(std::min<int64_t>(q.m, kMaxMatvecRows)), adds.activation);
    if (const int64_t tail = q.m % kMaxMatvecRows; q.m > kMaxMatvecRows && tail != 0) {
      tail_ = quant_matvec_kernel(ctx, q.type, static_cast<int>(tail), adds.activation);
    }
    warps_per_row_ = matvec_warps_per_row(q.type, q.n, q.k, full_.rows_per_warp, ctx.multiprocessors());
    tail_warps_per_row_ = tail_.kernel == nullptr
                              ? warps_per_row_
                              : matvec_warps_per_row(q.type, q.n, q.k, tail_.rows_per_warp, ctx.multiprocessors());
  }
  void run(const common::RunContext& ctx) const override {
    const auto* w = ctx.ptr<const std::byte>(w_);
    const auto* x = ctx.ptr<const float>(x_);
    auto* y = ctx.ptr<float>(y_);
    const float* bias = tail_operands_.bias_ptr<float>(ctx);
    const float* residual = tail_operands_.residual_ptr<float>(ctx);
    for (int64_t r = 0; r < q_.m; r += kMaxMatvecRows) {
      const bool full = q_.m - r >= kMaxMatvecRows || tail_.kernel == nullptr;
      const QuantKernel& k = full ? full_ : tail_;
      launch_quant_matvec(k, w, x + r * q_.k, y + r * q_.n, q_.n, q_.k, q_.row_bytes,
                          full ? warps_per_row_ : tail_warps_per_row_, stream_of(ctx),
                          MatvecTail{bias, residual == nullptr ? nullptr : residual + r * q_.n});
    }
  }
  common::StepKind kind() const override { return common::StepKind::library; }
  std::string describe() const override {
    return fmt::format("cuda {} matvec {}x{}x{}{} ({} warps per {} rows)", quant::type_name(q_.type), q_.m, q_.n, q_.k,
                       tail_operands_.describe(), warps_per_row_, full_.rows_per_warp);
  }

 private:
  QuantOperands q_;
  Operand w_, x_, y_;
  TailOperands tail_operands_;
  QuantKernel full_, tail_;
  int warps_per_row_ = 1, tail_warps_per_row_ = 1;
};

bool decodes_for_product(GgmlType type) {
  return type != GgmlType::f32 && type != GgmlType::f16 && type != GgmlType::bf16;
}

class TensorCoreProductStep final : public common::Step {
 public:
  TensorCoreProductStep(Context& ctx, const QuantOperands& q, Operand w, Operand x, Operand y, TailOperands adds,
                        Operand w16, Operand x16, std::unique_ptr<GemmPlan> plan)
      : q_(q), w_(w), x_(x), y_(y), w16_(w16), x16_(x16), tail_operands_(adds), plan_(std::move(plan)),
        sms_(ctx.multiprocessors()) {
    const DType dt = product_dtype(q.type);
    if (decodes_for_product(q.type)) decode_ = dequantize_kernel(ctx, q.type, dt);
    if (dt != DType::f32 && x16.buffer >= 0) narrow_ = narrow_kernel(ctx, dt);
  }
  void run(const common::RunContext& ctx) const override {
    const cudaStream_t stream = stream_of(ctx);
    const void* w = ctx.ptr<const std::byte>(w_);
    const void* x = ctx.ptr<const std::byte>(x_);
    if (decode_.kernel != nullptr) {
      void* w16 = ctx.ptr<std::byte>(w16_);
      launch_dequantize(decode_, w, w16, q_.n, q_.k, q_.row_bytes, sms_, stream);
      w = w16;
    }
    if (narrow_.kernel != nullptr) {
      void* x16 = ctx.ptr<std::byte>(x16_);
      launch_narrow(narrow_, static_cast<const float*>(x), x16, q_.m * q_.k, sms_, stream);
      x = x16;
    }
    plan_->run(x, w, tail_operands_.bias_ptr<std::byte>(ctx), tail_operands_.residual_ptr<std::byte>(ctx),
               ctx.ptr<std::byte>(y_), stream);
  }
  common::StepKind kind() const override { return common::StepKind::library; }
  std::string describe() const override {
    return fmt::format("cuda {} product through {}", quant::type_name(q_.type), plan_->describe());
  }

 private:
  QuantOperands q_;
  Operand w_, x_, y_, w16_, x16_;
  TailOperands tail_operands_;
  std::unique_ptr<GemmPlan> plan_;
  QuantKernel decode_, narrow_;
  int sms_;
};

bool lower_quantized_matmul(Lowering& L, const ir::NodePtr& node) {
  QuantOperands q;
  if (!claim_quantized_matmul(*node) || !parse(*node, q)) return false;
  q.n = node->input(1).shape()[0];
  q.m = node->input(0).type().numel() / q.k;
  const DType x_type = node->input(0).dtype();
  const int32_t x = aligned(L, L.value(node->input(0)), x_type);
  const int32_t w = aligned(L, L.value(node->input(1)), DType::u8);
  // A fused tail (common/epilogues.h with quantized_products): + bias [n], ReLU or tanh-GELU
  // (quantized_activations), + a residual.
  const common::Epilogue* epi = L.epilogue(*node);
  std::vector<int32_t> reads = {x, w};
  TailOperands tail;
  if (epi != nullptr) {
    if (!common::gpu_tail_applies(epi->activation) || epi->post_activation != kernels::Activation::none) {
      throw common::LoweringFault(node.get(), "cuda: a quantized product's tail with an activation it lacks");
    }
    tail.activation = epi->activation;
  }
  if (epi != nullptr && epi->bias.defined()) {
    reads.push_back(aligned(L, L.value(epi->bias), DType::f32));
    tail.bias = L.operand(reads.back());
  }
  if (epi != nullptr && epi->residual.defined()) {
    reads.push_back(aligned(L, L.value(epi->residual), DType::f32));
    tail.residual = L.operand(reads.back());
  }
  const int32_t y = L.produce(epi != nullptr ? epi->result : ir::Value(node, 0));
  Context& ctx = lowering_context();
  if (q.m <= matvec_row_limit(q.type)) {
    L.emit(std::make_unique<MatvecStep>(ctx, q, L.operand(w), L.operand(x), L.operand(y), tail), reads, {y});
    return true;
  }
  const DType dt = product_dtype(q.type);
  std::vector<int32_t> scratch;
  Operand w16, x16;
  if (decodes_for_product(q.type)) {
    scratch.push_back(L.scratch(q.n * q.k * static_cast<int64_t>(dtype_size(dt))));
    w16 = Operand{scratch.back(), 0};
  }
  if (dt != DType::f32 && x_type == DType::f32) {  // else x is in the product's type already
    scratch.push_back(L.scratch(q.m * q.k * static_cast<int64_t>(dtype_size(dt))));
    x16 = Operand{scratch.back(), 0};
  }
  GemmShape s;
  s.dtype = dt;
  s.f32_output = dt != DType::f32;
  s.m = q.m;
  s.n = q.n;
  s.k = q.k;
  s.b_transposed = true;  // the weight is stored [n, k]
  s.lda = q.k;
  s.ldb = q.k;
  s.ldd = q.n;
  s.tf32 = dt == DType::f32 && tf32_enabled();
  s.bias = tail.bias.buffer >= 0;
  s.residual = tail.residual.buffer >= 0;
  s.activation = tail.activation == kernels::Activation::relu        ? GemmActivation::relu
                 : tail.activation == kernels::Activation::gelu_tanh ? GemmActivation::gelu
                                                                     : GemmActivation::none;
  s.align_d = L.operand(y).byte_offset % 16 == 0 && (q.n * 4) % 16 == 0 ? 16 : 4;
  const int64_t es = static_cast<int64_t>(dtype_size(dt));
  s.align_a = (q.k * es) % 16 == 0 ? 16 : static_cast<int>(es);
  s.align_b = s.align_a;
  auto plan = std::make_unique<GemmPlan>(ctx.blas(), s, ctx.workspace(), ctx.workspace_bytes());
  L.emit(std::make_unique<TensorCoreProductStep>(ctx, q, L.operand(w), L.operand(x), L.operand(y), tail, w16, x16,
                                                 std::move(plan)),
         reads, {y}, scratch);
  return true;
}

class DequantizeStep final : public common::Step {
 public:
  DequantizeStep(Context& ctx, const QuantOperands& q, Operand w, Operand y)
      : q_(q), w_(w), y_(y), kernel_(dequantize_kernel(ctx, q.type, DType::f32)), sms_(ctx.multiprocessors()) {}
  void run(const common::RunContext& ctx) const override {
    launch_dequantize(kernel_, ctx.ptr<const std::byte>(w_), ctx.ptr<std::byte>(y_), q_.m, q_.k, q_.row_bytes, sms_,
                      stream_of(ctx));
  }
  common::StepKind kind() const override { return common::StepKind::library; }
  std::string describe() const override {
    return fmt::format("cuda dequantize {} rows of {} {}", q_.m, q_.k, quant::type_name(q_.type));
  }

 private:
  QuantOperands q_;
  Operand w_, y_;
  QuantKernel kernel_;
  int sms_;
};

bool lower_dequantize(Lowering& L, const ir::NodePtr& node) {
  QuantOperands q;
  if (!claim_dequantize(*node) || !parse(*node, q)) return false;
  q.m = node->input(0).type().numel() / q.row_bytes;
  const int32_t w = aligned(L, L.value(node->input(0)), DType::u8);
  const int32_t y = L.produce(ir::Value(node, 0));
  L.emit(std::make_unique<DequantizeStep>(lowering_context(), q, L.operand(w), L.operand(y)), {w}, {y});
  return true;
}

}  // namespace

DType tensor_core_activation_type(const ir::Node& node) {
  QuantOperands q;
  if (node.op_name() != "quantized_matmul" || node.inputs().size() != 2 || node.input(1).rank() != 2 || !parse(node, q)) {
    return DType::f32;
  }
  if (node.input(0).type().numel() / q.k <= matvec_row_limit(q.type)) return DType::f32;
  return product_dtype(q.type);
}

void register_quant_lowerings(common::LoweringTable& table) {
  table["quantized_matmul"] = {lower_quantized_matmul, claim_quantized_matmul, true};
  table["dequantize"] = {lower_dequantize, claim_dequantize, true};
}

}  // namespace tessera::backends::cuda
