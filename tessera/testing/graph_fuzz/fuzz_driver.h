#pragma once
// The graph fuzzer's loop: generate a graph, check it on the backend under test against the reference
// backend, and shrink each failure to a small graph kept as a regression file. The CI budget (tests/
// fuzz_graphs) and the long-run tool (tools/fuzz_graphs --hours) both call it.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tessera/testing/graph_fuzz/differential.h"
#include "tessera/testing/graph_fuzz/generator.h"
#include "tessera/testing/graph_fuzz/regression_file.h"

namespace tessera::testing::fuzz {

struct FuzzProgress {
  int64_t graphs = 0, rejected = 0, executions = 0, findings = 0;
  double seconds = 0;
};

struct FuzzOptions {
  uint64_t seed = 1;
  int64_t graphs = 1000;      // stop after this many graphs (0: no limit)
  double seconds = 0;         // stop after this long (0: no limit)
  size_t extra_variants = 1;  // per graph, beyond the variants every graph runs
  GeneratorOptions generator;
  std::string out_dir;    // where shrunk findings are written as .tsr regression files ("": nowhere)
  int max_findings = 20;  // stop after this many distinct findings
  std::function<void(const FuzzProgress&)> progress;  // called about once a second
};

struct Finding {
  uint64_t seed = 0;  // generate_graph's seed of the original graph
  std::string variant;
  std::string what;  // the first mismatch of the original graph
  Regression shrunk;
  std::string path;     // where it was written ("" if not)
  int64_t repeats = 0;  // later graphs that failed with the same signature
};

struct FuzzReport {
  FuzzProgress totals;
  std::vector<Finding> findings;
  std::map<std::string, int64_t> ops;  // how many generated graphs contained each op
};

FuzzReport run_fuzzer(const BackendUnderTest& backend, const FuzzOptions& options);

// Checks one case on every variant of `backend`; "" when all agree with the reference.
std::string replay(const Case& c, const BackendUnderTest& backend);

}  // namespace tessera::testing::fuzz
