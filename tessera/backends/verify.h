#pragma once
// The verification switch: with TESSERA_VERIFY=1 in the environment, or set_verify(true), every run
// of a compiled executable on a fast backend also runs the same graph on the reference backend and
// compares the outputs. The comparison is printed to stderr (one line per output) and kept as the
// last report, which tests read back.
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/array.h"
#include "tessera/ir/graph.h"

namespace tessera::backends {

struct OutputCheck {
  std::string type;  // "f32[64, 10]"
  double max_abs_error = 0;
  // max |actual - expected| / max(|expected|, 1e-6 * max|expected|): relative to each element, but
  // elements far below the output's scale are judged against that scale.
  double max_rel_error = 0;
  int64_t nonfinite_mismatches = 0;  // elements where nan/inf differ (counted, not in the maxima)
};

struct VerifyReport {
  std::string backend;
  std::string graph;
  std::vector<OutputCheck> outputs;
  uint64_t sequence = 0;  // numbers the verified runs of this process (0: none yet)
  double max_abs_error() const;
  double max_rel_error() const;
  int64_t nonfinite_mismatches() const;
};

void set_verify(bool on);  // overrides $TESSERA_VERIFY
bool verify_enabled();
VerifyReport last_verify_report();

OutputCheck compare_outputs(const Array& expected, const Array& actual);
// The reference backend's outputs for `inputs`, as fresh copies (safe to keep while the inputs change).
std::vector<Array> reference_outputs(const ir::Graph& graph, const std::vector<Array>& inputs);
// Compares, prints and records one verified run.
VerifyReport record_verification(const std::string& backend, const ir::Graph& graph, const std::vector<Array>& expected,
                                 const std::vector<Array>& actual);

}  // namespace tessera::backends
