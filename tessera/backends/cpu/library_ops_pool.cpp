// 2-D f32 max/avg pooling and their gradients as kernel library calls (tessera/kernels/cpu/pool.h),
// in floor and ceil mode. Leading axes fold into planes, so any rank >= 3 works; other cases run on the
// reference kernels.
#include <fmt/format.h>

#include "tessera/backends/common/conv_geometry.h"
#include "tessera/backends/cpu/library_ops.h"
#include "tessera/kernels/cpu/pool.h"

namespace tessera::backends::cpu {
namespace {

enum class PoolKind { max_forward, max_backward, avg_forward, avg_backward };

bool all_f32(const ir::Node& node) {
  for (const ir::Value& v : node.inputs()) {
    if (v.dtype() != DType::f32) return false;
  }
  return node.output_types()[0].dtype == DType::f32;
}

bool two_d(const ir::Node& node, size_t input) {
  return all_f32(node) && node.attrs().get_ints("kernel").size() == 2 && node.input(input).rank() >= 3;
}

bool claim_max_pool(const ir::Node& n) {
  return two_d(n, 0);
}
bool claim_max_pool_grad(const ir::Node& n) {
  return two_d(n, 0);
}
bool claim_avg_pool(const ir::Node& n) {
  return two_d(n, 0);
}
bool claim_avg_pool_grad(const ir::Node& n) {
  return two_d(n, 0) && n.attrs().get_ints("input_size").size() == 2;
}

class PoolStep final : public Step {
 public:
  PoolStep(PoolKind kind, kernels::Pool2dGeometry g, bool count_include_pad, Operand a, Operand b, Operand out)
      : kind_(kind), g_(g), count_include_pad_(count_include_pad), a_(a), b_(b), out_(out) {}
  void run(const RunContext& ctx) const override {
    switch (kind_) {
      case PoolKind::max_forward:
        return kernels::max_pool2d_forward(g_, ctx.ptr<const float>(a_), ctx.ptr<float>(out_), ctx.pool);
      case PoolKind::max_backward:
        return kernels::max_pool2d_backward(g_, ctx.ptr<const float>(a_), ctx.ptr<const float>(b_),
                                            ctx.ptr<float>(out_), ctx.pool);
      case PoolKind::avg_forward:
        return kernels::avg_pool2d_forward(g_, count_include_pad_, ctx.ptr<const float>(a_), ctx.ptr<float>(out_),
                                           ctx.pool);
      case PoolKind::avg_backward:
        return kernels::avg_pool2d_backward(g_, count_include_pad_, ctx.ptr<const float>(a_), ctx.ptr<float>(out_),
                                            ctx.pool);
    }
  }
  StepKind kind() const override { return StepKind::library; }
  std::string describe() const override {
    static constexpr const char* kNames[] = {"max_pool2d", "max_pool2d_backward", "avg_pool2d", "avg_pool2d_backward"};
    return fmt::format("{} {}x{}x{} k{}x{} s{}x{}{}", kNames[static_cast<int>(kind_)], g_.planes, g_.in_h, g_.in_w,
                       g_.kernel_h, g_.kernel_w, g_.stride_h, g_.stride_w, g_.ceil_mode ? " ceil" : "");
  }

 private:
  PoolKind kind_;
  kernels::Pool2dGeometry g_;
  bool count_include_pad_;
  Operand a_, b_, out_;
};

void emit_pool(Lowering& L, const ir::NodePtr& node, PoolKind kind, const kernels::Pool2dGeometry& g) {
  std::vector<int32_t> reads;
  for (const ir::Value& v : node->inputs()) reads.push_back(L.packed(L.value(v)));
  const int32_t out = L.produce(ir::Value(node, 0));
  const bool cip = node->attrs().get_bool_or("count_include_pad", true);
  const Operand b = reads.size() > 1 ? L.operand(reads[1]) : Operand{};
  L.emit(std::make_unique<PoolStep>(kind, g, cip, L.operand(reads[0]), b, L.operand(out)), reads, {out});
}

bool lower_max_pool(Lowering& L, const ir::NodePtr& node) {
  if (!claim_max_pool(*node)) return false;
  emit_pool(L, node, PoolKind::max_forward,
            common::pool2d_geometry(node->attrs(), node->input(0).shape(), node->output_types()[0].shape));
  return true;
}

bool lower_max_pool_grad(Lowering& L, const ir::NodePtr& node) {  // (x, dy) -> dx
  if (!claim_max_pool_grad(*node)) return false;
  emit_pool(L, node, PoolKind::max_backward,
            common::pool2d_geometry(node->attrs(), node->input(0).shape(), node->input(1).shape()));
  return true;
}

bool lower_avg_pool(Lowering& L, const ir::NodePtr& node) {
  if (!claim_avg_pool(*node)) return false;
  emit_pool(L, node, PoolKind::avg_forward,
            common::pool2d_geometry(node->attrs(), node->input(0).shape(), node->output_types()[0].shape));
  return true;
}

bool lower_avg_pool_grad(Lowering& L, const ir::NodePtr& node) {  // dy -> dx
  if (!claim_avg_pool_grad(*node)) return false;
  emit_pool(L, node, PoolKind::avg_backward,
            common::pool2d_geometry(node->attrs(), node->output_types()[0].shape, node->input(0).shape()));
  return true;
}

}  // namespace

void register_pool_lowerings(LoweringTable& table) {
  table["max_pool"] = {lower_max_pool, claim_max_pool, true};
  table["max_pool_grad"] = {lower_max_pool_grad, claim_max_pool_grad, true};
  table["avg_pool"] = {lower_avg_pool, claim_avg_pool, true};
  table["avg_pool_grad"] = {lower_avg_pool_grad, claim_avg_pool_grad, true};
}

}  // namespace tessera::backends::cpu
