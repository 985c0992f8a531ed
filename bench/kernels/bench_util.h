#pragma once
// Timing helpers shared by the kernel benchmarks: medians of repeated runs (the machine is shared,
// so single runs are noisy), with a warm-up run first.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <vector>

namespace tessera::bench {

// Median seconds per call of fn over `reps` samples; each sample runs fn `inner` times.
template <typename F>
double median_seconds(F&& fn, int reps, int inner = 1) {
  fn();
  std::vector<double> samples;
  samples.reserve(static_cast<size_t>(reps));
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < inner; ++i) fn();
    const auto t1 = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double>(t1 - t0).count() / inner);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

// Calls per sample so that one sample lasts about `target` seconds.
template <typename F>
int calibrate_inner(F&& fn, double target = 0.02) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  const double once = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
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
