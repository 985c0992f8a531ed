// Timing loops shared by the workloads: one warm-up call to size the runs, then `repeat` timed runs
// and their median (robust against the odd slow run on a shared machine).
#include <algorithm>
#include <chrono>
#include <cmath>

#include "tessera/bench/workloads.h"
#include "tessera/core/error.h"

namespace tessera::bench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_of(const std::function<void()>& body, int64_t calls, const std::function<void()>& finish) {
  const auto start = Clock::now();
  for (int64_t i = 0; i < calls; ++i) body();
  if (finish) finish();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Calls per timed run so that a run lasts about run_seconds (at least one call).
int64_t calls_per_run(const BenchOptions& options, const std::function<void()>& body) {
  const double first = seconds_of(body, 1, options.finish);  // warm-up: compiles, caches, page faults
  const double second = seconds_of(body, 1, options.finish);
  const double per_call = std::max(1e-7, std::min(first, second));
  return std::max<int64_t>(1, static_cast<int64_t>(options.run_seconds / per_call));
}

Measurement summarise(const std::string& name, const std::string& unit, bool higher_is_better,
                      std::vector<double> values) {
  std::sort(values.begin(), values.end());
  Measurement m;
  m.name = name;
  m.unit = unit;
  m.higher_is_better = higher_is_better;
  m.runs = static_cast<int>(values.size());
  m.min = values.front();
  m.max = values.back();
  const size_t n = values.size();
  m.median = n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
  return m;
}

}  // namespace

Measurement measure_rate(const std::string& name, const std::string& unit, const BenchOptions& options, double units,
                         const std::function<void()>& body) {
  TESSERA_CHECK(options.repeat >= 1, "bench: --repeat must be at least 1, got {}", options.repeat);
  const int64_t calls = calls_per_run(options, body);
  std::vector<double> rates;
  for (int r = 0; r < options.repeat; ++r) rates.push_back(units * static_cast<double>(calls) / seconds_of(body, calls, options.finish));
  return summarise(name, unit, true, rates);
}

Measurement measure_latency(const std::string& name, const std::string& unit, const BenchOptions& options,
                            const std::function<void()>& body) {
  TESSERA_CHECK(options.repeat >= 1, "bench: --repeat must be at least 1, got {}", options.repeat);
  TESSERA_CHECK(unit == "us" || unit == "ms", "bench: latency unit must be us or ms, got {}", unit);
  const double scale = unit == "us" ? 1e6 : 1e3;
  const int64_t calls = calls_per_run(options, body);
  std::vector<double> times;
  for (int r = 0; r < options.repeat; ++r) times.push_back(scale * seconds_of(body, calls, options.finish) / static_cast<double>(calls));
  return summarise(name, unit, false, times);
}

}  // namespace tessera::bench
