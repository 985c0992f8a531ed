// cse: structural hashing. Two nodes merge when they apply the same op, with equal attributes, to the
// same input values and give the same output types. Leaves (inputs, constants) keep their identity
// even with equal contents, and random ops never merge (two dropout masks must differ).
#include <cstring>
#include <unordered_map>

#include "tessera/passes/pass.h"
#include "tessera/passes/rewrite.h"

namespace tessera::passes {

namespace {

using detail::Rewriter;

void mix(size_t& h, size_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
}

size_t hash_double(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);  // by bits: 0.0 and -0.0 are different attributes
  return std::hash<uint64_t>()(bits);
}

size_t hash_attr(const ir::AttrValue& value) {
  size_t h = value.index();
  std::visit(
      [&](const auto& x) {
        using V = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<V, double>) {
          mix(h, hash_double(x));
        } else if constexpr (std::is_same_v<V, std::vector<double>>) {
          for (double d : x) mix(h, hash_double(d));
        } else if constexpr (std::is_same_v<V, std::vector<int64_t>>) {
          for (int64_t i : x) mix(h, std::hash<int64_t>()(i));
        } else if constexpr (std::is_same_v<V, DType>) {
          mix(h, static_cast<size_t>(x));
        } else if constexpr (std::is_same_v<V, Array>) {
          mix(h, static_cast<size_t>(x.dtype()));  // contents are compared on a hash match
          for (int64_t d : x.shape()) mix(h, std::hash<int64_t>()(d));
        } else {
          mix(h, std::hash<V>()(x));
        }
      },
      value);
  return h;
}

size_t node_hash(const ir::Node& node, const std::vector<ir::Value>& inputs) {
  size_t h = std::hash<const void*>()(&node.op());
  for (const ir::Value& in : inputs) mix(h, ir::ValueHash()(in));
  for (const auto& [name, value] : node.attrs().values()) {
    mix(h, std::hash<std::string>()(name));
    mix(h, hash_attr(value));
  }
  for (const ir::TensorType& t : node.output_types()) {
    mix(h, static_cast<size_t>(t.dtype));
    for (int64_t d : t.shape) mix(h, std::hash<int64_t>()(d));
  }
  return h;
}

// Doubles compare by bits, as they hash: Attrs::operator== would call 0.0 and -0.0 equal.
bool same_doubles(const ir::Attrs& a, const ir::Attrs& b) {
  for (auto it = a.values().begin(), jt = b.values().begin(); it != a.values().end(); ++it, ++jt) {
    if (const double* x = std::get_if<double>(&it->second)) {
      if (hash_double(*x) != hash_double(std::get<double>(jt->second))) return false;
    } else if (const auto* xs = std::get_if<std::vector<double>>(&it->second)) {
      const auto& ys = std::get<std::vector<double>>(jt->second);
      for (size_t i = 0; i < xs->size(); ++i) {
        if (hash_double((*xs)[i]) != hash_double(ys[i])) return false;
      }
    }
  }
  return true;
}

bool same_computation(const ir::Node& a, const std::vector<ir::Value>& a_inputs, const ir::Node& b) {
  return &a.op() == &b.op() && a_inputs == b.inputs() && a.output_types() == b.output_types() &&
         a.attrs() == b.attrs() && same_doubles(a.attrs(), b.attrs());
}

}  // namespace

Pass cse() {
  return Pass{"cse", [](const ir::Graph& graph) {
                Rewriter rw(graph, "cse");
                std::unordered_multimap<size_t, ir::NodePtr> seen;
                seen.reserve(graph.nodes().size());
                return rw.run([&](const ir::Node& node,
                                  const std::vector<ir::Value>& inputs) -> std::optional<std::vector<ir::Value>> {
                  if (node.is_leaf() || node.op().has(ir::kRandom)) return std::nullopt;
                  const size_t h = node_hash(node, inputs);
                  auto [first, last] = seen.equal_range(h);
                  for (auto it = first; it != last; ++it) {
                    if (same_computation(node, inputs, *it->second)) {
                      std::vector<ir::Value> outs;
                      for (int i = 0; i < it->second->num_outputs(); ++i) outs.emplace_back(it->second, i);
                      return outs;
                    }
                  }
                  const ir::NodePtr kept = rw.keep_node(node, inputs);
                  seen.emplace(h, kept);
                  if (kept.get() == &node) return std::nullopt;  // unchanged: nothing to replace
                  std::vector<ir::Value> outs;
                  for (int i = 0; i < kept->num_outputs(); ++i) outs.emplace_back(kept, i);
                  return outs;
                });
              }};
}

}  // namespace tessera::passes
