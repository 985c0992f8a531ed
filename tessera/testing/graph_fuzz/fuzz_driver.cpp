#include "tessera/testing/graph_fuzz/fuzz_driver.h"

#include <chrono>
#include <filesystem>
#include <set>

#include "tessera/io/atomic_file.h"

namespace tessera::testing::fuzz {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

uint64_t graph_seed(uint64_t seed, int64_t i) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(i) + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Two findings are the same bug when their shrunk graphs use the same ops and fail the same way.
std::string signature(const Regression& r, bool exception) {
  std::set<std::string> ops;
  for (const ir::NodePtr& n : r.c.graph.nodes()) ops.insert(n->op_name());
  std::string s = exception ? "exception:" : "mismatch:";
  for (const std::string& op : ops) s += op + ",";
  return s;
}

}  // namespace

std::string replay(const Case& c, const BackendUnderTest& backend) {
  std::vector<const Variant*> all;
  for (const Variant& v : backend.variants) all.push_back(&v);
  const Verdict v = check_graph(c.graph, c.inputs, c.exact, backend, all);
  if (v.reference_failed) return "the reference backend rejects the case: " + v.reference_error;
  std::string out;
  for (const Mismatch& m : v.mismatches) out += fmt::format("[{}] {}\n", m.variant, m.what);
  return out;
}

FuzzReport run_fuzzer(const BackendUnderTest& backend, const FuzzOptions& options) {
  FuzzReport report;
  FuzzProgress& t = report.totals;
  std::map<std::string, size_t> seen;  // signature -> finding index
  const auto t0 = std::chrono::steady_clock::now();
  double last_progress = 0;
  for (int64_t i = 0;; ++i) {
    t.seconds = seconds_since(t0);
    if (options.graphs > 0 && i >= options.graphs) break;
    if (options.seconds > 0 && t.seconds >= options.seconds) break;
    if (static_cast<int>(report.findings.size()) >= options.max_findings) break;
    if (options.progress && t.seconds - last_progress >= 1.0) {
      options.progress(t);
      last_progress = t.seconds;
    }
    const uint64_t seed = graph_seed(options.seed, i);
    GeneratedGraph g;
    try {
      g = generate_graph(seed, options.generator);
    } catch (const Error&) {
      ++t.rejected;  // building the graph itself failed (an op rejected an operand the recipe chose)
      continue;
    }
    ++t.graphs;
    std::set<std::string> ops;
    for (const ir::NodePtr& n : g.graph.nodes()) ops.insert(n->op_name());
    for (const std::string& op : ops) ++report.ops[op];
    const std::vector<Array> inputs = make_inputs(g.graph.input_types(), g.specs, seed);
    const std::vector<const Variant*> variants = choose_variants(backend, options.extra_variants, seed);
    const Verdict v = check_graph(g.graph, inputs, g.exact, backend, variants, /*finite_only=*/true);
    t.executions += v.executions;
    if (v.reference_failed) {
      ++t.rejected;
      continue;
    }
    if (v.mismatches.empty()) continue;
    // Shrink against the first failing variant alone.
    const Mismatch first = v.mismatches.front();
    const Variant* failing = nullptr;
    for (const Variant* x : variants) {
      if (x->name == first.variant) failing = x;
    }
    auto still_fails = [&](const Case& c) {
      const Verdict w = check_graph(c.graph, c.inputs, c.exact, backend, {failing}, /*finite_only=*/true);
      return !w.reference_failed && !w.mismatches.empty() && w.mismatches.front().exception == first.exception;
    };
    Finding f;
    f.seed = seed;
    f.variant = first.variant;
    f.what = first.what;
    f.shrunk.c = shrink(Case{g.graph, inputs, g.exact}, still_fails);
    f.shrunk.variant = first.variant;
    f.shrunk.notes.push_back(fmt::format("found by generate_graph seed {} in variant '{}'", seed, first.variant));
    f.shrunk.notes.push_back(first.what.substr(0, 400));
    const std::string sig = signature(f.shrunk, first.exception);
    if (auto it = seen.find(sig); it != seen.end()) {
      ++report.findings[it->second].repeats;
      continue;
    }
    if (!options.out_dir.empty()) {
      std::filesystem::create_directories(options.out_dir);
      f.path = fmt::format("{}/finding-{:016x}.tsr", options.out_dir, seed);
      io::write_file_atomic(f.path, write_regression(f.shrunk));
    }
    seen.emplace(sig, report.findings.size());
    report.findings.push_back(std::move(f));
    ++t.findings;
  }
  t.seconds = seconds_since(t0);
  if (options.progress) options.progress(t);
  return report;
}

}  // namespace tessera::testing::fuzz
