// build_loop_kernel: turns a cluster into a loop kernel. Values are generated on demand from the
// outputs backwards, each at the index map its consumer reads it with (views and broadcasts only
// change maps, never copy), memoised per (node, map, phase). Reductions split the code into the body
// (per domain element), chained walks (per domain element again, for reductions whose values use
// earlier reductions' results), the epilogue (per kept element, after the reductions) and the row
// phase (per domain element once more: outputs of the domain's size that use the reductions).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "tessera/core/slice_range.h"
#include "tessera/ir/op_def.h"
#include "tessera/lower/index_map.h"
#include "tessera/lower/scalar_code.h"

namespace tessera::lower {

void coalesce_domain(Kernel& kernel);  // loop_coalesce.cpp

namespace {

// Where code goes: the body (walk 0), chained walk k >= 1, the epilogue or the row phase.
using Phase = int;
constexpr Phase kBody = 0, kEpilogue = -1, kRow = -2;

class KernelBuilder {
 public:
  KernelBuilder(const Cluster& cluster, const Shape& domain, std::vector<bool> reduced)
      : cluster_(cluster), domain_(domain), reduced_(std::move(reduced)), body_(k_.body), epilogue_(k_.epilogue),
        row_(k_.row) {
    for (size_t i = 0; i < cluster.nodes.size(); ++i) pos_[cluster.nodes[i].get()] = static_cast<int>(i);
    for (size_t i = 0; i < cluster.inputs.size(); ++i) input_pos_[cluster.inputs[i]] = static_cast<int>(i);
    kept_.resize(reduced_.size());
    for (size_t d = 0; d < reduced_.size(); ++d) kept_[d] = !reduced_[d];
    k_.domain = domain_;
    k_.reduced = reduced_;
    k_.input_used.assign(cluster.inputs.size(), false);
    for (const ir::Value& v : cluster.inputs) k_.input_types.push_back(scalar_type_of(v.dtype()));
    for (const ir::Value& v : cluster.outputs) k_.output_types.push_back(scalar_type_of(v.dtype()));
    body_values_.resize(cluster.nodes.size());
  }

  Kernel build() {
    // The walk that accumulates each reduction: one after the last walk whose reductions its value
    // needs finished (finished_after_: -1 for values that need none).
    const size_t n_nodes = cluster_.nodes.size();
    depends_on_reduction_.assign(n_nodes, false);
    finished_after_.assign(n_nodes, -1);
    int walks = 0;
    for (size_t i = 0; i < n_nodes; ++i) {
      const ir::Node& n = *cluster_.nodes[i];
      TESSERA_CHECK(can_generate(n, /*half_types=*/true), "loop IR: op '{}' ({}) cannot be generated", n.op_name(),
                    ir::type_str(n.output_types()[0]));
      bool dep = n.op().has(ir::kReduction);
      int needs = -1;
      for (const ir::Value& v : n.inputs()) {
        auto it = pos_.find(v.node().get());
        if (it == pos_.end()) continue;
        dep = dep || depends_on_reduction_[static_cast<size_t>(it->second)];
        needs = std::max(needs, finished_after_[static_cast<size_t>(it->second)]);
      }
      depends_on_reduction_[i] = dep;
      finished_after_[i] = n.op().has(ir::kReduction) ? needs + 1 : needs;
      walks = std::max(walks, finished_after_[i]);
    }
    k_.chained.resize(static_cast<size_t>(walks));
    chained_.reserve(k_.chained.size());
    for (auto& walk : k_.chained) chained_.emplace_back(walk);
    for (size_t i = 0; i < n_nodes; ++i) {
      if (cluster_.nodes[i]->op().has(ir::kReduction)) add_reduction(static_cast<int>(i));
    }
    // Outputs from the last to the first, so that the maps consumers read an output with are known
    // before its store is placed (a store reuses one of them when it is a bijection).
    std::vector<size_t> order(cluster_.outputs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return output_pos(a) > output_pos(b); });
    for (size_t o : order) add_store(o);
    coalesce_domain(k_);
    if (k_.has_row_phase()) {
      // The emitters give each kept element's row to one thread or one group of threads, walking it
      // contiguously: the reduced axes must come after every kept one.
      bool kept_seen_after_reduced = false, reduced_seen = false;
      for (bool r : k_.reduced) {
        kept_seen_after_reduced = kept_seen_after_reduced || (reduced_seen && !r);
        reduced_seen = reduced_seen || r;
      }
      TESSERA_CHECK(!kept_seen_after_reduced,
                    "loop IR: a reduction's result is used over its input's domain, but the reduced axes are not "
                    "the innermost ones");
    }
    return std::move(k_);
  }

 private:
  int output_pos(size_t o) const {
    auto it = pos_.find(cluster_.outputs[o].node().get());
    TESSERA_CHECK(it != pos_.end(), "loop IR: cluster output is not computed by a cluster node");
    return it->second;
  }

  ScalarCode& code(Phase ph) {
    if (ph == kBody) return body_;
    if (ph == kEpilogue) return epilogue_;
    if (ph == kRow) return row_;
    return chained_.at(static_cast<size_t>(ph - 1));
  }

  // The epilogue's layout of a value of `shape`: row-major over the kept axes.
  IndexMap kept_map(const Shape& shape) const {
    auto dims = delinearize(row_major(domain_, kept_), shape, domain_);
    TESSERA_CHECK(dims.has_value(), "loop IR: shape {} does not follow the kept axes of domain {}", shape_str(shape),
                  shape_str(domain_));
    return IndexMap{false, std::move(*dims), {}};
  }

  void add_reduction(int pos) {
    const ir::Node& n = *cluster_.nodes[static_cast<size_t>(pos)];
    const std::string& op = n.op_name();
    // f16/bf16 inputs reduce as f32 values (max and min are then exact; sums accumulate in f64).
    const ScalarType in =
        is_half(scalar_type_of(n.input(0).dtype())) ? ScalarType::f32 : scalar_type_of(n.input(0).dtype());
    Reduction r;
    r.kind = op == "max"    ? ReduceKind::Max
             : op == "min"  ? ReduceKind::Min
             : op == "prod" ? ReduceKind::Prod
                            : ReduceKind::Sum;
    const bool extremum = r.kind == ReduceKind::Max || r.kind == ReduceKind::Min;
    r.acc_type = extremum ? in : is_float(in) ? ScalarType::f64 : ScalarType::u64;
    r.walk = finished_after_[static_cast<size_t>(pos)];
    ScalarCode& c = code(r.walk);
    const int x = value(n.input(0), identity_map(domain_), r.walk);
    r.value = is_float(in) ? c.convert(x, r.acc_type) : c.cast(x, r.acc_type);
    reduction_index_[pos] = static_cast<int>(k_.reductions.size());
    k_.reductions.push_back(r);
  }

  // The finished reduction, in the node's output type, in the epilogue or the row phase.
  int reduction_result(int pos, Phase ph) {
    const ir::Node& n = *cluster_.nodes[static_cast<size_t>(pos)];
    const Reduction& r = k_.reductions[static_cast<size_t>(reduction_index_.at(pos))];
    const ScalarType out = scalar_type_of(n.output_types()[0].dtype);
    ScalarCode& c = code(ph);
    int acc = c.reduced(reduction_index_.at(pos), r.acc_type);
    if (n.op_name() == "mean") {
      int64_t count = 1;
      for (size_t d = 0; d < domain_.size(); ++d) count *= reduced_[d] ? domain_[d] : 1;
      acc = c.binary(Op::Div, acc, c.lit(ScalarType::f64, static_cast<double>(count)));
    }
    return is_float(r.acc_type) ? c.convert(acc, out) : c.cast(acc, out);
  }

  int value(const ir::Value& v, const IndexMap& map, Phase ph) {
    auto it = pos_.find(v.node().get());
    if (it != pos_.end()) return node_value(it->second, map, ph);
    auto in = input_pos_.find(v);
    TESSERA_CHECK(in != input_pos_.end(), "loop IR: op '{}' reads a value that is neither a cluster node nor input",
                  v.node()->op_name());
    const int lit = literal_of(*v.node(), code(ph));
    if (lit >= 0) return lit;
    k_.input_used[static_cast<size_t>(in->second)] = true;
    return code(ph).load(in->second, scalar_type_of(v.dtype()), to_linear(map, v.shape(), domain_.size()));
  }

  int node_value(int pos, const IndexMap& map, Phase ph) {
    const std::string key = map.key() + fmt::format("@{}", ph);
    auto& memo = memo_[pos];
    auto found = memo.find(key);
    if (found != memo.end()) return found->second;
    const ir::Node& n = *cluster_.nodes[static_cast<size_t>(pos)];
    const Shape& shape = n.output_types()[0].shape;
    int r;
    if (n.op().has(ir::kReduction)) {
      // Finished for the epilogue and the row phase, and for the walks after its own.
      TESSERA_CHECK(ph == kEpilogue || ph == kRow || ph > finished_after_[static_cast<size_t>(pos)],
                    "loop IR: the result of '{}' is used inside its own reduction loop", n.op_name());
      // In the row phase too: read back at the kept element whose row is being walked.
      TESSERA_CHECK(shape_numel(shape) == 0 || to_linear(map, shape, domain_.size()) == row_major(domain_, kept_),
                    "loop IR: the result of '{}' is read at another index than it is computed", n.op_name());
      r = reduction_result(pos, ph);
    } else if ((r = literal_of(n, code(ph))) >= 0) {
    } else if (is_view(n)) {
      r = value(n.input(0), input_map(n, 0, map), ph);
    } else if (n.op_name() == "arange") {
      r = arange_value(n, code(ph).index(to_linear(map, shape, domain_.size())), code(ph));
    } else {
      std::vector<int> args;
      for (size_t i = 0; i < n.inputs().size(); ++i) args.push_back(value(n.input(i), input_map(n, i, map), ph));
      r = lower_elementwise(n, args, code(ph));
    }
    memo.emplace(key, r);
    if (ph == kBody) body_values_[static_cast<size_t>(pos)].emplace_back(map, r);
    return r;
  }

  // start + i * step in arange's dtype, as its reference computes it (in f64, then converted); in
  // integers where that is exact (whole start and step, values within the dtype's exact range).
  static int arange_value(const ir::Node& n, int i, ScalarCode& c) {
    const ir::Attrs& a = n.attrs();
    const double start = a.get_float("start"), step = a.get_float("step");
    const ScalarType out = scalar_type_of(n.output_types()[0].dtype);
    const double last = start + step * static_cast<double>(std::max<int64_t>(n.output_types()[0].numel() - 1, 0));
    // The values the integer path holds exactly: a float type's whole numbers, an integer type's range.
    double lo = -0x1p24, hi = 0x1p24;
    if (out == ScalarType::f64) lo = -0x1p53, hi = 0x1p53;
    if (is_signed_int(out)) lo = -std::ldexp(1.0, scalar_bits(out) - 1), hi = std::min(-lo - 1, 0x1p53);
    if (is_unsigned_int(out)) lo = 0, hi = std::min(std::ldexp(1.0, scalar_bits(out)) - 1, 0x1p53);
    const bool whole = std::trunc(start) == start && std::trunc(step) == step;
    if (whole && std::min(start, last) >= std::max(lo, -0x1p53) && std::max(start, last) <= hi &&
        out != ScalarType::boolean) {
      const int v = c.binary(Op::Add, c.binary(Op::Mul, i, c.lit_int(ScalarType::i64, static_cast<int64_t>(step))),
                             c.lit_int(ScalarType::i64, static_cast<int64_t>(start)));
      return c.convert(v, out);
    }
    const int x = c.binary(Op::Add, c.binary(Op::Mul, c.convert(i, ScalarType::f64), c.lit(ScalarType::f64, step)),
                           c.lit(ScalarType::f64, start));
    return c.convert(x, out);
  }

  static bool is_view(const ir::Node& n) {
    const std::string& op = n.op_name();
    return op == "reshape" || op == "permute" || op == "broadcast_to" || op == "slice" || op == "flip";
  }

  IndexMap dims_of(const IndexMap& map, const Shape& shape, const ir::Node& n) const {
    auto m = with_dims(map, shape, domain_);
    TESSERA_CHECK(m.has_value(), "loop IR: '{}' needs per-axis indices of {} after a reshape that merges axes",
                  n.op_name(), shape_str(shape));
    return *m;
  }

  // Where input i of n is read when n is read at `map`.
  IndexMap input_map(const ir::Node& n, size_t i, const IndexMap& map) const {
    const Shape& out = n.output_types()[0].shape;
    const Shape& in = n.input(i).shape();
    const std::string& op = n.op_name();
    if (op == "reshape") {
      IndexMap lin{true, {}, to_linear(map, out, domain_.size())};
      auto m = with_dims(lin, in, domain_);
      return m ? *m : lin;
    }
    if (op == "permute") {
      const IndexMap m = dims_of(map, out, n);
      const auto& axes = n.attrs().get_ints("axes");
      IndexMap r{false, std::vector<Affine>(in.size()), {}};
      for (size_t k = 0; k < axes.size(); ++k) r.dims[static_cast<size_t>(axes[k])] = m.dims[k];
      return r;
    }
    if (op == "slice") {
      IndexMap m = dims_of(map, out, n);
      const auto& a = n.attrs();
      const size_t axis =
          static_cast<size_t>(normalize_axis(a.get_int("axis"), static_cast<int64_t>(in.size()), "slice"));
      const SliceRange s = resolve_slice(in[axis], a.get_int("start"), a.get_int("stop"), a.get_int("step"));
      m.dims[axis] = affine_add(affine_const(domain_.size(), s.start), affine_scale(m.dims[axis], s.step));
      return m;
    }
    if (op == "flip") {
      IndexMap m = dims_of(map, out, n);
      for (int64_t ax : n.attrs().get_ints("axes")) {
        const size_t axis = static_cast<size_t>(normalize_axis(ax, static_cast<int64_t>(in.size()), "flip"));
        m.dims[axis] = affine_add(affine_const(domain_.size(), in[axis] - 1), affine_scale(m.dims[axis], -1));
      }
      return m;
    }
    // Elementwise ops and broadcast_to: NumPy broadcasting, right-aligned; size-1 axes read index 0.
    if (in == out) return map;
    const IndexMap m = dims_of(map, out, n);
    IndexMap r{false, {}, {}};
    const size_t lead = out.size() - in.size();
    for (size_t j = 0; j < in.size(); ++j) {
      r.dims.push_back(in[j] == 1 ? affine_const(domain_.size(), 0) : m.dims[j + lead]);
    }
    return r;
  }

  void add_store(size_t o) {
    const int pos = output_pos(o);
    const ir::TensorType& t = cluster_.outputs[o].type();
    const int64_t numel = t.numel();
    const bool has_red = !k_.reductions.empty();
    int64_t kept_numel = 1, all = shape_numel(domain_);
    for (size_t d = 0; d < domain_.size(); ++d) kept_numel *= kept_[d] ? domain_[d] : 1;
    Store s;
    s.output = static_cast<int>(o);
    if (!depends_on_reduction_[static_cast<size_t>(pos)] && numel == all) {
      // Reuse a map the value is already computed at when it writes every element exactly once.
      for (const auto& [m, id] : body_values_[static_cast<size_t>(pos)]) {
        const Affine lin = to_linear(m, t.shape, domain_.size());
        if (is_bijection(lin, domain_, std::vector<bool>(domain_.size(), true), numel)) {
          s.value = id;
          s.access = lin;
          break;
        }
      }
      if (s.value < 0) {
        auto dims = delinearize(row_major(domain_, std::vector<bool>(domain_.size(), true)), t.shape, domain_);
        TESSERA_CHECK(dims.has_value(), "loop IR: output {} does not follow the domain {}", ir::type_str(t),
                      shape_str(domain_));
        const IndexMap m{false, std::move(*dims), {}};
        s.value = node_value(pos, m, kBody);
        s.access = to_linear(m, t.shape, domain_.size());
      }
      k_.body_stores.push_back(std::move(s));
      return;
    }
    if (has_red && numel == all && numel != kept_numel) {
      // A value of the domain's size that uses a finished reduction: the row phase computes it.
      auto dims = delinearize(row_major(domain_, std::vector<bool>(domain_.size(), true)), t.shape, domain_);
      TESSERA_CHECK(dims.has_value(), "loop IR: output {} does not follow the domain {}", ir::type_str(t),
                    shape_str(domain_));
      const IndexMap m{false, std::move(*dims), {}};
      s.value = node_value(pos, m, kRow);
      s.access = to_linear(m, t.shape, domain_.size());
      k_.row_stores.push_back(std::move(s));
      return;
    }
    TESSERA_CHECK(has_red && numel == kept_numel, "loop IR: output {} of '{}' does not fit the domain {}",
                  ir::type_str(t), cluster_.nodes[static_cast<size_t>(pos)]->op_name(), shape_str(domain_));
    const IndexMap m = kept_map(t.shape);
    s.value = node_value(pos, m, kEpilogue);
    s.access = to_linear(m, t.shape, domain_.size());
    k_.epilogue_stores.push_back(std::move(s));
  }

  const Cluster& cluster_;
  Shape domain_;
  std::vector<bool> reduced_, kept_;
  Kernel k_;
  ScalarCode body_, epilogue_, row_;
  std::vector<ScalarCode> chained_;  // one per chained walk, over k_.chained
  std::vector<int> finished_after_;  // per node: the last walk whose reductions its value needs (-1: none)
  std::unordered_map<const ir::Node*, int> pos_;
  std::unordered_map<ir::Value, int, ir::ValueHash> input_pos_;
  std::vector<bool> depends_on_reduction_;
  std::unordered_map<int, int> reduction_index_;
  std::unordered_map<int, std::unordered_map<std::string, int>> memo_;
  std::vector<std::vector<std::pair<IndexMap, int>>> body_values_;
};

}  // namespace

Kernel build_loop_kernel(const Cluster& cluster, const std::string& name) {
  TESSERA_CHECK(!cluster.nodes.empty(), "loop IR: empty cluster");
  TESSERA_CHECK(!cluster.outputs.empty(), "loop IR: cluster without outputs");
  // With reductions the domain is their common input shape; without, the shape of an output with the
  // most elements (the others must be bijective images of it; try each candidate).
  std::vector<const ir::Node*> reductions;
  for (const auto& n : cluster.nodes) {
    if (n->op().has(ir::kReduction)) reductions.push_back(n.get());
  }
  if (!reductions.empty()) {
    const Shape& domain = reductions[0]->input(0).shape();
    const auto axes = normalize_axes(reductions[0]->attrs().get_ints("axes"), static_cast<int64_t>(domain.size()),
                                     reductions[0]->op_name().c_str());
    for (const ir::Node* r : reductions) {
      const auto other = normalize_axes(r->attrs().get_ints("axes"), r->input(0).rank(), r->op_name().c_str());
      TESSERA_CHECK(r->input(0).shape() == domain && other == axes,
                    "loop IR: reductions over different domains ({} axes {} and {} axes {}) in one cluster",
                    shape_str(domain), shape_str(axes), shape_str(r->input(0).shape()), shape_str(other));
    }
    std::vector<bool> reduced(domain.size(), false);
    for (int64_t a : axes) reduced[static_cast<size_t>(a)] = true;
    Kernel k = KernelBuilder(cluster, domain, reduced).build();
    k.name = name;
    return k;
  }
  int64_t most = -1;
  for (const ir::Value& v : cluster.outputs) most = std::max(most, v.type().numel());
  // Candidate domains: the largest outputs' shapes, then the shapes of inner nodes with as many
  // elements, finer ones first: a cluster that ends in a reshape merging axes (RoPE's pairs folded
  // back into heads) is computed over the unmerged axes, and the merge becomes the store's index.
  std::vector<Shape> domains;
  auto consider = [&](const Shape& shape) {
    if (shape_numel(shape) == most && std::find(domains.begin(), domains.end(), shape) == domains.end()) {
      domains.push_back(shape);
    }
  };
  for (size_t i = cluster.outputs.size(); i-- > 0;) consider(cluster.outputs[i].shape());
  const size_t from_outputs = domains.size();
  for (const auto& n : cluster.nodes) consider(n->output_types()[0].shape);
  std::stable_sort(domains.begin() + static_cast<std::ptrdiff_t>(from_outputs), domains.end(),
                   [](const Shape& a, const Shape& b) { return a.size() > b.size(); });
  std::optional<Error> first_error;
  for (const Shape& domain : domains) {
    try {
      Kernel k = KernelBuilder(cluster, domain, std::vector<bool>(domain.size(), false)).build();
      k.name = name;
      return k;
    } catch (const Error& e) {
      if (!first_error) first_error = e;
    }
  }
  throw *first_error;
}

}  // namespace tessera::lower
