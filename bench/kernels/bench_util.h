#pragma once
// Timing helpers shared by the kernel benchmarks: medians of repeated runs (the machine is shared,
// so single runs are noisy), with a warm-up run first.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <utility>
#include <vector>

namespace tessera::bench {

// Seconds on the clock the benchmarks use: wall time, or with TESSERA_BENCH_CLOCK=cpu the process's
// CPU time (all threads), which ignores time lost to other processes on a shared machine; with one
// thread the two agree on a quiet machine.
inline double now_seconds() {
  static const bool cpu = [] {
    const char* env = std::getenv("TESSERA_BENCH_CLOCK");
    return env != nullptr && std::strcmp(env, "cpu") == 0;
  }();
  if (cpu) {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Median seconds per call of fn over `reps` samples; each sample runs fn `inner` times.
template <typename F>
double median_seconds(F&& fn, int reps, int inner = 1) {
  fn();
  std::vector<double> samples;
  samples.reserve(static_cast<size_t>(reps));
  for (int r = 0; r < reps; ++r) {
    const double t0 = now_seconds();
    for (int i = 0; i < inner; ++i) fn();
    samples.push_back((now_seconds() - t0) / inner);
  }
  std::sort(samples.begin(), samples.end());
  // TESSERA_BENCH_STAT=min reports the fastest sample (least disturbed by other processes).
  static const bool use_min = [] {
    const char* env = std::getenv("TESSERA_BENCH_STAT");
    return env != nullptr && std::strcmp(env, "min") == 0;
  }();
  return use_min ? samples.front() : samples[samples.size() / 2];
}

// One competitor of interleaved_seconds: a callable and how many calls make one sample.
struct Competitor {
  std::function<void()> fn;
  int inner = 1;
};

// Like median_seconds for several competitors, taking their samples in turn so that a change in
// machine load during the run affects all alike (the comparisons are made in the same run). Returns
// seconds per call, in the competitors' order.
inline std::vector<double> interleaved_seconds(int reps, const std::vector<Competitor>& competitors) {
  for (const Competitor& c : competitors) c.fn();  // warm-up
  std::vector<std::vector<double>> samples(competitors.size());
  for (int r = 0; r < reps; ++r) {
    for (size_t c = 0; c < competitors.size(); ++c) {
      const double t0 = now_seconds();
      for (int i = 0; i < competitors[c].inner; ++i) competitors[c].fn();
      samples[c].push_back((now_seconds() - t0) / competitors[c].inner);
    }
  }
  const char* env = std::getenv("TESSERA_BENCH_STAT");
  const bool use_min = env != nullptr && std::strcmp(env, "min") == 0;
  std::vector<double> out;
  for (std::vector<double>& s : samples) {
    std::sort(s.begin(), s.end());
    out.push_back(use_min ? s.front() : s[s.size() / 2]);
  }
  return out;
}

template <typename F, typename G>
std::pair<double, double> paired_seconds(F&& f, G&& g, int reps, int inner_f, int inner_g) {
  const std::vector<double> t = interleaved_seconds(reps, {{std::ref(f), inner_f}, {std::ref(g), inner_g}});
  return {t[0], t[1]};
}

// Calls per sample so that one sample lasts about `target` seconds.
template <typename F>
int calibrate_inner(F&& fn, double target = 0.02) {
  const double t0 = now_seconds();
  fn();
  const double once = now_seconds() - t0;
  return static_cast<int>(std::clamp(target / std::max(once, 1e-9), 1.0, 100000.0));
}

inline std::vector<float> random_vector(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

}  // namespace tessera::bench
