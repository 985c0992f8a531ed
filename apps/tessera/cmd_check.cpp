// tessera check GRAPH.tsr [--backend cpu] [--seed S]: runs a graph on a backend and on the reference
// backend and compares every output — the replay an internal compiler error's report points to, and
// the check of a graph fuzzer regression file. For the CPU backend every variant runs (generated
// kernels on and off, each pass and each fusion switched off). A file with `# input N:` lines (a
// regression file) is fed that data; any other graph gets seeded random inputs (floats in [-2, 2],
// integers in [0, 2], random bools).
#include <iostream>

#include "command.h"
#include "file_io.h"
#include "tessera/testing/graph_fuzz/fuzz_driver.h"

namespace tessera::cli {

namespace {

struct CheckOptions {
  std::string file;
  std::string backend = "cpu";
  uint64_t seed = 1;
};

int run_check(const CheckOptions& o) {
  using namespace testing::fuzz;
  const std::string text = read_text_file(o.file);
  Case c;
  if (text.find("\n# input 0:") != std::string::npos || text.rfind("# input 0:", 0) == 0) {
    c = parse_regression(text, o.file).c;
  } else {
    c.graph = ir::parse_graph(text);
    std::vector<InputSpec> specs;
    for (const ir::Value& v : c.graph.inputs()) {
      specs.push_back(is_floating(v.dtype())         ? InputSpec::uniform(-2, 2)
                      : v.dtype() == DType::boolean ? InputSpec::boolean()
                                                    : InputSpec::integers(0, 2));
    }
    c.inputs = make_inputs(c.graph.input_types(), specs, o.seed);
    c.exact.assign(c.graph.outputs().size(), false);
  }
  const BackendUnderTest backend = backend_under_test(o.backend);
  const std::string result = replay(c, backend);
  if (result.empty()) {
    std::cout << fmt::format("{}: {} variant(s) of the {} backend agree with the reference backend on {} output(s)\n",
                             o.file, backend.variants.size(), o.backend, c.graph.outputs().size());
    return kExitOk;
  }
  std::cout << o.file << ": the " << o.backend << " backend disagrees with the reference backend:\n" << result;
  return kExitFailure;
}

}  // namespace

Command add_check_command(CLI::App& root) {
  auto options = std::make_shared<CheckOptions>();
  CLI::App* app = root.add_subcommand(
      "check", "Run a graph (IR text, e.g. one an internal compiler error saved) on a backend against the reference");
  app->add_option("graph", options->file, "Graph in the IR text form, or a graph fuzzer regression file")->required();
  app->add_option("--backend", options->backend, "Backend to check (default cpu)");
  app->add_option("--seed", options->seed, "Seed of the random inputs (files without input data)");
  return {app, [options] { return run_check(*options); }};
}

}  // namespace tessera::cli
