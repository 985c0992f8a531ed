// tessera bench: runs the benchmark workloads (training steps, inference latency, kernels, compile
// times) and prints the median of several runs of each; --json prints one JSON object for scripts
// such as bench/compare_pytorch.py, which runs the same workloads in PyTorch and prints the ratios.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include <unistd.h>

#include "command.h"
#include "tessera/backends/backend.h"
#include "tessera/bench/workloads.h"

namespace tessera::cli {

namespace {

struct BenchCli {
  std::vector<std::string> names;
  bench::BenchOptions options;
  bool json = false;
  bool list = false;
};

std::string format_value(double v) { return v >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v); }

int run_bench(BenchCli& cli) {
  // Benchmarks measure the fast path unless told otherwise.
  if (cli.options.backend.empty()) cli.options.backend = "cpu";
  if (cli.list) {
    for (const bench::Workload& w : bench::workloads()) std::cout << fmt::format("{:<20} {}\n", w.name, w.description);
    return kExitOk;
  }
  backends::backend_by_name(cli.options.backend);  // a backend that cannot run here fails before the table
  std::vector<const bench::Workload*> chosen;
  if (cli.names.empty()) {
    // On a GPU: its own workloads and the training steps; on the host: everything not sized for a GPU.
    const bool gpu = !backends::backend_by_name(cli.options.backend).device().is_host();
    for (const bench::Workload& w : bench::workloads()) {
      const bool training = w.name.find("_train_") != std::string::npos;
      if (!w.on_request && (gpu ? w.gpu || training : !w.gpu)) chosen.push_back(&w);
    }
  } else {
    for (const std::string& n : cli.names) chosen.push_back(&bench::workload(n));  // unknown names fail first
  }
  nlohmann::json results = nlohmann::json::array();
  const bool interactive = ::isatty(STDERR_FILENO) != 0;
  std::ostream& table = cli.json ? std::cerr : std::cout;
  table << fmt::format("{:<20} {:>12} {:<10} {:>21}  {}\n", "workload", "median", "unit", "min .. max", "detail");
  for (size_t i = 0; i < chosen.size(); ++i) {
    if (interactive) std::cerr << fmt::format("[{}/{}] {}...", i + 1, chosen.size(), chosen[i]->name) << std::flush;
    const bench::Measurement m = chosen[i]->run(cli.options);
    if (interactive) std::cerr << "\r\033[K" << std::flush;  // clear the progress line
    table << fmt::format("{:<20} {:>12} {:<10} {:>21}  {}\n", m.name, format_value(m.median), m.unit,
                         format_value(m.min) + " .. " + format_value(m.max), m.detail)
          << std::flush;
    results.push_back({{"name", m.name},
                       {"unit", m.unit},
                       {"higher_is_better", m.higher_is_better},
                       {"median", m.median},
                       {"min", m.min},
                       {"max", m.max},
                       {"runs", m.runs},
                       {"detail", m.detail}});
  }
  if (cli.json) {
    nlohmann::json out{{"workloads", results},
                       {"backend", cli.options.backend},
                       {"hardware_threads", std::thread::hardware_concurrency()},
                       {"repeat", cli.options.repeat}};
    std::cout << out.dump() << std::endl;
  }
  return kExitOk;
}

}  // namespace

Command add_bench_command(CLI::App& root) {
  auto cli = std::make_shared<BenchCli>();
  CLI::App* app = root.add_subcommand("bench", "Run benchmark workloads and print medians (see bench/README.md)");
  app->add_option("workloads", cli->names, "Workloads to run (default: all; see --list)");
  app->add_option("--repeat", cli->options.repeat, "Timed runs per workload (the median is reported)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app->add_option("--seconds", cli->options.run_seconds, "Approximate length of one timed run")
      ->check(CLI::Range(0.001, 600.0))
      ->capture_default_str();
  app->add_option("--backend,--device", cli->options.backend, "Backend (default: cpu; cuda or vulkan for a GPU)")
      ->check(CLI::IsMember(backends::backend_names()));
  app->add_flag("--json", cli->json, "Print one JSON object with every measurement (the table goes to stderr)");
  app->add_flag("--list", cli->list, "List the workloads and exit");
  return {app, [cli] { return run_bench(*cli); }};
}

}  // namespace tessera::cli
