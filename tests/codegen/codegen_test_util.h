#pragma once
// Shared helpers of the codegen tests: a temporary kernel cache for the whole binary, a small
// executor that runs a traced graph with its clusters compiled by the JIT (everything else on the
// reference kernels), and a comparison against the reference backend.
#include <cstdlib>
#include <map>
#include <set>
#include <unordered_map>

#include "tessera/backends/backend.h"
#include "tessera/backends/cpu/jit.h"
#include "tessera/ir/op_def.h"
#include "tessera/lower/fusion.h"
#include "tessera/lower/loop_ir.h"
#include "tessera/runtime/thread_pool.h"
#include "test_util.h"

namespace tessera::test {

// The kernel cache directory every test of this binary uses (created once, under /tmp).
const std::string& test_cache_dir();

inline ir::Graph trace_fn(const MultiFn& fn, const std::vector<ir::TensorType>& types) {
  return trace(fn, types);
}

// With half_types, f16/bf16 nodes too (the CPU backend does not fuse those yet; the JIT compiles them).
inline std::vector<lower::Cluster> cluster_all(const ir::Graph& g, bool half_types = false,
                                               lower::RowKernelRules rules = {}) {
  return lower::find_clusters(g, [=](const ir::Node& n) { return lower::can_generate(n, half_types); }, rules);
}

struct JitRun {
  std::vector<Array> outputs;
  std::vector<lower::Cluster> clusters;
  backends::cpu::JitStats stats;
};

// Runs `g`: clusters of generatable nodes through the JIT, other nodes through their reference
// kernels, in dependency order.
JitRun run_with_jit(const ir::Graph& g, const std::vector<Array>& inputs, int threads = 2, bool half_types = false,
                    lower::RowKernelRules rules = {});

// Reference backend results.
std::vector<Array> run_reference(const ir::Graph& g, const std::vector<Array>& inputs);

// Asserts equal dtypes, shapes and values: integers and bools exactly, floats within
// atol + rtol * |expected| with NaN where NaN is expected.
void expect_arrays_match(const std::vector<Array>& got, const std::vector<Array>& expected, double rtol = 1e-6,
                         double atol = 1e-7, const std::string& what = "");

// Random array of any dtype: floats uniform in [lo, hi], integers in [lo, hi] rounded, bools coin flips.
Array random_of(DType dt, const Shape& shape, uint64_t seed, double lo = -3, double hi = 3);

// Traces fn on `types`, runs it both ways on `inputs` and compares; returns the clusters.
std::vector<lower::Cluster> check_against_reference(const MultiFn& fn, const std::vector<Array>& inputs,
                                                    double rtol = 1e-6, double atol = 1e-7);

}  // namespace tessera::test
