// SGEMM throughput, Tessera's packed kernel vs OpenBLAS, on the square benchmark shape and the
// shapes of the MLP 784-1024-512-256-10 (forward, and the transposed GEMMs of its backward pass).
// Usage: bench_gemm [reps] [filter]   (prints median GFLOP/s and the ratio tessera / openblas)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/kernels/bench_util.h"
#include "tessera/kernels/cpu/gemm.h"

using namespace tessera;

struct Shape {
  const char* name;
  bool ta, tb;
  int64_t m, n, k;
};

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 7;
  const std::string filter = argc > 2 ? argv[2] : "";
  const std::vector<Shape> shapes = {
      {"square 1024^3", false, false, 1024, 1024, 1024},
      {"square 512^3", false, false, 512, 512, 512},
      {"mlp64 fwd L1 64x784x1024", false, false, 64, 1024, 784},
      {"mlp64 fwd L2 64x1024x512", false, false, 64, 512, 1024},
      {"mlp64 fwd L3 64x512x256", false, false, 64, 256, 512},
      {"mlp64 fwd L4 64x256x10", false, false, 64, 10, 256},
      {"mlp64 dX L2 64x1024<-512 (B^T)", false, true, 64, 1024, 512},
      {"mlp64 dX L1 64x784<-1024 (B^T)", false, true, 64, 784, 1024},
      {"mlp64 dW L1 784x1024 k=64 (A^T)", true, false, 784, 1024, 64},
      {"mlp64 dW L2 1024x512 k=64 (A^T)", true, false, 1024, 512, 64},
      {"mlp256 fwd L1 256x784x1024", false, false, 256, 1024, 784},
      {"mlp256 fwd L2 256x1024x512", false, false, 256, 512, 1024},
      {"mlp256 dX L1 256x784<-1024 (B^T)", false, true, 256, 784, 1024},
      {"mlp256 dW L1 784x1024 k=256 (A^T)", true, false, 784, 1024, 256},
      {"batch1 L1 1x784x1024", false, false, 1, 1024, 784},
      {"batch1 L2 1x1024x512", false, false, 1, 512, 1024},
      {"batch1 L1 W^T 1x784x1024", false, true, 1, 1024, 784},
      {"conv1 im2col 64*676 x 32 x 9", false, false, 43264, 32, 9},
      {"conv2 32->64 169x64x288 (per image)", false, false, 64, 121, 288},
  };
  std::printf("threads=%d openblas=%s\n", runtime::default_pool().size(),
              kernels::openblas_available() ? "yes" : "no");
  std::printf("%-38s %10s %10s %8s\n", "shape", "tessera", "openblas", "ratio");
  for (const Shape& s : shapes) {
    if (!filter.empty() && std::string(s.name).find(filter) == std::string::npos) continue;
    const int64_t lda = s.ta ? s.m : s.k, ldb = s.tb ? s.k : s.n;
    auto a = bench::random_vector(static_cast<size_t>(s.m * s.k), 1);
    auto b = bench::random_vector(static_cast<size_t>(s.k * s.n), 2);
    std::vector<float> c(static_cast<size_t>(s.m * s.n));
    const double flops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
    double gflops[2] = {0, 0};
    for (int provider = 0; provider < 2; ++provider) {
      if (provider == 1 && !kernels::openblas_available()) continue;
      kernels::set_gemm_provider(provider == 0 ? kernels::GemmProvider::tessera : kernels::GemmProvider::openblas);
      auto run = [&] {
        kernels::sgemm(s.ta, s.tb, s.m, s.n, s.k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f, c.data(), s.n);
      };
      const int inner = bench::calibrate_inner(run);
      gflops[provider] = flops / bench::median_seconds(run, reps, inner) * 1e-9;
    }
    std::printf("%-38s %10.1f %10.1f %8.2f\n", s.name, gflops[0], gflops[1],
                gflops[1] > 0 ? gflops[0] / gflops[1] : 0.0);
    std::fflush(stdout);
  }
  return 0;
}
