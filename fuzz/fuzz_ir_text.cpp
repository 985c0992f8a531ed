// libFuzzer target for the IR text parser: any input must either parse (and then print and re-parse
// to the same text) or throw tessera::Error; crashes, hangs and sanitizer reports are bugs.
#include <string>

#include "fuzz/fuzz_target.h"
#include "tessera/core/error.h"
#include "tessera/ir/graph.h"

TESSERA_FUZZ_TARGET(ir_text) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  tessera::ir::Graph g;
  try {
    g = tessera::ir::parse_graph(text);
  } catch (const tessera::Error& e) {
    FUZZ_CHECK(tessera::fuzz::is_short_plain_message(e.what()));
    return 0;
  }
  const std::string printed = tessera::ir::print_graph(g);
  FUZZ_CHECK(tessera::ir::print_graph(tessera::ir::parse_graph(printed)) == printed);
  return 0;
}
