// Memory bandwidth: STREAM triad vs the fused relu(a*x + b) kernels over 16M floats, in one run.
// Usage: bench_bandwidth [reps] [n]
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench/kernels/bench_util.h"
#include "tessera/kernels/cpu/adam.h"
#include "tessera/kernels/cpu/bandwidth.h"
#include "tessera/kernels/cpu/softmax.h"

using namespace tessera;

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 15;
  const int64_t n = argc > 2 ? std::atoll(argv[2]) : int64_t{16} << 20;
  auto a = bench::random_vector(static_cast<size_t>(n), 1), b = bench::random_vector(static_cast<size_t>(n), 2);
  auto c = bench::random_vector(static_cast<size_t>(n), 3);
  std::vector<float> out(static_cast<size_t>(n));
  const double mb = static_cast<double>(n) * 4.0;
  const double triad =
      bench::median_seconds([&] { kernels::stream_triad(n, out.data(), b.data(), c.data(), 3.0f); }, reps);
  const double fused =
      bench::median_seconds([&] { kernels::fused_relu_axpb(n, a.data(), b.data(), c.data(), out.data()); }, reps);
  const double scalar =
      bench::median_seconds([&] { kernels::fused_relu_axpb_scalar(n, 2.0f, a.data(), 0.5f, out.data()); }, reps);
  const double triad_bw = 3 * mb / triad * 1e-9, fused_bw = 4 * mb / fused * 1e-9, scalar_bw = 2 * mb / scalar * 1e-9;
  std::printf("threads=%d n=%lld floats\n", runtime::default_pool().size(), static_cast<long long>(n));
  std::printf("%-36s %8.2f ms %8.1f GB/s\n", "stream triad a=b+s*c", triad * 1e3, triad_bw);
  std::printf("%-36s %8.2f ms %8.1f GB/s  (%.0f%% of triad)\n", "fused relu(a*x+b), arrays", fused * 1e3, fused_bw,
              100.0 * fused_bw / triad_bw);
  std::printf("%-36s %8.2f ms %8.1f GB/s  (%.0f%% of triad)\n", "fused relu(a*x+b), scalar a,b", scalar * 1e3,
              scalar_bw, 100.0 * scalar_bw / triad_bw);
  // Fused Adam over the MLP 784-1024-512-256-10's parameters (8 tensors, 1.46M floats): 4 reads + 3
  // writes per element.
  {
    const int64_t sizes[] = {1024 * 784, 1024, 512 * 1024, 512, 256 * 512, 256, 10 * 256, 10};
    std::vector<std::vector<float>> p, g, m, v;
    std::vector<kernels::AdamTensor> tensors;
    int64_t total = 0;
    for (int64_t sz : sizes) {
      p.push_back(bench::random_vector(static_cast<size_t>(sz), 7));
      g.push_back(bench::random_vector(static_cast<size_t>(sz), 8));
      m.emplace_back(static_cast<size_t>(sz), 0.0f);
      v.emplace_back(static_cast<size_t>(sz), 0.0f);
      total += sz;
    }
    for (size_t i = 0; i < p.size(); ++i)
      tensors.push_back(
          {sizes[i], p[i].data(), g[i].data(), m[i].data(), v[i].data(), p[i].data(), m[i].data(), v[i].data()});
    kernels::AdamHyper h;
    const double t = bench::median_seconds(
        [&] { kernels::adam_update_many(h, tensors.data(), static_cast<int64_t>(tensors.size())); }, reps);
    std::printf("%-36s %8.3f ms %8.1f GB/s  (%lld params)\n", "fused adam, MLP parameters", t * 1e3,
                28.0 * static_cast<double>(total) / t * 1e-9, static_cast<long long>(total));
  }
  // Softmax over a [64 x 1000] batch of logits.
  {
    auto x = bench::random_vector(64 * 1000, 9);
    std::vector<float> y(x.size());
    const double t =
        bench::median_seconds([&] { kernels::softmax_forward(64, 1000, x.data(), y.data()); }, reps,
                              bench::calibrate_inner([&] { kernels::softmax_forward(64, 1000, x.data(), y.data()); }));
    std::printf("%-36s %8.3f us\n", "softmax 64 x 1000", t * 1e6);
  }
  return 0;
}
