// The export driver: walks the graph in topological order, maps leaves to @main arguments or
// constants, lowers each node through its rule (or, lacking one, through its OpDef's decomposition,
// exported in place), and assembles the module text once everything succeeded.
#include "tessera/io/stablehlo/export.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <numeric>
#include <unordered_map>

#include "tessera/io/atomic_file.h"
#include "tessera/io/stablehlo/lower.h"
#include "tessera/ir/op_def.h"

namespace tessera::io::stablehlo {

// --- the lowering table ------------------------------------------------------------------------------

void LowerContext::fail(const std::string& message) const {
  std::vector<ir::TensorType> types;
  for (const ir::Value& v : node.inputs()) types.push_back(v.type());
  ::tessera::fail("stablehlo export: {}: {}", ir::describe_op(node.op_name(), types), message);
}

const LoweringTable& lowerings() {
  static const LoweringTable table = [] {
    LoweringTable t("stablehlo export");
    add_elementwise_lowerings(t);
    add_creation_lowerings(t);
    add_reduce_lowerings(t);
    add_shape_lowerings(t);
    add_index_lowerings(t);
    add_linalg_lowerings(t);
    add_conv_lowerings(t);
    add_pool_lowerings(t);
    add_random_lowerings(t);
    add_quant_lowerings(t);
    return t;
  }();
  return table;
}

std::vector<int64_t> node_axes(const LowerContext& c) {
  return normalize_axes(c.attrs().get_ints("axes"), c.node.input(0).rank(), c.node.op_name().c_str());
}

std::vector<Val> pick_extreme_with_index(Emitter& b, const std::vector<Val>& a, Cmp better, bool floating) {
  const Val &av = a[0], &ai = a[1], &bv = a[2], &bi = a[3];
  Val wins = b.compare(better, av, bv);
  Val tie = b.compare(Cmp::EQ, av, bv);
  if (floating) {
    const Val a_nan = b.is_nan(av), b_nan = b.is_nan(bv);
    wins = b.logical_or(wins, b.logical_and(a_nan, b.unary("stablehlo.not", b_nan)));
    tie = b.logical_or(tie, b.logical_and(a_nan, b_nan));
  }
  const Val pick_a = b.logical_or(wins, b.logical_and(tie, b.compare(Cmp::LT, ai, bi)));
  return {b.select(pick_a, av, bv), b.select(pick_a, ai, bi)};
}

std::string widened(const std::string& elem) {
  return elem == "f16" || elem == "bf16" ? "f32" : elem;
}

std::vector<int64_t> iota_axes(int64_t n, int64_t from) {
  std::vector<int64_t> v(static_cast<size_t>(std::max<int64_t>(n, 0)));
  std::iota(v.begin(), v.end(), from);
  return v;
}

std::string lowering_kind(const std::string& op) {
  if (op == "input" || op == "constant") return "direct";
  if (lowerings().find(op)) return "direct";
  const ir::OpDef* def = ir::OpRegistry::instance().find(op);
  return def && def->decompose ? "decomposed" : "";
}

// --- the driver ----------------------------------------------------------------------------------------

namespace {

using Env = std::unordered_map<ir::Value, Val, ir::ValueHash>;

class Exporter {
 public:
  explicit Exporter(const ExportOptions& options) : options_(options), e_(options.precision == Precision::Highest) {}

  Module run(const ir::Graph& graph) {
    Env env;
    for (size_t i = 0; i < graph.inputs().size(); ++i) {
      const ir::Value& v = graph.inputs()[i];
      Argument arg;
      arg.kind = Argument::Kind::Input;
      arg.type = v.type();
      const ir::Node& n = *v.node();
      arg.name = n.op_name() == "input" ? n.attrs().get_string("name") : fmt::format("input_{}", i);
      add_argument(arg, env, v);
    }
    for (const ir::NodePtr& node : graph.nodes()) lower_node(node, env, 0);

    Module m;
    std::vector<std::string> names, types;
    for (const ir::Value& v : graph.outputs()) {
      const Val& val = env.at(v);
      names.push_back(val.name);
      types.push_back(val.type());
      m.results.push_back(v.type());
    }
    m.arguments = args_;
    m.lowered_ops = lowered_;
    m.text = assemble(graph.name(), names, types);
    return m;
  }

 private:
  void add_argument(Argument arg, Env& env, const ir::Value& v) {
    const Val val{fmt::format("%arg{}", args_.size()), element_type(arg.type.dtype), arg.type.shape};
    env[v] = val;
    args_.push_back(std::move(arg));
  }

  void lower_node(const ir::NodePtr& ptr, Env& env, int depth) {
    const ir::Node& node = *ptr;
    const std::string& op = node.op_name();
    if (op == "constant") {
      env[ir::Value(ptr, 0)] = lower_constant(node);
      return;
    }
    if (op == "input") {
      ::tessera::fail("stablehlo export: input '{}' is used by the graph but is not one of its inputs",
                      node.attrs().get_string("name"));
    }
    std::vector<Val> in;
    for (const ir::Value& v : node.inputs()) in.push_back(env.at(v));
    std::vector<Val> outs;
    if (const LowerFn* fn = lowerings().find(op)) {
      LowerContext c{e_, node, in, options_};
      outs = (*fn)(c);
      lowered_.emplace(op, "direct");
    } else if (node.op().decompose) {
      outs = lower_decomposed(node, in, depth);
      lowered_.emplace(op, "decomposed");
    } else {
      std::vector<ir::TensorType> types;
      for (const ir::Value& v : node.inputs()) types.push_back(v.type());
      ::tessera::fail("stablehlo export: {}: the op has no StableHLO lowering and no decomposition",
                      ir::describe_op(op, types));
    }
    check_results(node, outs);
    for (size_t i = 0; i < outs.size(); ++i) env[ir::Value(ptr, static_cast<int>(i))] = outs[i];
  }

  // The decomposition is built on placeholders standing for the node's inputs and exported in place,
  // its placeholders bound to the inputs' values.
  std::vector<Val> lower_decomposed(const ir::Node& node, const std::vector<Val>& in, int depth) {
    TESSERA_CHECK(depth < 16, "stablehlo export: op '{}' decomposes without end", node.op_name());
    std::vector<ir::Value> placeholders;
    for (size_t i = 0; i < node.inputs().size(); ++i) {
      placeholders.push_back(ir::make_input(fmt::format("{}_in{}", node.op_name(), i), node.input(i).type()));
    }
    const std::vector<ir::Value> outs = node.op().decompose(placeholders, node.attrs());
    const ir::Graph sub = ir::Graph::build(placeholders, outs, node.op_name());
    Env env;
    for (size_t i = 0; i < placeholders.size(); ++i) env[placeholders[i]] = in[i];
    for (const ir::NodePtr& n : sub.nodes()) {
      TESSERA_CHECK(n->op_name() != node.op_name(), "stablehlo export: the decomposition of '{}' uses '{}' again",
                    node.op_name(), node.op_name());
      lower_node(n, env, depth + 1);
    }
    std::vector<Val> result;
    for (const ir::Value& v : outs) result.push_back(env.at(v));
    return result;
  }

  // Small constants inline; large ones become arguments so that the text stays small and the data
  // travels as an input array.
  Val lower_constant(const ir::Node& node) {
    const Array& value = node.attrs().get_tensor("value");
    lowered_.emplace("constant", "direct");
    const bool lift =
        options_.max_inline_elements >= 0 && value.numel() > options_.max_inline_elements && !is_splat(value);
    if (!lift) return e_.constant(value);
    Argument arg;
    arg.kind = Argument::Kind::Constant;
    arg.type = {value.dtype(), value.shape()};
    const std::string name = node.attrs().has("name") ? node.attrs().get_string("name") : std::string();
    arg.name = name.empty() ? fmt::format("constant_{}", constants_++) : name;
    arg.value = value;
    const Val v{fmt::format("%arg{}", args_.size()), element_type(value.dtype()), value.shape()};
    args_.push_back(std::move(arg));
    return v;
  }

  static bool is_splat(const Array& value) {
    const Array c = value.contiguous();
    const size_t width = dtype_size(c.dtype());
    const auto* p = static_cast<const unsigned char*>(c.raw_data());
    for (int64_t i = 1; i < c.numel(); ++i) {
      if (std::memcmp(p, p + static_cast<size_t>(i) * width, width) != 0) return false;
    }
    return true;
  }

  void check_results(const ir::Node& node, const std::vector<Val>& outs) {
    TESSERA_CHECK(static_cast<int>(outs.size()) == node.num_outputs(),
                  "stablehlo export: the lowering of '{}' gave {} results for {} outputs", node.op_name(), outs.size(),
                  node.num_outputs());
    for (size_t i = 0; i < outs.size(); ++i) {
      const ir::TensorType& want = node.output_types()[i];
      TESSERA_CHECK(outs[i].elem == element_type(want.dtype) && outs[i].shape == want.shape,
                    "stablehlo export: the lowering of '{}' gave {} for output {} of type {}", node.op_name(),
                    outs[i].type(), i, tensor_type(want));
    }
  }

  std::string assemble(const std::string& graph_name, const std::vector<std::string>& result_names,
                       const std::vector<std::string>& result_types) const;

  const ExportOptions& options_;
  Emitter e_;
  std::vector<Argument> args_;
  std::map<std::string, std::string> lowered_;
  int constants_ = 0;
};

std::string Exporter::assemble(const std::string& graph_name, const std::vector<std::string>& result_names,
                               const std::vector<std::string>& result_types) const {
  // A symbol name MLIR accepts without quotes.
  std::string name = options_.module_name.empty() ? graph_name : options_.module_name;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '.' && ch != '$') ch = '_';
  }
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "m_" + name;

  std::string out = fmt::format("// StableHLO exported by Tessera {} from graph '{}'.\n", TESSERA_VERSION, graph_name);
  for (size_t i = 0; i < args_.size(); ++i) {
    out += fmt::format("// %arg{}: {} '{}' {}\n", i, args_[i].kind == Argument::Kind::Input ? "input" : "constant",
                       args_[i].name, ir::type_str(args_[i].type));
  }
  out += fmt::format("module @{} attributes {{mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32}} {{\n", name);
  std::vector<std::string> params;
  for (size_t i = 0; i < args_.size(); ++i) params.push_back(fmt::format("%arg{}: {}", i, tensor_type(args_[i].type)));
  out +=
      fmt::format("  func.func public @main({}) -> ({}) {{\n", fmt::join(params, ", "), fmt::join(result_types, ", "));
  for (const std::string& l : e_.lines()) out += l + "\n";
  if (result_names.empty()) {
    out += "    return\n";
  } else {
    out += fmt::format("    return {} : {}\n", fmt::join(result_names, ", "), fmt::join(result_types, ", "));
  }
  out += "  }\n}\n";
  return out;
}

}  // namespace

Module export_graph(const ir::Graph& graph, const ExportOptions& options) {
  Exporter exporter(options);
  return exporter.run(graph);
}

Module export_function(const MultiFn& fn, const std::vector<ir::TensorType>& input_types, const ExportOptions& options,
                       const std::vector<std::string>& input_names) {
  return export_graph(trace(fn, input_types, input_names), options);
}

void write_module(const Module& module, const std::string& path) {
  write_file_atomic(path, module.text);
}

}  // namespace tessera::io::stablehlo
