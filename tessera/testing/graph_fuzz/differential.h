#pragma once
// Runs one graph on the reference backend and on a backend under test in several variants (for the
// CPU backend: generated kernels on and off, each pass and each fusion switched off, ...) and compares
// every output: bit for bit where the generator says the value is exact, else within a tolerance per
// dtype relative to the output's scale. Each variant runs the executable twice (run, then run_into
// fresh arrays), so reusing an arena is checked too. Backends other than the CPU run the same way:
// the variants are the backend's own switches.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tessera/backends/backend.h"

namespace tessera::testing::fuzz {

struct Variant {
  std::string name;
  // Switches the backend into this variant until the returned guard is destroyed.
  std::function<std::shared_ptr<void>()> enter;
};

struct BackendUnderTest {
  std::string name;
  backends::Backend* backend = nullptr;
  std::vector<Variant> variants;  // the first ones are always run; see choose_variants
  size_t always = 1;              // how many leading variants every graph runs
};

// "cpu" (every switch of the CPU backend) or any registered backend name (one plain variant).
BackendUnderTest backend_under_test(const std::string& name);

struct Mismatch {
  std::string variant;
  std::string what;  // "output 2: element 5 is 3.0, expected 4.0" or "compile failed: ..."
  bool exception = false;
};

struct Verdict {
  bool reference_failed = false;  // the graph is not valid input (the oracle rejected it)
  std::string reference_error;
  std::vector<Mismatch> mismatches;
  int64_t executions = 0;  // compiled runs of the backend under test
  bool ok() const { return !reference_failed && mismatches.empty(); }
};

// The reference backend's outputs and, per element, how far a correct backend may be from them: the
// output's measured sensitivity to rounding (the reference run again with every non-integer float
// value perturbed by a few units of roundoff, twice), plus a few roundings of the value itself.
struct ReferenceRun {
  std::vector<Array> outputs;
  std::vector<std::vector<double>> tolerances;
  bool finite = true;  // no float value anywhere in the graph is NaN or infinite
};
ReferenceRun reference_run(const ir::Graph& graph, const std::vector<Array>& inputs);

// Compares one output; "" when it matches (bit for bit when `exact`, else within `tol` per element).
std::string compare_output(const Array& expected, const Array& got, bool exact, const std::vector<double>& tol);

// With `finite_only`, a graph in which the reference computes a NaN or an infinity anywhere counts as
// rejected: where NaNs propagate (0 times NaN in a padded convolution tap, say) differs between correct
// implementations, so the fuzzer keeps to finite values.
Verdict check_graph(const ir::Graph& graph, const std::vector<Array>& inputs, const std::vector<bool>& exact,
                    const BackendUnderTest& backend, const std::vector<const Variant*>& variants,
                    bool finite_only = false);

// The leading `always` variants and `extra` others drawn with `seed`.
std::vector<const Variant*> choose_variants(const BackendUnderTest& backend, size_t extra, uint64_t seed);

}  // namespace tessera::testing::fuzz
