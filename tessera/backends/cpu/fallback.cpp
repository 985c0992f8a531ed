// Steps every lowering can fall back on: a strided copy, and an op's reference kernel run on arrays
// that wrap the program's buffers (correct for every op and dtype; its results are copied into the
// planned buffers, so only these steps allocate).
#include "tessera/backends/cpu/fallback.h"

#include <fmt/format.h>

#include "tessera/backends/cpu/copy.h"
#include "tessera/ir/op_def.h"

namespace tessera::backends::cpu {
namespace {

using common::CopyPlan;
using common::Operand;
using common::RunContext;
using common::Step;
using common::StepKind;

class CopyStep final : public Step {
 public:
  CopyStep(CopyPlan plan, Operand src, Operand dst, std::string what)
      : plan_(std::move(plan)), src_(src), dst_(dst), what_(std::move(what)) {}
  void run(const RunContext& ctx) const override {
    run_copy(plan_, ctx.ptr<const std::byte>(src_), ctx.ptr<std::byte>(dst_), ctx.pool);
  }
  StepKind kind() const override { return StepKind::copy; }
  std::string describe() const override { return fmt::format("copy ({}, {} elements)", what_, plan_.numel); }

 private:
  CopyPlan plan_;
  Operand src_, dst_;
  std::string what_;
};

class FallbackStep final : public Step {
 public:
  FallbackStep(const ir::Node& node, std::vector<Operand> inputs, std::vector<ir::TensorType> input_types,
               std::vector<Operand> outputs)
      : op_(&node.op()),
        attrs_(node.attrs()),
        input_types_(std::move(input_types)),
        output_types_(node.output_types()),
        inputs_(std::move(inputs)),
        outputs_(std::move(outputs)) {}

  void run(const RunContext& ctx) const override {
    std::vector<Array> args;
    args.reserve(inputs_.size());
    for (size_t i = 0; i < inputs_.size(); ++i) {
      args.push_back(
          Array::from_external(ctx.ptr<std::byte>(inputs_[i]), input_types_[i].dtype, input_types_[i].shape));
    }
    const std::vector<Array> results = op_->reference(args, attrs_, output_types_);
    TESSERA_CHECK(results.size() == outputs_.size(),
                  "internal error: reference kernel of '{}' returned {} outputs, expected {}", op_->name,
                  results.size(), outputs_.size());
    for (size_t i = 0; i < results.size(); ++i) {
      const ir::TensorType& t = output_types_[i];
      TESSERA_CHECK(results[i].defined() && results[i].dtype() == t.dtype && results[i].shape() == t.shape,
                    "internal error: reference kernel of '{}' returned a wrong result for output {} (expected {})",
                    op_->name, i, ir::type_str(t));
      Array dst = Array::from_external(ctx.ptr<std::byte>(outputs_[i]), t.dtype, t.shape);
      dst.copy_from(results[i]);
    }
  }
  StepKind kind() const override { return StepKind::fallback; }
  std::string describe() const override {
    std::string types;
    for (const ir::TensorType& t : input_types_) types += (types.empty() ? "" : ", ") + ir::type_str(t);
    return fmt::format("reference {}({})", op_->name, types);
  }

 private:
  const ir::OpDef* op_;
  ir::Attrs attrs_;
  std::vector<ir::TensorType> input_types_, output_types_;
  std::vector<Operand> inputs_, outputs_;
};

class HostSteps final : public common::StepFactory {
 public:
  std::unique_ptr<Step> copy(const CopyPlan& plan, Operand src, Operand dst, std::string what) const override {
    return std::make_unique<CopyStep>(plan, src, dst, std::move(what));
  }
  std::unique_ptr<Step> fallback(const ir::Node& node, std::vector<Operand> inputs,
                                 std::vector<ir::TensorType> input_types, std::vector<Operand> outputs) const override {
    return std::make_unique<FallbackStep>(node, std::move(inputs), std::move(input_types), std::move(outputs));
  }
};

}  // namespace

const common::StepFactory& host_steps() {
  static const HostSteps steps;
  return steps;
}

}  // namespace tessera::backends::cpu
