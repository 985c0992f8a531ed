#pragma once
// A graph fuzzer finding kept as a regression test: the IR text of the shrunk graph, preceded by
// comment lines that the IR parser skips and this reader understands:
//   # note: what went wrong when it was found (free text)
//   # variant: the variant that failed
//   # exact: 1 0 ...           one flag per output (compare bit for bit or within tolerance)
//   # input 0: 0x0000803f...   the raw little-endian bytes of each graph input
#include <string>
#include <vector>

#include "tessera/testing/graph_fuzz/shrink.h"

namespace tessera::testing::fuzz {

struct Regression {
  Case c;
  std::string variant;
  std::vector<std::string> notes;
};

std::string write_regression(const Regression& r);
Regression parse_regression(const std::string& text, const std::string& where);  // throws naming `where`
Regression read_regression_file(const std::string& path);

}  // namespace tessera::testing::fuzz
