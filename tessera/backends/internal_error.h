#pragma once
// Internal compiler errors. A failure inside a backend's compiler is a bug of ours, not of the user's
// program, so its message says what a user can do about it: which node was being compiled and which
// module or user-level op built it (ir/origin.h), where the graph was saved as IR text to replay the
// failure (`tessera check FILE`), and which switch works around it.
#include <string>

#include "tessera/core/error.h"
#include "tessera/ir/graph.h"

namespace tessera::backends {

class InternalCompilerError : public Error {
 public:
  using Error::Error;
};

struct InternalErrorReport {
  std::string backend;                  // "cpu"
  std::string what;                     // what went wrong, in a sentence
  const ir::Graph* input = nullptr;     // the graph as compile() received it: the replayable one
  const ir::Graph* compiled = nullptr;  // the graph after the passes, where `node` lives (or null)
  const ir::Node* node = nullptr;       // the node being compiled, if known
  std::string workaround;               // a switch that avoids the failing part, e.g. TESSERA_FUSION=-epilogue
};

// Saves the graphs and throws InternalCompilerError with the whole report.
[[noreturn]] void raise_internal_error(const InternalErrorReport& report);

// Writes a graph's text form for a report into $TESSERA_DUMP_DIR (else $TMPDIR, else /tmp), named
// tessera-TAG-HASH.tsr after a hash of the text so one failure keeps one file. Returns the path, or ""
// with the reason in *why.
std::string save_graph_for_report(const ir::Graph& graph, const std::string& tag, std::string* why);

// "%12 = matmul(%3, %7) : f32[2, 2]", numbered as print_graph numbers the graph.
std::string describe_node(const ir::Graph& graph, const ir::Node& node);

}  // namespace tessera::backends
