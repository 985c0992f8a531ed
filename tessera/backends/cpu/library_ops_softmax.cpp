// softmax / log_softmax over the last axis of f32 tensors as kernel library calls
// (tessera/kernels/cpu/softmax.h); other axes and dtypes go to generated kernels or the reference.
#include <fmt/format.h>

#include "tessera/backends/cpu/library_ops.h"
#include "tessera/kernels/cpu/softmax.h"

namespace tessera::backends::cpu {
namespace {

bool claim_softmax(const ir::Node& node) {
  const ir::Value& x = node.input(0);
  if (x.dtype() != DType::f32 || x.rank() == 0) return false;
  return normalize_axis(node.attrs().get_int("axis"), x.rank(), "softmax") == x.rank() - 1;
}

class SoftmaxStep final : public Step {
 public:
  SoftmaxStep(bool log, int64_t rows, int64_t cols, Operand x, Operand y)
      : log_(log), rows_(rows), cols_(cols), x_(x), y_(y) {}
  void run(const RunContext& ctx) const override {
    if (log_) {
      kernels::log_softmax_forward(rows_, cols_, ctx.ptr<const float>(x_), ctx.ptr<float>(y_), ctx.pool);
    } else {
      kernels::softmax_forward(rows_, cols_, ctx.ptr<const float>(x_), ctx.ptr<float>(y_), ctx.pool);
    }
  }
  StepKind kind() const override { return StepKind::library; }
  std::string describe() const override {
    return fmt::format("{} {}x{}", log_ ? "log_softmax" : "softmax", rows_, cols_);
  }

 private:
  bool log_;
  int64_t rows_, cols_;
  Operand x_, y_;
};

bool lower(Lowering& L, const ir::NodePtr& node, bool log) {
  if (!claim_softmax(*node)) return false;
  const int32_t x = L.packed(L.value(node->input(0)));
  const int32_t y = L.produce(ir::Value(node, 0));
  const int64_t cols = node->input(0).shape().back();
  const int64_t rows = cols == 0 ? 0 : node->input(0).type().numel() / cols;
  // The kernel may write over its input, so y may take over x's memory if x dies here.
  L.allow_in_place(y, x);
  L.emit(std::make_unique<SoftmaxStep>(log, rows, cols, L.operand(x), L.operand(y)), {x}, {y});
  return true;
}

bool lower_softmax(Lowering& L, const ir::NodePtr& node) {
  return lower(L, node, false);
}
bool lower_log_softmax(Lowering& L, const ir::NodePtr& node) {
  return lower(L, node, true);
}

}  // namespace

void register_softmax_lowerings(LoweringTable& table) {
  table["softmax"] = {lower_softmax, claim_softmax, true};
  table["log_softmax"] = {lower_log_softmax, claim_softmax, true};
}

}  // namespace tessera::backends::cpu
