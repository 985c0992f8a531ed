// constant_folding: a node whose inputs are all known (constants, or small generators such as `full`)
// is evaluated now with its reference kernel, the reference backend's implementation, and replaced by a
// constant. Limits keep it cheap and keep the graph small: the result must be small, no larger than
// its inputs together (so broadcast_to of a scalar stays a broadcast the backend can fuse), and random
// ops are never folded. A kernel that fails (an index out of range, say) is left to fail at run time.
#include <unordered_map>

#include "tessera/passes/pass.h"
#include "tessera/passes/rewrite.h"

namespace tessera::passes {

namespace {

using detail::Rewriter;

constexpr int64_t kMaxFoldedElements = 4096;    // per folded node, all outputs together
constexpr int64_t kMaxInputElements = 1 << 20;  // work bound: we do not run big kernels at compile time

class Folder {
 public:
  explicit Folder(const Rewriter& rw) : rw_(rw) {}

  std::optional<std::vector<ir::Value>> fold(const ir::Node& node, const std::vector<ir::Value>& inputs) {
    if (node.is_leaf() || node.op().has(ir::kRandom) || inputs.empty()) return std::nullopt;
    int64_t in_elements = 0, out_elements = 0;
    for (const ir::TensorType& t : node.output_types()) out_elements += t.numel();
    std::vector<Array> args;
    for (const ir::Value& in : inputs) {
      in_elements += in.type().numel();
      if (in_elements > kMaxInputElements) return std::nullopt;
      std::optional<Array> known = value_of(in);
      if (!known) return std::nullopt;
      args.push_back(std::move(*known));
    }
    if (out_elements > kMaxFoldedElements || out_elements > in_elements) return std::nullopt;
    std::vector<Array> results;
    try {
      results = node.op().reference(args, node.attrs(), node.output_types());
    } catch (const Error&) {
      return std::nullopt;
    }
    if (results.size() != node.output_types().size()) return std::nullopt;
    std::vector<ir::Value> outs;
    for (size_t i = 0; i < results.size(); ++i) {
      const ir::TensorType& t = node.output_types()[i];
      if (!results[i].defined() || results[i].dtype() != t.dtype || results[i].shape() != t.shape) return std::nullopt;
      // A packed copy: the kernel may have returned a view into one of its inputs.
      outs.push_back(ir::make_constant(results[i].copy()));
    }
    return outs;
  }

 private:
  // The data of a constant, or of a small generator (full, arange, eye) computed on demand.
  std::optional<Array> value_of(const ir::Value& v) {
    const ir::Node* node = rw_.producer(v);
    if (!node) return std::nullopt;
    if (node->op_name() == "constant") return node->attrs().get_tensor("value");
    if (!node->inputs().empty() || node->is_leaf() || node->op().has(ir::kRandom)) return std::nullopt;
    if (v.type().numel() > kMaxFoldedElements) return std::nullopt;
    auto it = generated_.find(node);
    if (it == generated_.end()) {
      std::vector<Array> outs;
      try {
        outs = node->op().reference({}, node->attrs(), node->output_types());
      } catch (const Error&) {
        outs.clear();
      }
      it = generated_.emplace(node, std::move(outs)).first;
    }
    if (static_cast<size_t>(v.index()) >= it->second.size()) return std::nullopt;
    return it->second[static_cast<size_t>(v.index())];
  }

  const Rewriter& rw_;
  std::unordered_map<const ir::Node*, std::vector<Array>> generated_;
};

}  // namespace

Pass constant_folding() {
  return Pass{"constant_folding", [](const ir::Graph& graph) {
                Rewriter rw(graph, "constant_folding");
                Folder folder(rw);
                return rw.run([&](const ir::Node& node, const std::vector<ir::Value>& inputs) {
                  return folder.fold(node, inputs);
                });
              }};
}

}  // namespace tessera::passes
