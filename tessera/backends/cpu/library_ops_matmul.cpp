// matmul as GEMM library calls (f32: sgemm with a fused epilogue; f64: dgemm). Operands are read in
// place when each matrix is row-major or transposed (so transpose(b) costs nothing); batches that
// broadcast are walked with precomputed offsets, and a batch over an unbatched right operand folds
// into one tall GEMM. A bias add, an activation and a residual add that follow a matmul (each the
// only use of the previous value) are fused into its epilogue (found by backends/common/epilogues.h).
#include <fmt/format.h>

#include "tessera/backends/cpu/library_ops.h"
#include "tessera/kernels/cpu/gemm.h"

namespace tessera::backends::cpu {
namespace {

using kernels::Activation;

// A matrix operand as GEMM wants it: stored row-major (trans = false) or as its transpose.
struct MatrixArg {
  bool trans = false;
  int64_t ld = 1;
};

// Whether a rows x cols matrix with the given strides can be passed to GEMM without a copy.
bool as_matrix(int64_t rows, int64_t cols, int64_t rs, int64_t cs, MatrixArg* out) {
  if ((cs == 1 || cols <= 1) && (rows <= 1 || rs >= std::max<int64_t>(cols, 1))) {
    *out = {false, rows <= 1 ? std::max<int64_t>(cols, 1) : rs};
    return true;
  }
  if ((rs == 1 || rows <= 1) && (cols <= 1 || cs >= std::max<int64_t>(rows, 1))) {
    *out = {true, cols <= 1 ? std::max<int64_t>(rows, 1) : cs};
    return true;
  }
  return false;
}

// The operand's matrix (last two axes; a 1-D operand is a row for A, a column for B) and its batch.
struct OperandView {
  int64_t rows = 0, cols = 0, rs = 0, cs = 0;
  Shape batch;
  Strides batch_strides;
};

OperandView operand_view(const Layout& l, bool is_a) {
  OperandView v;
  const size_t r = l.shape.size();
  if (r == 1) {
    v.rows = is_a ? 1 : l.shape[0];
    v.cols = is_a ? l.shape[0] : 1;
    v.rs = is_a ? 0 : l.strides[0];
    v.cs = is_a ? l.strides[0] : 0;
    return v;
  }
  v.rows = l.shape[r - 2];
  v.cols = l.shape[r - 1];
  v.rs = l.strides[r - 2];
  v.cs = l.strides[r - 1];
  v.batch.assign(l.shape.begin(), l.shape.end() - 2);
  v.batch_strides.assign(l.strides.begin(), l.strides.end() - 2);
  return v;
}

// Element offsets of each batch matrix, for the broadcast batch shape `batch`.
std::vector<int64_t> batch_offsets(const OperandView& v, const Shape& batch) {
  const int64_t count = shape_numel(batch);
  std::vector<int64_t> offsets(static_cast<size_t>(count), 0);
  const size_t lead = batch.size() - v.batch.size();
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, off = 0;
    for (size_t d = batch.size(); d-- > 0;) {
      const int64_t idx = rest % batch[d];
      rest /= batch[d];
      if (d >= lead && v.batch[d - lead] != 1) off += idx * v.batch_strides[d - lead];
    }
    offsets[static_cast<size_t>(i)] = off;
  }
  return offsets;
}

bool float_types(const ir::Node& node, DType want) {
  return node.input(0).dtype() == want && node.input(1).dtype() == want && node.output_types()[0].dtype == want;
}

bool claim_matmul(const ir::Node& node) {
  return float_types(node, DType::f32) || float_types(node, DType::f64);
}

struct GemmShape {
  MatrixArg a, b;
  int64_t m = 0, n = 0, k = 0;
  std::vector<int64_t> a_off, b_off;  // per batch, in elements
};

template <class T>
class GemmStep final : public Step {
 public:
  GemmStep(GemmShape s, Operand a, Operand b, Operand c, Operand bias, Activation act, Operand residual,
           Activation post)
      : s_(std::move(s)), a_(a), b_(b), c_(c), bias_(bias), act_(act), residual_(residual), post_(post) {}

  void run(const RunContext& ctx) const override {
    const T* a = ctx.ptr<const T>(a_);
    const T* b = ctx.ptr<const T>(b_);
    T* c = ctx.ptr<T>(c_);
    const auto batches = static_cast<int64_t>(s_.a_off.size());
    const int64_t mn = s_.m * s_.n;
    auto one = [&](int64_t i, runtime::ThreadPool* pool) {
      const auto u = static_cast<size_t>(i);
      if constexpr (std::is_same_v<T, float>) {
        kernels::GemmEpilogue e;
        e.bias = bias_.buffer >= 0 ? ctx.ptr<const float>(bias_) : nullptr;
        e.activation = act_;
        e.residual = residual_.buffer >= 0 ? ctx.ptr<const float>(residual_) + i * mn : nullptr;
        e.ldr = s_.n;
        e.post_activation = post_;
        kernels::sgemm(s_.a.trans, s_.b.trans, s_.m, s_.n, s_.k, 1.0f, a + s_.a_off[u], s_.a.ld, b + s_.b_off[u],
                       s_.b.ld, 0.0f, c + i * mn, std::max<int64_t>(s_.n, 1), e, pool);
      } else {
        kernels::dgemm(s_.a.trans, s_.b.trans, s_.m, s_.n, s_.k, 1.0, a + s_.a_off[u], s_.a.ld, b + s_.b_off[u],
                       s_.b.ld, 0.0, c + i * mn, std::max<int64_t>(s_.n, 1), pool);
      }
    };
    // Many small products: one per task (nested GEMM calls then run serially).
    const double flops = 2.0 * static_cast<double>(mn) * static_cast<double>(s_.k);
    if (batches > 1 && flops < 4.0e6 && ctx.pool->size() > 1) {
      ctx.pool->parallel_for(batches, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) one(i, ctx.pool);
      });
    } else {
      for (int64_t i = 0; i < batches; ++i) one(i, ctx.pool);
    }
  }
  StepKind kind() const override { return StepKind::library; }
  std::string describe() const override {
    std::string extra;
    if (bias_.buffer >= 0) extra += " +bias";
    if (act_ != Activation::none) extra += std::string(" ") + kernels::activation_name(act_);
    if (residual_.buffer >= 0) extra += " +residual";
    if (post_ != Activation::none) extra += std::string(" ") + kernels::activation_name(post_);
    return fmt::format("{} {}x{}x{}{}{}{}{}", std::is_same_v<T, float> ? "sgemm" : "dgemm", s_.m, s_.n, s_.k,
                       s_.a.trans ? " A^T" : "", s_.b.trans ? " B^T" : "",
                       s_.a_off.size() > 1 ? fmt::format(" x{} batches", s_.a_off.size()) : "", extra);
  }

 private:
  GemmShape s_;
  Operand a_, b_, c_, bias_;
  Activation act_;
  Operand residual_;
  Activation post_;
};

bool lower_matmul(Lowering& L, const ir::NodePtr& node) {
  if (!claim_matmul(*node)) return false;
  const bool f32 = node->output_types()[0].dtype == DType::f32;
  const Epilogue* epi = L.epilogue(*node);
  const bool transposed = epi != nullptr && epi->transposed;
  int32_t a = L.value(node->input(0)), b = L.value(node->input(1));
  OperandView av = operand_view(L.info(a).layout, true), bv = operand_view(L.info(b).layout, false);
  GemmShape s;
  if (!as_matrix(av.rows, av.cols, av.rs, av.cs, &s.a)) {
    a = L.packed(a);
    av = operand_view(L.info(a).layout, true);
    as_matrix(av.rows, av.cols, av.rs, av.cs, &s.a);
  }
  if (!as_matrix(bv.rows, bv.cols, bv.rs, bv.cs, &s.b)) {
    b = L.packed(b);
    bv = operand_view(L.info(b).layout, false);
    as_matrix(bv.rows, bv.cols, bv.rs, bv.cs, &s.b);
  }
  s.m = av.rows;
  s.k = av.cols;
  s.n = bv.cols;
  const Shape batch = broadcast_shapes(av.batch, bv.batch, "matmul");
  s.a_off = batch_offsets(av, batch);
  s.b_off = batch_offsets(bv, batch);
  // A batch of row-major A matrices stacked evenly over one B is a single GEMM with m * batch rows.
  const auto count = static_cast<int64_t>(s.a_off.size());
  bool fold = count > 1 && !s.a.trans && s.m > 0 && !transposed;
  for (int64_t i = 0; fold && i < count; ++i) {
    const auto u = static_cast<size_t>(i);
    fold = s.b_off[u] == s.b_off[0] && s.a_off[u] == s.a_off[0] + i * s.m * s.a.ld;
  }
  if (fold) {
    s.m *= count;
    s.a_off.resize(1);
    s.b_off.resize(1);
  }
  if (transposed) {  // C^T = B^T A^T: swap the operands, flip their transposition
    std::swap(s.a, s.b);
    s.a.trans = !s.a.trans;
    s.b.trans = !s.b.trans;
    std::swap(s.m, s.n);
    std::swap(s.a_off, s.b_off);
    std::swap(a, b);
  }

  const ir::Value result = epi ? epi->result : ir::Value(node, 0);
  std::vector<int32_t> reads = {a, b};
  Operand bias_op, residual_op;
  if (epi && epi->bias.defined()) {
    const int32_t bias = L.packed(L.value(epi->bias));
    bias_op = L.operand(bias);
    reads.push_back(bias);
  }
  if (epi && epi->residual.defined()) {
    const int32_t residual = L.packed(L.value(epi->residual));
    residual_op = L.operand(residual);
    reads.push_back(residual);
  }
  const int32_t out = L.produce(result);
  const Operand ao = L.operand(a), bo = L.operand(b), co = L.operand(out);
  const Activation act = epi ? epi->activation : Activation::none;
  const Activation post = epi ? epi->post_activation : Activation::none;
  if (f32) {
    L.emit(std::make_unique<GemmStep<float>>(std::move(s), ao, bo, co, bias_op, act, residual_op, post), reads, {out});
  } else {
    L.emit(std::make_unique<GemmStep<double>>(std::move(s), ao, bo, co, bias_op, act, residual_op, post), reads,
           {out});
  }
  return true;
}

}  // namespace

void register_matmul_lowerings(LoweringTable& table) {
  table["matmul"] = {lower_matmul, claim_matmul, true};
}

}  // namespace tessera::backends::cpu
