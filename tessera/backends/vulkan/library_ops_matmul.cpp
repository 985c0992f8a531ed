// Matrix products on the Vulkan backend: the tiled shader of matmul_shader.h over row-major operands or
// transposes of them (a weight read as W^T where it lies), other strided operands packed first (a
// strided-copy dispatch); batch axes that broadcast are read with batch stride 0 when the operand is
// one matrix, and materialised otherwise. A product whose only use is its transpose (common/epilogues.h)
// is computed as D^T = B^T A^T, the operands swapped and each read the other way.
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "tessera/backends/common/epilogues.h"
#include "tessera/backends/cpu/library_ops.h"  // the view lowerings, which are backend-neutral
#include "tessera/backends/vulkan/library_ops.h"
#include "tessera/backends/vulkan/matmul_shader.h"
#include "tessera/backends/vulkan/steps.h"
#include "tessera/core/error.h"

namespace tessera::backends::vulkan {

namespace {

using common::Layout;
using common::Lowering;
using common::Operand;

struct MatrixOperand {
  int32_t id = -1;
  int64_t batch_stride = 0;  // elements between matrices (0: one matrix for the whole batch)
  uint64_t bytes = 0;        // what the shader may read
  bool transposed = false;   // stored as the transpose of the operand's [rows, cols] (packed [cols, rows])
};

// The value as a transposed operand when it is one matrix whose last two axes are a transpose of a
// packed one (strides 1 and rows): a weight's W^T view.
std::optional<MatrixOperand> transposed_operand(const Lowering& L, int32_t id, DType dt) {
  const Layout& l = L.info(id).layout;
  const size_t r = l.shape.size();
  if (r < 2) return std::nullopt;
  for (size_t d = 0; d + 2 < r; ++d) {
    if (l.shape[d] != 1) return std::nullopt;
  }
  const int64_t rows = l.shape[r - 2], cols = l.shape[r - 1];
  if (rows < 2 || cols < 2 || l.strides[r - 2] != 1 || l.strides[r - 1] != rows) return std::nullopt;
  MatrixOperand m;
  m.id = id;
  m.bytes = static_cast<uint64_t>(rows * cols) * dtype_size(dt);
  m.transposed = true;
  return m;
}

// The packed operand broadcast over the batch axes into a fresh packed temporary.
int32_t broadcast_batch(Lowering& L, int32_t id, DType dt, const Shape& batch) {
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
  const common::CopyPlan plan = common::CopyPlan::make(expanded, L.info(t).layout, dtype_size(dt));
  L.emit(L.steps().copy(plan, Operand{L.info(id).buffer, 0}, Operand{L.info(t).buffer, 0}, "matmul batch broadcast"),
         {id}, {t});
  return t;
}

MatrixOperand matrix_operand(Lowering& L, const ir::Value& v, DType dt, const Shape& batch, bool may_transpose) {
  if (may_transpose) {
    if (std::optional<MatrixOperand> t = transposed_operand(L, L.value(v), dt)) return *t;
  }
  int32_t id = L.packed(L.value(v));
  const Shape& s = L.info(id).layout.shape;
  const size_t nb = s.size() - 2;
  const int64_t matrix = s[nb] * s[nb + 1];
  const int64_t count = shape_numel(Shape(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(nb)));
  // The operand's batch axes line up with the result's (broadcasting aligns them on the right).
  const size_t lead = batch.size() - nb;
  bool aligned = count == shape_numel(batch);
  for (size_t d = 0; d < nb && aligned; ++d) aligned = s[d] == batch[lead + d];
  MatrixOperand m;
  m.batch_stride = count == 1 ? 0 : matrix;
  if (count != 1 && !aligned) id = broadcast_batch(L, id, dt, batch);
  m.id = id;
  m.bytes = static_cast<uint64_t>(shape_numel(L.info(id).layout.shape)) * dtype_size(dt);
  return m;
}

// Operands A, B, D, then the tail's bias and residual where it has them (f32).
class MatmulStep final : public common::Step {
 public:
  MatmulStep(std::shared_ptr<const Pipeline> pipeline, std::vector<Operand> operands, std::vector<uint64_t> bytes,
             std::vector<uint32_t> push, uint32_t element, int64_t m, int64_t n, int64_t batch, int tile, std::string tail)
      : pipeline_(std::move(pipeline)), operands_(std::move(operands)), bytes_(std::move(bytes)), push_(std::move(push)),
        element_(element), m_(m), n_(n), batch_(batch), tile_(tile), tail_(std::move(tail)) {}
  void run(const common::RunContext& ctx) const override {
    std::vector<BufferUse> buffers;
    for (size_t i = 0; i < operands_.size(); ++i) {
      buffers.push_back({ctx.ptr<const std::byte>(operands_[i]), bytes_[i], i == 2, i < 3 ? element_ : 4u});
    }
    const auto tiles = [this](int64_t x) { return static_cast<uint32_t>((x + tile_ - 1) / tile_); };
    recorder_of(ctx).dispatch(*pipeline_, buffers, push_, kMatmulShiftWord, tiles(n_), tiles(m_),
                              static_cast<uint32_t>(batch_));
  }
  common::StepKind kind() const override { return common::StepKind::library; }
  std::string describe() const override {
    return fmt::format("vulkan matmul {}x{}x{}{} (batch {}, {}x{} tiles{})", m_, n_, push_[2], tail_, batch_, tile_,
                       tile_, pipeline_->name.find("coopmat") != std::string::npos ? ", cooperative matrices" : "");
  }

 private:
  std::shared_ptr<const Pipeline> pipeline_;
  std::vector<Operand> operands_;
  std::vector<uint64_t> bytes_;
  std::vector<uint32_t> push_;
  uint32_t element_;
  int64_t m_, n_, batch_;
  int tile_;
  std::string tail_;
};

bool claim_matmul(const ir::Node& node) { return vulkan_matmul_supported(node, lowering_context().features()); }

bool lower_matmul(Lowering& L, const ir::NodePtr& node) {
  Context& ctx = lowering_context();
  if (!vulkan_matmul_supported(*node, ctx.features())) return false;
  const ir::Value product(node, 0);
  const DType dt = product.dtype();
  const Shape& os = product.shape();
  const Shape batch(os.begin(), os.end() - 2);
  // f16 products go to the tensor cores where the device offers cooperative matrices (packed operands).
  const bool coopmat = dt == DType::f16 && ctx.features().coopmat_f16;
  const common::Epilogue* epi = L.epilogue(*node);
  // The fused tail of an f32 product: + bias, ReLU or tanh-GELU, + a residual (common/epilogues.h).
  MatvecTail tail;
  if (epi != nullptr && !epi->transposed) {
    if (coopmat || dt != DType::f32 || !common::gpu_tail_applies(epi->activation) ||
        epi->post_activation != kernels::Activation::none) {
      throw common::LoweringFault(node.get(), "vulkan: a matmul tail the product shader lacks");
    }
    tail.bias = epi->bias.defined();
    tail.residual = epi->residual.defined();
    tail.activation = epi->activation;
  }
  // The cooperative-matrix shader reads packed operands only: its transposed result is a view.
  const bool transposed_result = epi != nullptr && epi->transposed && !coopmat;
  MatrixOperand a = matrix_operand(L, node->input(0), dt, batch, !coopmat);
  MatrixOperand b = matrix_operand(L, node->input(1), dt, batch, !coopmat);
  int64_t m = os[os.size() - 2], n = os[os.size() - 1];
  const int64_t k = node->input(0).shape().back();
  if (transposed_result) {
    // D^T = B^T A^T: B^T is B read the other way, and so is A^T.
    std::swap(a, b);
    std::swap(m, n);
    a.transposed = !a.transposed;
    b.transposed = !b.transposed;
  }
  std::vector<int32_t> reads = {a.id, b.id};
  std::vector<uint64_t> bytes = {a.bytes, b.bytes, 0};
  if (tail.bias) {
    reads.push_back(L.packed(L.value(epi->bias)));
    bytes.push_back(static_cast<uint64_t>(n) * 4);
  }
  if (tail.residual) {
    reads.push_back(L.packed(L.value(epi->residual)));
    bytes.push_back(static_cast<uint64_t>(epi->residual.type().numel()) * 4);
  }
  const ir::Value out = epi != nullptr && (transposed_result || !epi->transposed) ? epi->result : product;
  const int32_t d = L.produce(out);
  const int64_t count = shape_numel(batch);
  std::vector<uint32_t> push = {static_cast<uint32_t>(m), static_cast<uint32_t>(n), static_cast<uint32_t>(k),
                                static_cast<uint32_t>(a.batch_stride), static_cast<uint32_t>(b.batch_stride)};
  bytes[2] = static_cast<uint64_t>(out.type().numel()) * dtype_size(dt);
  const int block = matmul_block(m, n);
  auto pipeline = coopmat ? ctx.pipelines().pipeline(matmul_coopmat_glsl(), 3, "matmul_f16_coopmat")
                          : ctx.pipelines().pipeline(matmul_glsl(dt, block, a.transposed, b.transposed, tail),
                                                     3 + tail.bindings(),
                                                     matmul_pipeline_name(dt, block, a.transposed, b.transposed, tail));
  std::vector<Operand> operands = {L.operand(a.id), L.operand(b.id), L.operand(d)};
  for (size_t i = 2; i < reads.size(); ++i) operands.push_back(L.operand(reads[i]));
  L.emit(std::make_unique<MatmulStep>(std::move(pipeline), std::move(operands), std::move(bytes), std::move(push),
                                      static_cast<uint32_t>(dtype_size(dt)), m, n, count,
                                      coopmat ? kCoopmatTile : matmul_tile(block), tail.description()),
         reads, {d});
  if (epi != nullptr && epi->transposed && !transposed_result) {
    Layout view = L.info(d).layout;
    const size_t r = view.shape.size();
    std::swap(view.shape[r - 2], view.shape[r - 1]);
    std::swap(view.strides[r - 2], view.strides[r - 1]);
    L.alias(epi->result, d, view);
  }
  return true;
}

}  // namespace

bool vulkan_matmul_supported(const ir::Node& node, const Features& features) {
  if (node.op_name() != "matmul" || node.num_outputs() != 1 || node.inputs().size() != 2) return false;
  const DType dt = node.input(0).dtype();
  if (dt != DType::f32 && !(dt == DType::f16 && features.storage16)) return false;
  if (node.input(1).dtype() != dt || node.output_types()[0].dtype != dt) return false;
  if (node.input(0).rank() < 2 || node.input(1).rank() < 2) return false;
  // Empty products (a k = 0 product is a fill) and indices past 32 bits go to the CPU.
  const int64_t na = node.input(0).type().numel(), nb = node.input(1).type().numel();
  const int64_t nd = node.output_types()[0].numel();
  return na > 0 && nb > 0 && nd > 0 && na < INT32_MAX && nb < INT32_MAX && nd < INT32_MAX;
}

const common::LoweringTable& vulkan_lowerings() {
  static const common::LoweringTable table = [] {
    common::LoweringTable t;
    cpu::register_view_lowerings(t);
    t["matmul"] = {lower_matmul, claim_matmul, true};
    register_softmax_lowerings(t);
    register_index_lowerings(t);
    register_scatter_lowerings(t);
    register_arg_lowerings(t);
    register_cumsum_lowerings(t);
    register_pad_lowerings(t);
    register_optim_lowerings(t);
    register_index_copy_lowerings(t);
    register_creation_lowerings(t);
    register_quant_lowerings(t);
    register_attention_lowerings(t);
    register_conv_lowerings(t);
    register_pool_lowerings(t);
    return t;
  }();
  return table;
}

}  // namespace tessera::backends::vulkan
