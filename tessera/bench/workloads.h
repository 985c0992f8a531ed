#pragma once
// The benchmark workloads behind `tessera bench` and bench/compare_pytorch.py: each one runs a
// fixed job several times and reports the median of its rate. Peers (PyTorch) run the same jobs in
// bench/compare_pytorch.py, which prints the ratios.
#include <functional>
#include <string>
#include <vector>

namespace tessera::ir {
class Graph;
}

namespace tessera::bench {

struct BenchOptions {
  int repeat = 5;             // timed runs; the median is reported
  double run_seconds = 0.5;   // each timed run lasts about this long
  std::string backend;        // empty: the default backend
  // Waits for work the body queued but did not finish (a GPU's stream), at the end of every timed run.
  std::function<void()> finish;
};

struct Measurement {
  std::string name;
  std::string unit;            // "samples/s", "us", "GFLOP/s", "GB/s", "ms"
  bool higher_is_better = true;
  double median = 0, min = 0, max = 0;
  int runs = 0;
  std::string detail;          // shapes, provider, ...
};

struct Workload {
  std::string name;
  std::string description;
  std::function<Measurement(const BenchOptions&)> run;
  bool gpu = false;  // sized for a GPU: left out of the default set on a host backend
  // Run only when named: it takes minutes (a model to write first), too long for the default set.
  bool on_request = false;
};

const std::vector<Workload>& workloads();
ir::Graph mlp_step_graph();  // the MLP training step (batch 64, Adam) that the compile-time workloads compile
const Workload& workload(const std::string& name);  // throws listing the known names

// Runs `body` (which does `units` units of work per call) until `repeat` timed runs of about
// run_seconds each are done, after one warm-up call; fills the median/min/max of units per second.
Measurement measure_rate(const std::string& name, const std::string& unit, const BenchOptions& options, double units,
                         const std::function<void()>& body);
// The same for a latency: reports the median time per call in `unit` ("us" or "ms").
Measurement measure_latency(const std::string& name, const std::string& unit, const BenchOptions& options,
                            const std::function<void()>& body);

}  // namespace tessera::bench
