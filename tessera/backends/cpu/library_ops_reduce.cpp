// sum/mean/max/min of f32 tensors as kernel library calls (tessera/kernels/cpu/reduce.h) when the
// reduced axes form a leading block, a trailing block, or both ends around a kept block (the bias
// gradients of linear and convolution layers). With the JIT on, reductions fed by elementwise
// chains fuse into generated kernels instead (over_jit = false).
#include <fmt/format.h>

#include "tessera/backends/cpu/library_ops.h"
#include "tessera/kernels/cpu/reduce.h"

namespace tessera::backends::cpu {
namespace {

enum class Pattern { rows, cols, outer_inner };

struct ReducePlan {
  Pattern pattern = Pattern::rows;
  int64_t outer = 1, mid = 1, inner = 1;  // rows: [mid, inner]; cols: [outer, mid]; outer_inner: all three
};

// Splits the shape into reduced-kept-reduced runs; false when the axes interleave otherwise.
bool plan_of(const ir::Node& node, ReducePlan* plan) {
  const Shape& shape = node.input(0).shape();
  const std::vector<int64_t> axes =
      normalize_axes(node.attrs().get_ints("axes"), static_cast<int64_t>(shape.size()), node.op_name().c_str());
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t a : axes) reduced[static_cast<size_t>(a)] = true;
  // Size-1 axes can count as either; treat them as kept unless that breaks the pattern.
  size_t d = 0;
  int64_t lead = 1, kept = 1, tail = 1;
  while (d < shape.size() && reduced[d]) lead *= shape[d++];
  while (d < shape.size() && !reduced[d]) kept *= shape[d++];
  while (d < shape.size() && reduced[d]) tail *= shape[d++];
  if (d != shape.size()) return false;
  if (lead * tail == 0 || kept == 0) return false;  // empty reductions: the reference decides
  if (lead == 1) {
    *plan = {Pattern::rows, 1, kept, tail};
  } else if (tail == 1) {
    *plan = {Pattern::cols, lead, kept, 1};
  } else {
    *plan = {Pattern::outer_inner, lead, kept, tail};
  }
  return true;
}

bool op_of(const std::string& name, kernels::ReduceOp* op) {
  if (name == "sum")
    *op = kernels::ReduceOp::sum;
  else if (name == "mean")
    *op = kernels::ReduceOp::mean;
  else if (name == "max")
    *op = kernels::ReduceOp::max;
  else if (name == "min")
    *op = kernels::ReduceOp::min;
  else
    return false;
  return true;
}

bool claim_reduce(const ir::Node& node) {
  kernels::ReduceOp op;
  ReducePlan plan;
  return node.input(0).dtype() == DType::f32 && node.output_types()[0].dtype == DType::f32 &&
         op_of(node.op_name(), &op) && plan_of(node, &plan);
}

class ReduceStep final : public Step {
 public:
  ReduceStep(kernels::ReduceOp op, ReducePlan plan, Operand x, Operand y) : op_(op), plan_(plan), x_(x), y_(y) {}
  void run(const RunContext& ctx) const override {
    const float* x = ctx.ptr<const float>(x_);
    float* y = ctx.ptr<float>(y_);
    switch (plan_.pattern) {
      case Pattern::rows:
        return kernels::reduce_rows(op_, plan_.mid, plan_.inner, x, y, ctx.pool);
      case Pattern::cols:
        return kernels::reduce_cols(op_, plan_.outer, plan_.mid, x, y, ctx.pool);
      case Pattern::outer_inner:
        return kernels::reduce_outer_inner(op_, plan_.outer, plan_.mid, plan_.inner, x, y, ctx.pool);
    }
  }
  StepKind kind() const override { return StepKind::library; }
  std::string describe() const override {
    static constexpr const char* kOps[] = {"sum", "mean", "max", "min"};
    static constexpr const char* kPatterns[] = {"rows", "cols", "outer_inner"};
    return fmt::format("reduce {} {} [{}, {}, {}]", kOps[static_cast<int>(op_)],
                       kPatterns[static_cast<int>(plan_.pattern)], plan_.outer, plan_.mid, plan_.inner);
  }

 private:
  kernels::ReduceOp op_;
  ReducePlan plan_;
  Operand x_, y_;
};

bool lower_reduce(Lowering& L, const ir::NodePtr& node) {
  kernels::ReduceOp op;
  ReducePlan plan;
  if (!claim_reduce(*node) || !op_of(node->op_name(), &op) || !plan_of(*node, &plan)) return false;
  const int32_t x = L.packed(L.value(node->input(0)));
  const int32_t y = L.produce(ir::Value(node, 0));
  L.emit(std::make_unique<ReduceStep>(op, plan, L.operand(x), L.operand(y)), {x}, {y});
  return true;
}

}  // namespace

void register_reduce_lowerings(LoweringTable& table) {
  for (const char* name : {"sum", "mean", "max", "min"}) table[name] = {lower_reduce, claim_reduce, false};
}

}  // namespace tessera::backends::cpu
