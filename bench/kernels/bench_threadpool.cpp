// Dispatch cost of ThreadPool::parallel_for: an empty job split over all threads, back to back (as
// the kernels of a compiled step arrive), and after an idle pause (workers asleep).
// Usage: bench_threadpool [calls]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "bench/kernels/bench_util.h"
#include "tessera/runtime/thread_pool.h"

using namespace tessera;

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 20000;
  runtime::ThreadPool& pool = runtime::default_pool();
  volatile int64_t sink = 0;
  auto one = [&] { pool.parallel_for(pool.size(), 1, [&](int64_t b, int64_t e) { sink = sink + (e - b); }); };
  const double hot = bench::median_seconds(
      [&] {
        for (int i = 0; i < calls; ++i) one();
      },
      5);
  std::printf("threads=%d back-to-back parallel_for: %.2f us per call\n", pool.size(), hot / calls * 1e6);
  double cold_total = 0.0;
  const int cold_calls = 50;
  for (int i = 0; i < cold_calls; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const auto t0 = std::chrono::steady_clock::now();
    one();
    cold_total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  std::printf("threads=%d after 5 ms idle: %.2f us per call (mean)\n", pool.size(), cold_total / cold_calls * 1e6);
  return 0;
}
