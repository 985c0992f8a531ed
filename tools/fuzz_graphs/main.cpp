// tools/fuzz_graphs: the graph fuzzer's long-run mode and its workbench.
//   fuzz_graphs --hours 1 [--backend cpu] [--seed S] [--out DIR]   run until the time is up
//   fuzz_graphs --graphs 5000 ...                                   run a fixed number of graphs
//   fuzz_graphs --print 3 [--seed S] [--only RECIPE,...]            show generated graphs and stop
//   fuzz_graphs --replay FILE.tsr [--backend cpu]                   check one regression file
// Progress (graphs/s, executions, findings, time left) goes to stderr once a second; each finding is
// shrunk and written to --out (default fuzz-findings/) as a regression file for tests/fuzz_graphs.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <sstream>

#include "tessera/testing/graph_fuzz/fuzz_driver.h"

using namespace tessera;
using namespace tessera::testing::fuzz;

namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Tessera's graph fuzzer: random graphs on a backend against the reference backend"};
  double hours = 0, minutes = 0;
  int64_t graphs = 0, print = 0;
  uint64_t seed = 1;
  size_t extra = 2;
  std::string backend = "cpu", out = "fuzz-findings", replay_file, only;
  int max_findings = 50;
  app.add_option("--hours", hours, "run this long");
  app.add_option("--minutes", minutes, "run this long");
  app.add_option("--graphs", graphs, "run this many graphs");
  app.add_option("--seed", seed, "seed of the graph sequence");
  app.add_option("--backend", backend, "backend under test (cpu, or any registered name)");
  app.add_option("--extra-variants", extra, "variants per graph beyond the ones every graph runs");
  app.add_option("--out", out, "folder for shrunk findings");
  app.add_option("--max-findings", max_findings, "stop after this many distinct findings");
  app.add_option("--print", print, "print this many generated graphs and stop");
  app.add_option("--only", only, "comma-separated recipes to draw from");
  app.add_option("--replay", replay_file, "check one regression file on every variant");
  CLI11_PARSE(app, argc, argv);
  try {
    GeneratorOptions gen;
    gen.only = split_commas(only);
    if (print > 0) {
      for (int64_t i = 0; i < print; ++i) {
        const GeneratedGraph g = generate_graph(seed + static_cast<uint64_t>(i), gen);
        std::string recipes;
        for (const std::string& r : g.recipes) recipes += " " + r;
        std::printf("# seed %llu, gradient %d, recipes:%s\n%s\n", static_cast<unsigned long long>(seed + i),
                    g.gradient ? 1 : 0, recipes.c_str(), ir::print_graph(g.graph).c_str());
      }
      return 0;
    }
    const BackendUnderTest b = backend_under_test(backend);
    if (!replay_file.empty()) {
      const Regression r = read_regression_file(replay_file);
      const std::string result = replay(r.c, b);
      std::printf("%s\n", result.empty() ? "every variant agrees with the reference" : result.c_str());
      return result.empty() ? 0 : 1;
    }
    FuzzOptions o;
    o.seed = seed;
    o.graphs = graphs;
    o.seconds = 3600 * hours + 60 * minutes;
    if (o.graphs == 0 && o.seconds == 0) o.graphs = 1000;
    o.extra_variants = extra;
    o.generator = gen;
    o.out_dir = out;
    o.max_findings = max_findings;
    o.progress = [&](const FuzzProgress& p) {
      const double rate = p.graphs / std::max(p.seconds, 1e-9);
      const double left = o.seconds > 0
                              ? o.seconds - p.seconds
                              : (static_cast<double>(o.graphs) - static_cast<double>(p.graphs)) / std::max(rate, 1e-9);
      std::fprintf(stderr, "\r%lld graphs (%.1f/s), %lld executions, %lld rejected, %lld findings, %.0f s left   ",
                   static_cast<long long>(p.graphs), rate, static_cast<long long>(p.executions),
                   static_cast<long long>(p.rejected), static_cast<long long>(p.findings), std::max(left, 0.0));
    };
    const FuzzReport r = run_fuzzer(b, o);
    std::fprintf(stderr, "\n");
    std::printf("%lld graphs, %lld rejected by the oracle, %lld executions on %s in %.0f s: %zu findings\n",
                static_cast<long long>(r.totals.graphs), static_cast<long long>(r.totals.rejected),
                static_cast<long long>(r.totals.executions), backend.c_str(), r.totals.seconds, r.findings.size());
    for (const Finding& f : r.findings) {
      std::printf("  seed %llu [%s] %s (+%lld similar)\n    -> %s\n", static_cast<unsigned long long>(f.seed),
                  f.variant.c_str(), f.what.substr(0, 300).c_str(), static_cast<long long>(f.repeats), f.path.c_str());
    }
    std::printf("ops in generated graphs:");
    for (const auto& [op, n] : r.ops) std::printf(" %s:%lld", op.c_str(), static_cast<long long>(n));
    std::printf("\n");
    return r.findings.empty() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_graphs: %s\n", e.what());
    return 2;
  }
}
