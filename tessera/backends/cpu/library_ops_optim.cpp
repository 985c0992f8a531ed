// Groups of f32 adam_update nodes as one fused pass over all parameters (kernels::adam_update_many):
// lr and step are read from their f64 scalar buffers at run time, so one compiled step serves every
// training step.
#include <fmt/format.h>

#include <cmath>

#include "tessera/backends/cpu/library_ops.h"
#include "tessera/kernels/cpu/adam.h"

namespace tessera::backends::cpu {
namespace {


class AdamGroupStep final : public Step {
 public:
  AdamGroupStep(kernels::AdamHyper hyper, Operand lr, Operand step, std::vector<AdamTensorOperands> tensors)
      : hyper_(hyper), lr_(lr), step_(step), tensors_(std::move(tensors)) {}

  void run(const RunContext& ctx) const override {
    kernels::AdamHyper h = hyper_;
    h.lr = *ctx.ptr<const double>(lr_);
    const double step = *ctx.ptr<const double>(step_);
    TESSERA_CHECK(step >= 1 && step == std::floor(step), "adam_update: the step must be a whole number >= 1, got {}",
                  step);
    h.step = static_cast<int64_t>(step);
    auto* list = reinterpret_cast<kernels::AdamTensor*>(ctx.step_scratch);
    for (size_t i = 0; i < tensors_.size(); ++i) {
      const AdamTensorOperands& o = tensors_[i];
      list[i] = {o.n,
                 ctx.ptr<const float>(o.p),
                 ctx.ptr<const float>(o.g),
                 ctx.ptr<const float>(o.m),
                 ctx.ptr<const float>(o.v),
                 ctx.ptr<float>(o.p_out),
                 ctx.ptr<float>(o.m_out),
                 ctx.ptr<float>(o.v_out)};
    }
    kernels::adam_update_many(h, list, static_cast<int64_t>(tensors_.size()), ctx.pool);
  }
  StepKind kind() const override { return StepKind::library; }
  std::string describe() const override {
    int64_t total = 0;
    for (const AdamTensorOperands& o : tensors_) total += o.n;
    return fmt::format("{} x{} tensors, {} elements", hyper_.decoupled ? "adamw" : "adam", tensors_.size(), total);
  }

 private:
  kernels::AdamHyper hyper_;
  Operand lr_, step_;
  std::vector<AdamTensorOperands> tensors_;
};

bool claim_adam_update(const ir::Node& node) {
  return node.input(0).dtype() == DType::f32;
}

void lower_adam_group(Lowering& L, const std::vector<ir::NodePtr>& nodes) {
  const ir::Node& first = *nodes.front();
  kernels::AdamHyper h;
  h.beta1 = first.attrs().get_float("beta1");
  h.beta2 = first.attrs().get_float("beta2");
  h.eps = first.attrs().get_float("eps");
  h.weight_decay = first.attrs().get_float("weight_decay");
  h.decoupled = first.attrs().get_bool("decoupled");
  AdamGroupOperands group = bind_adam_group(L, nodes);
  L.need_step_scratch(static_cast<int64_t>(group.tensors.size() * sizeof(kernels::AdamTensor)));
  L.emit(std::make_unique<AdamGroupStep>(h, L.operand(group.lr), L.operand(group.step), std::move(group.tensors)),
         group.reads, group.writes);
}

}  // namespace

AdamGroupOperands bind_adam_group(Lowering& L, const std::vector<ir::NodePtr>& nodes) {
  AdamGroupOperands group;
  group.lr = L.packed(L.value(nodes.front()->input(4)));
  group.step = L.packed(L.value(nodes.front()->input(5)));
  group.reads = {group.lr, group.step};
  std::vector<std::pair<int32_t, int32_t>> in_place;
  for (const ir::NodePtr& node : nodes) {
    int32_t in[4], out[3];
    for (size_t i = 0; i < 4; ++i) {
      in[i] = L.packed(L.value(node->input(i)));
      group.reads.push_back(in[i]);
    }
    for (int i = 0; i < 3; ++i) {
      out[i] = L.produce(ir::Value(node, i));
      group.writes.push_back(out[i]);
    }
    in_place.push_back({out[0], in[0]});
    in_place.push_back({out[1], in[2]});
    in_place.push_back({out[2], in[3]});
    group.tensors.push_back({node->input(0).type().numel(), L.operand(in[0]), L.operand(in[1]), L.operand(in[2]),
                             L.operand(in[3]), L.operand(out[0]), L.operand(out[1]), L.operand(out[2])});
  }
  // The kernels read each element before writing it, so an update may overwrite its own input, as
  // long as nothing else in the pass reads that memory.
  for (const auto& [written, read] : in_place) L.allow_in_place(written, read, group.reads);
  return group;
}

std::string adam_group_key(const ir::Node& node) {
  const ir::Attrs& a = node.attrs();
  return fmt::format("{}/{}/{}/{}/{}/{}:{}/{}:{}", a.get_float("beta1"), a.get_float("beta2"), a.get_float("eps"),
                     a.get_float("weight_decay"), a.get_bool("decoupled"),
                     static_cast<const void*>(node.input(4).node().get()), node.input(4).index(),
                     static_cast<const void*>(node.input(5).node().get()), node.input(5).index());
}

void register_optim_lowerings(LoweringTable& table) {
  // Only as groups (lower_node never sees a claimed update); unclaimed updates run on the reference.
  table["adam_update"] = {nullptr, claim_adam_update, true, adam_group_key, lower_adam_group};
}

}  // namespace tessera::backends::cpu
