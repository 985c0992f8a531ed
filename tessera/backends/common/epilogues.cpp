// Epilogue discovery: walks forward from each matmul and 2-D convolution over the chain of single
// uses that its fused tail can absorb, in graph order, claiming each absorbed node once.
// [+ bias] [activation] [+ residual] [activation]; ReLU6 is maximum(x, 0) then minimum(., 6).
#include "tessera/backends/common/epilogues.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

namespace tessera::backends::common {
namespace {

using kernels::Activation;

bool float_types(const ir::Node& node, DType want) {
  return node.input(0).dtype() == want && node.input(1).dtype() == want && node.output_types()[0].dtype == want;
}

// A product the GEMM kernels compute: f32 or f64 throughout.
bool float_matmul(const ir::Node& node) {
  return float_types(node, DType::f32) || float_types(node, DType::f64);
}

bool activation_of(const ir::Node& node, Activation* act) {
  const std::string& op = node.op_name();
  if (op == "relu")
    *act = Activation::relu;
  else if (op == "sigmoid")
    *act = Activation::sigmoid;
  else if (op == "tanh")
    *act = Activation::tanh;
  else if (op == "silu")
    *act = Activation::silu;
  else if (op == "gelu")
    *act = node.attrs().get_bool("approximate") ? Activation::gelu_tanh : Activation::gelu;
  else
    return false;
  return true;
}

// A permute that swaps the last two axes and keeps the others.
bool swaps_last_two_axes(const ir::Node& node) {
  if (node.op_name() != "permute") return false;
  const std::vector<int64_t>& axes = node.attrs().get_ints("axes");
  const auto r = static_cast<int64_t>(axes.size());
  if (r < 2) return false;
  for (int64_t d = 0; d < r; ++d) {
    const int64_t want = d == r - 2 ? r - 1 : d == r - 1 ? r - 2 : d;
    if (normalize_axis(axes[static_cast<size_t>(d)], r, "permute") != want) return false;
  }
  return true;
}

// A per-column bias for a result of shape `out`: [n] or [1, ..., 1, n] with n = out's last axis.
bool is_bias_shape(const Shape& bias, const Shape& out) {
  if (bias.empty() || out.size() < 2 || bias.size() > out.size() || bias.back() != out.back()) return false;
  for (size_t d = 0; d + 1 < bias.size(); ++d) {
    if (bias[d] != 1) return false;
  }
  return true;
}

// The single value of a one-element f32 constant, if `v` is one.
bool scalar_constant(const ir::Value& v, float* value) {
  const ir::Node& n = *v.node();
  if (n.op_name() != "constant" || v.dtype() != DType::f32) return false;
  const Array& a = n.attrs().get_tensor("value");
  if (a.dtype() != DType::f32 || a.numel() != 1) return false;
  *value = a.contiguous().data<float>()[0];
  return true;
}

// The operand of a binary `node` other than `cur` when it is a one-element constant equal to `want`.
bool other_is_constant(const ir::Node& node, const ir::Value& cur, float want) {
  if (node.inputs().size() != 2 || node.input(0) == node.input(1)) return false;
  const ir::Value& other = node.input(0) == cur ? node.input(1) : node.input(0);
  float value = 0.0f;
  return scalar_constant(other, &value) && value == want && !std::signbit(value);
}

}  // namespace

std::unordered_map<const ir::Node*, Epilogue> find_epilogues(const ir::Graph& graph,
                                                             const std::function<int64_t(const ir::Value&)>& uses,
                                                             FusionSet fusion, const EpilogueLimits& limits) {
  std::unordered_map<const ir::Node*, const ir::NodePtr*> consumer;  // producer -> its single consumer
  for (const ir::NodePtr& node : graph.nodes()) {
    for (const ir::Value& in : node->inputs()) consumer[in.node().get()] = &node;
  }
  std::unordered_map<const ir::Node*, Epilogue> found;
  // Nodes already absorbed: x@a + y@b has one add that both products could take as their residual;
  // the first takes it, and the second produces its plain result for it.
  std::unordered_set<const ir::Node*> claimed;
  const bool epilogues = fusion.has(Fusion::epilogue), transposed = fusion.has(Fusion::transposed_product);
  if (!epilogues && !transposed) return found;
  // The node that reads `v` when it is v's only use, else null.
  auto only_user = [&](const ir::Value& v) -> const ir::NodePtr* {
    if (uses(v) != 1 || consumer.count(v.node().get()) == 0) return nullptr;
    return consumer.at(v.node().get());
  };
  for (const ir::NodePtr& mm : graph.nodes()) {
    // 0: bias, activation or residual next; 1: activation or residual; 2: residual; 3: an activation
    // of the sum with the residual; 4: done.
    int stage = 0;
    if (mm->op_name() == "matmul") {
      if (!limits.products || !float_matmul(*mm) || mm->input(0).rank() < 2 || mm->input(1).rank() < 2) continue;
    } else if (mm->op_name() == "conv" && limits.convolutions) {
      bool f32 = mm->output_types()[0].dtype == DType::f32 && mm->input(0).rank() == 4;
      for (const ir::Value& in : mm->inputs()) f32 = f32 && in.dtype() == DType::f32;
      if (!f32) continue;
      stage = 1;  // a convolution's bias is its third input
    } else if (mm->op_name() == "quantized_matmul" && limits.quantized_products) {
      // f32 results (of f32 activations, or of 16-bit ones rounded for the tensor cores).
      if (!is_floating(mm->input(0).dtype()) || mm->output_types()[0].dtype != DType::f32) continue;
    } else {
      continue;
    }
    Epilogue e;
    ir::Value cur(mm, 0);
    if (transposed && mm->op_name() == "matmul" && uses(cur) == 1 && consumer.count(mm.get()) != 0) {
      const ir::NodePtr& user = *consumer.at(mm.get());
      if (swaps_last_two_axes(*user) && claimed.insert(user.get()).second) {
        e.transposed = true;
        e.nodes.push_back(user.get());
        e.result = ir::Value(user, 0);
        found.emplace(mm.get(), std::move(e));
        continue;
      }
    }
    if (!epilogues) continue;
    if (mm->op_name() == "matmul" && !float_types(*mm, DType::f32)) continue;  // the sgemm epilogue is f32
    const std::vector<Activation>& allowed =
        mm->op_name() == "quantized_matmul" ? limits.quantized_activations : limits.activations;
    const bool activations = !allowed.empty();
    const bool relu6 = std::find(allowed.begin(), allowed.end(), Activation::relu6) != allowed.end();
    while (stage < 4 && only_user(cur) != nullptr) {
      const ir::NodePtr& user = *only_user(cur);
      if (user->output_types()[0] != cur.type() || claimed.count(user.get()) != 0) break;
      const bool activation_next = activations && (stage <= 1 || (stage == 3 && limits.activation_after_residual));
      Activation act;
      // maximum(x, 0) then minimum(., 6), the second the first's only use: ReLU6 (ONNX's Clip(0, 6)).
      const ir::NodePtr* clamp_top = nullptr;
      if (activation_next && relu6 && user->op_name() == "maximum" && other_is_constant(*user, cur, 0.0f)) {
        const ir::NodePtr* next = only_user(ir::Value(user, 0));
        if (next != nullptr && (*next)->op_name() == "minimum" && (*next)->output_types()[0] == cur.type() &&
            claimed.count(next->get()) == 0 && other_is_constant(**next, ir::Value(user, 0), 6.0f)) {
          clamp_top = next;
        }
      }
      if (user->op_name() == "add" && user->input(0) != user->input(1) && stage < 3) {
        const ir::Value other = user->input(0) == cur ? user->input(1) : user->input(0);
        if (other.dtype() != DType::f32) break;
        if (stage == 0 && is_bias_shape(other.shape(), cur.shape()) && other.shape() != cur.shape()) {
          e.bias = other;
          stage = 1;
        } else if (other.shape() == cur.shape() && (limits.residual_after_activation || stage < 2)) {
          e.residual = other;
          stage = 3;
        } else {
          break;
        }
      } else if (clamp_top != nullptr) {
        (stage == 3 ? e.post_activation : e.activation) = Activation::relu6;
        stage = stage == 3 ? 4 : 2;
        e.reads_constant_values = true;
        e.nodes.push_back(user.get());
        claimed.insert(user.get());
        e.nodes.push_back(clamp_top->get());
        claimed.insert(clamp_top->get());
        cur = ir::Value(*clamp_top, 0);
        continue;
      } else if (activation_next && activation_of(*user, &act) &&
                 std::find(allowed.begin(), allowed.end(), act) != allowed.end()) {
        (stage == 3 ? e.post_activation : e.activation) = act;
        stage = stage == 3 ? 4 : 2;
      } else {
        break;
      }
      e.nodes.push_back(user.get());
      claimed.insert(user.get());
      cur = ir::Value(user, 0);
    }
    if (e.nodes.empty()) continue;
    e.result = cur;
    found.emplace(mm.get(), std::move(e));
  }
  return found;
}

bool gpu_tail_applies(kernels::Activation a) {
  return a == kernels::Activation::none ||
         std::find(kGpuTailActivations.begin(), kGpuTailActivations.end(), a) != kGpuTailActivations.end();
}

}  // namespace tessera::backends::common
