#include "tessera/backends/internal_error.h"

#include <cstdlib>
#include <functional>

#include "tessera/core/atomic_file.h"

namespace tessera::backends {
namespace {

std::string report_dir() {
  for (const char* var : {"TESSERA_DUMP_DIR", "TMPDIR"}) {
    const char* dir = std::getenv(var);
    if (dir != nullptr && *dir != '\0') return dir;
  }
  return "/tmp";
}

}  // namespace

std::string save_graph_for_report(const ir::Graph& graph, const std::string& tag, std::string* why) {
  try {
    const std::string text = "# saved by a tessera internal compiler error report\n" + ir::print_graph(graph);
    const std::string path =
        fmt::format("{}/tessera-{}-{:016x}.tsr", report_dir(), tag, std::hash<std::string>()(text));
    write_file_atomic(path, text);
    return path;
  } catch (const std::exception& e) {
    if (why != nullptr) *why = e.what();
    return "";
  }
}

std::string describe_node(const ir::Graph& graph, const ir::Node& node) {
  const auto numbers = ir::value_numbers(graph);
  auto name = [&](const ir::Value& v) {
    auto it = numbers.find(v);
    return it == numbers.end() ? std::string("%?") : fmt::format("%{}", it->second);
  };
  std::string lhs, args, types;
  for (int i = 0; i < node.num_outputs(); ++i) {
    // The node's outputs are found through any graph node of the same identity.
    for (const ir::NodePtr& n : graph.nodes()) {
      if (n.get() == &node) lhs += (i ? ", " : "") + name(ir::Value(n, i));
    }
    types += (i ? ", " : "") + ir::type_str(node.output_types()[static_cast<size_t>(i)]);
  }
  for (size_t i = 0; i < node.inputs().size(); ++i) args += (i ? ", " : "") + name(node.inputs()[i]);
  return fmt::format("{} = {}({}) : {}", lhs.empty() ? "%?" : lhs, node.op_name(), args, types);
}

void raise_internal_error(const InternalErrorReport& r) {
  std::string msg = fmt::format("{} backend: internal compiler error: {}", r.backend, r.what);
  const ir::Graph* where = r.compiled != nullptr ? r.compiled : r.input;
  if (r.node != nullptr && where != nullptr) {
    msg += fmt::format("\n  while compiling {}", describe_node(*where, *r.node));
    msg += r.node->origin().empty() ? std::string("\n  built outside any module or composite op")
                                    : fmt::format("\n  built by {}", r.node->origin());
  }
  std::string why;
  const std::string input_path = r.input != nullptr ? save_graph_for_report(*r.input, r.backend, &why) : "";
  if (!input_path.empty()) {
    msg += fmt::format("\n  the graph is saved in {}", input_path);
    if (r.compiled != nullptr && r.compiled != r.input) {
      const std::string compiled_path = save_graph_for_report(*r.compiled, r.backend + "-compiled", &why);
      if (!compiled_path.empty()) msg += fmt::format(" (after the passes, numbered as above: {})", compiled_path);
    }
    msg += fmt::format("\n  replay it with: tessera check {} --backend {} (TESSERA_DUMP=all also prints the graph "
                       "after each pass and the lowered program)",
                       input_path, r.backend);
  } else if (r.input != nullptr) {
    msg += fmt::format("\n  (the graph could not be saved: {})", why);
  }
  msg += "\n  work around it with ";
  if (!r.workaround.empty()) msg += r.workaround + ", or ";
  msg += "TESSERA_FUSION=0 and TESSERA_PASSES=0, or TESSERA_BACKEND=reference; please report it with the saved graph";
  throw InternalCompilerError(msg);
}

}  // namespace tessera::backends
