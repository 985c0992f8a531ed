// libFuzzer target for the IR text parser: any input must either parse (and then print and re-parse
// to the same text) or throw tessera::Error; crashes, hangs and sanitizer reports are bugs.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "tessera/core/error.h"
#include "tessera/ir/graph.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const tessera::ir::Graph g = tessera::ir::parse_graph(text);
    const std::string printed = tessera::ir::print_graph(g);
    if (tessera::ir::print_graph(tessera::ir::parse_graph(printed)) != printed) std::abort();
  } catch (const tessera::Error&) {
  }
  return 0;
}
