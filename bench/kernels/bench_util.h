#pragma once
// Timing helpers shared by the kernel benchmarks: medians of repeated runs (the machine is shared,
// so single runs are noisy), with a warm-up run first.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
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

// Like median_seconds for two competitors, alternating their samples so that a change in machine
// load during the run affects both alike (the comparisons are made in the same run).
template <typename F, typename G>
std::pair<double, double> paired_seconds(F&& f, G&& g, int reps, int inner_f, int inner_g) {
  f();
  g();
  std::vector<double> sf, sg;
  for (int r = 0; r < reps; ++r) {
    double t0 = now_seconds();
    for (int i = 0; i < inner_f; ++i) f();
    sf.push_back((now_seconds() - t0) / inner_f);
    t0 = now_seconds();
    for (int i = 0; i < inner_g; ++i) g();
    sg.push_back((now_seconds() - t0) / inner_g);
  }
  std::sort(sf.begin(), sf.end());
  std::sort(sg.begin(), sg.end());
  const char* env = std::getenv("TESSERA_BENCH_STAT");
  const bool use_min = env != nullptr && std::strcmp(env, "min") == 0;
  return use_min ? std::make_pair(sf.front(), sg.front()) : std::make_pair(sf[sf.size() / 2], sg[sg.size() / 2]);
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
