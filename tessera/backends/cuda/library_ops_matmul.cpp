// Matrix products on the CUDA backend: cuBLASLt over the operands' own memory. An operand whose last
// two axes are a row-major or a transposed matrix, and whose batch axes step uniformly (or not at
// all: a shared matrix), is read in place; any other layout is packed first.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "tessera/backends/cpu/library_ops.h"  // the view lowerings, which are backend-neutral
#include "tessera/backends/cuda/gemm.h"
#include "tessera/backends/cuda/simt_gemm.h"
#include "tessera/backends/cuda/steps.h"

namespace tessera::backends::cuda {

namespace {

using common::Layout;
using common::Lowering;
using common::Operand;

struct MatrixOperand {
  int32_t id = -1;
  bool transposed = false;
  int64_t ld = 0, batch_stride = 0;
};

// The operand as a (batched) matrix read in place, or nothing when its layout does not allow it.
std::optional<MatrixOperand> as_matrix(int32_t id, const Layout& l, const Shape& batch) {
  const size_t r = l.shape.size();
  const int64_t rows = l.shape[r - 2], cols = l.shape[r - 1], sr = l.strides[r - 2], sc = l.strides[r - 1];
  MatrixOperand m;
  m.id = id;
  if ((cols == 1 || sc == 1) && (rows == 1 || sr >= cols)) {
    m.ld = rows == 1 ? std::max<int64_t>(cols, 1) : sr;
  } else if ((rows == 1 || sr == 1) && (cols == 1 || sc >= rows)) {
    m.transposed = true;
    m.ld = cols == 1 ? std::max<int64_t>(rows, 1) : sc;
  } else {
    return std::nullopt;
  }
  // The batch axes (aligned to the right of the result's) must step by one stride, or not at all.
  const size_t nb = r - 2, lead = batch.size() - nb;
  std::vector<int64_t> step(batch.size(), 0);
  for (size_t d = 0; d < nb; ++d) step[lead + d] = l.shape[d] == 1 ? 0 : l.strides[d];
  int64_t inner = -1, expect = 0;
  bool shared = true;
  for (size_t d = batch.size(); d-- > 0;) {
    if (batch[d] == 1) continue;
    if (inner < 0) {
      inner = step[d];
      expect = step[d] * batch[d];
      shared = step[d] == 0;
      continue;
    }
    if (shared ? step[d] != 0 : step[d] != expect) return std::nullopt;
    expect *= batch[d];
  }
  m.batch_stride = inner < 0 ? 0 : inner;
  return m;
}

// The largest power of two up to 16 that divides every byte count given.
int alignment(std::initializer_list<int64_t> bytes) {
  int a = 16;
  for (int64_t b : bytes) {
    while (a > 1 && b % a != 0) a /= 2;
  }
  return a;
}

// The operand broadcast over the batch axes into a fresh packed temporary.
int32_t materialize(Lowering& L, int32_t id, DType dt, const Shape& batch) {
  const Layout& l = L.info(id).layout;
  const size_t r = l.shape.size(), nb = r - 2, lead = batch.size() - nb;
  Layout expanded;
  expanded.offset = l.offset;
  expanded.shape = batch;
  expanded.strides.assign(batch.size(), 0);
  for (size_t d = 0; d < nb; ++d) expanded.strides[lead + d] = l.shape[d] == 1 ? 0 : l.strides[d];
  for (size_t d = r - 2; d < r; ++d) {
    expanded.shape.push_back(l.shape[d]);
    expanded.strides.push_back(l.strides[d]);
  }
  const int32_t t = L.temporary(dt, expanded.shape);
  // As the shared packing does: the plan carries both offsets, the operands point at the buffers.
  const common::CopyPlan plan = common::CopyPlan::make(expanded, L.info(t).layout, dtype_size(dt));
  L.emit(L.steps().copy(plan, Operand{L.info(id).buffer, 0}, Operand{L.info(t).buffer, 0}, "matmul operand broadcast"),
         {id}, {t});
  return t;
}

MatrixOperand matrix_operand(Lowering& L, int32_t id, DType dt, const Shape& batch) {
  if (auto m = as_matrix(id, L.info(id).layout, batch)) return *m;
  const int32_t p = L.packed(id);
  if (auto m = as_matrix(p, L.info(p).layout, batch)) return *m;
  const int32_t t = materialize(L, p, dt, batch);
  return *as_matrix(t, L.info(t).layout, batch);
}

std::atomic<int>& tf32_slot() {
  static std::atomic<int> slot{-1};
  return slot;
}

// A product step over a plan made at compile time: cuBLASLt's (GemmPlan) or the SIMT kernel's (SimtGemm),
// which run with the same pointers. `fixed_a`: A is that device memory (a vector of ones for sums)
// instead of an operand. `bias` and `residual` are read when the plan's shape has them.
template <class Plan>
class ProductStep final : public common::Step {
 public:
  ProductStep(std::unique_ptr<Plan> plan, std::string prefix, Operand a, Operand b, Operand d,
              const void* fixed_a = nullptr, Operand bias = {}, Operand residual = {})
      : plan_(std::move(plan)), prefix_(std::move(prefix)), a_(a), b_(b), d_(d), bias_(bias), residual_(residual),
        fixed_a_(fixed_a) {}
  void run(const common::RunContext& ctx) const override {
    const void* a = fixed_a_ != nullptr ? fixed_a_ : ctx.ptr<const std::byte>(a_);
    const void* bias = plan_->shape().bias ? ctx.ptr<const std::byte>(bias_) : nullptr;
    const void* residual = plan_->shape().residual ? ctx.ptr<const std::byte>(residual_) : nullptr;
    plan_->run(a, ctx.ptr<const std::byte>(b_), bias, residual, ctx.ptr<std::byte>(d_), stream_of(ctx));
  }
  common::StepKind kind() const override { return common::StepKind::library; }
  std::string describe() const override { return prefix_ + plan_->describe(); }

 private:
  std::unique_ptr<Plan> plan_;
  std::string prefix_;
  Operand a_, b_, d_, bias_, residual_;
  const void* fixed_a_;
};

bool claim_matmul(const ir::Node& node) { return cuda_matmul_supported(node); }

// A sum over the leading axes, [M, N] -> [N] with M = their product, as the product ones[1, M] @ x:
// cuBLASLt reads x at the memory's speed with many threads per output, where a generated kernel
// would give each of the N outputs one thread and M sequential loads.
bool is_leading_sum(const ir::Node& node) {
  if (node.op_name() != "sum" || node.num_outputs() != 1) return false;
  const DType dt = node.input(0).dtype();
  if (dt != DType::f32 && dt != DType::f16 && dt != DType::bf16) return false;
  if (node.output_types()[0].dtype != dt) return false;
  const ir::Value& x = node.input(0);
  if (x.rank() == 0 || x.type().numel() == 0) return false;
  std::vector<int64_t> axes = normalize_axes(node.attrs().get_ints("axes"), x.rank(), "sum");
  std::sort(axes.begin(), axes.end());
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] != static_cast<int64_t>(i)) return false;
  }
  int64_t m = 1;
  for (int64_t a : axes) m *= x.shape()[static_cast<size_t>(a)];
  // Short sums are cheap as generated code and fuse there with the kernel that makes their input (a
  // batch-64 step's ReLU-masked gradient and its bias gradient: one launch, not a kernel and a product);
  // so are sums into few outputs, which the generated kernels spread over a warp or a block per output
  // (a 1 x 1 x 64 GEMV took 17 us).
  const int64_t n = x.type().numel() / m;
  return !axes.empty() && m >= 256 && n >= 32;
}

bool lower_leading_sum(Lowering& L, const ir::NodePtr& node) {
  if (!is_leading_sum(*node)) return false;
  const ir::Value& xv = node->input(0);
  const DType dt = xv.dtype();
  std::vector<int64_t> axes = normalize_axes(node->attrs().get_ints("axes"), xv.rank(), "sum");
  int64_t m = 1;
  for (int64_t a : axes) m *= xv.shape()[static_cast<size_t>(a)];
  const int64_t n = xv.type().numel() / m;
  const int32_t x = L.packed(L.value(xv));
  const int32_t d = L.produce(ir::Value(node, 0));
  const int64_t es = static_cast<int64_t>(dtype_size(dt));
  GemmShape s;
  s.dtype = dt;
  s.m = 1;
  s.n = n;
  s.k = m;
  s.lda = m;
  s.ldb = n;
  s.ldd = n;
  const Operand ox = L.operand(x), od = L.operand(d);
  s.align_b = alignment({ox.byte_offset, s.ldb * es});
  s.align_d = alignment({od.byte_offset, s.ldd * es});
  Context& ctx = lowering_context();
  auto plan = std::make_unique<GemmPlan>(ctx.blas(), s, ctx.workspace(), ctx.workspace_bytes());
  L.emit(std::make_unique<ProductStep<GemmPlan>>(std::move(plan), "cublasLt ", Operand{}, ox, od, ctx.ones(dt, m)),
         {x}, {d});
  return true;
}

bool lower_matmul(Lowering& L, const ir::NodePtr& node) {
  if (!cuda_matmul_supported(*node)) return false;
  const ir::Value out(node, 0);
  const DType dt = out.dtype();
  const Shape& os = out.shape();
  const Shape batch(os.begin(), os.end() - 2);
  const MatrixOperand a = matrix_operand(L, L.value(node->input(0)), dt, batch);
  const MatrixOperand b = matrix_operand(L, L.value(node->input(1)), dt, batch);
  // A fused tail (common/epilogues.h, limited to what cuBLASLt's epilogues compute): + bias [n],
  // ReLU or tanh-GELU, + a residual laid out as the result.
  const common::Epilogue* epi = L.epilogue(*node);
  std::vector<int32_t> reads = {a.id, b.id};
  int32_t bias = -1, residual = -1;
  if (epi != nullptr && epi->bias.defined()) {
    bias = L.packed(L.value(epi->bias));
    reads.push_back(bias);
  }
  if (epi != nullptr && epi->residual.defined()) {
    residual = L.packed(L.value(epi->residual));
    reads.push_back(residual);
  }
  const int32_t d = L.produce(epi != nullptr ? epi->result : out);
  const int64_t es = static_cast<int64_t>(dtype_size(dt));
  GemmShape s;
  s.dtype = dt;
  s.batch = shape_numel(batch);
  s.m = os[os.size() - 2];
  s.n = os[os.size() - 1];
  s.k = node->input(0).shape().back();
  s.a_transposed = a.transposed;
  s.b_transposed = b.transposed;
  s.lda = a.ld;
  s.ldb = b.ld;
  s.stride_a = a.batch_stride;
  s.stride_b = b.batch_stride;
  MatrixOperand first = a, second = b;
  if (epi != nullptr && epi->transposed) {
    // The product's only use swaps its last two axes (a weight gradient laid out as the weight): D^T =
    // op(B)^T op(A)^T, the operands swapped and each read the other way, instead of a product and a copy.
    std::swap(first, second);
    std::swap(s.m, s.n);
    std::swap(s.lda, s.ldb);
    std::swap(s.stride_a, s.stride_b);
    s.a_transposed = !b.transposed;
    s.b_transposed = !a.transposed;
  }
  s.ldd = std::max<int64_t>(s.n, 1);
  s.stride_d = s.m * s.n;
  s.tf32 = dt == DType::f32 && tf32_enabled();
  s.bias = bias >= 0;
  s.residual = residual >= 0;
  if (epi != nullptr && !epi->transposed) {
    switch (epi->activation) {
      case kernels::Activation::none:
        break;
      case kernels::Activation::relu:
        s.activation = GemmActivation::relu;
        break;
      case kernels::Activation::gelu_tanh:
        s.activation = GemmActivation::gelu;
        break;
      default:
        throw common::LoweringFault(node.get(), "cuda: a matmul epilogue with an activation cuBLASLt lacks");
    }
  }
  const Operand oa = L.operand(first.id), ob = L.operand(second.id), od = L.operand(d);
  s.align_a = alignment({oa.byte_offset, s.lda * es, s.stride_a * es});
  s.align_b = alignment({ob.byte_offset, s.ldb * es, s.stride_b * es});
  s.align_d = alignment({od.byte_offset, s.ldd * es, s.stride_d * es});
  Context& ctx = lowering_context();
  const Operand obias = bias >= 0 ? L.operand(bias) : Operand{}, ores = residual >= 0 ? L.operand(residual) : Operand{};
  if (simt_gemm_suits(s, ctx.multiprocessors())) {
    L.emit(std::make_unique<ProductStep<SimtGemm>>(std::make_unique<SimtGemm>(ctx, s), "", oa, ob, od, nullptr, obias,
                                                   ores),
           reads, {d});
    return true;
  }
  auto plan = std::make_unique<GemmPlan>(ctx.blas(), s, ctx.workspace(), ctx.workspace_bytes());
  L.emit(std::make_unique<ProductStep<GemmPlan>>(std::move(plan), "cublasLt ", oa, ob, od, nullptr, obias, ores),
         reads, {d});
  return true;
}

}  // namespace

bool tf32_enabled() {
  const int v = tf32_slot().load();
  if (v >= 0) return v == 1;
  const char* env = std::getenv("TESSERA_TF32");  // read at every compile unless set_tf32 decided
  return env != nullptr && std::strcmp(env, "1") == 0;
}

void set_tf32(bool enabled) { tf32_slot().store(enabled ? 1 : 0); }

bool cuda_matmul_supported(const ir::Node& node) {
  if (node.op_name() != "matmul" || node.num_outputs() != 1 || node.inputs().size() != 2) return false;
  const DType dt = node.input(0).dtype();
  if (dt != DType::f32 && dt != DType::f16 && dt != DType::bf16) return false;
  if (node.input(1).dtype() != dt || node.input(0).rank() < 2 || node.input(1).rank() < 2) return false;
  // cuBLASLt refuses empty products (and a k = 0 product is a fill): the CPU takes them.
  return node.input(0).type().numel() > 0 && node.input(1).type().numel() > 0 && node.output_types()[0].numel() > 0;
}

const common::LoweringTable& cuda_lowerings() {
  static const common::LoweringTable table = [] {
    common::LoweringTable t;
    cpu::register_view_lowerings(t);
    t["matmul"] = {lower_matmul, claim_matmul, true};
    t["sum"] = {lower_leading_sum, is_leading_sum, true};
    register_index_lowerings(t);
    register_quant_lowerings(t);
    register_attention_lowerings(t);
    register_optim_lowerings(t);
    register_conv_lowerings(t);
    register_pool_lowerings(t);
    return t;
  }();
  return table;
}

}  // namespace tessera::backends::cuda
