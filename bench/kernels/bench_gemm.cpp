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

// The MLP 784-1024-512-256-10 as the CPU backend runs it: batch-1 inference (four GEMMs with
// fused bias + relu), and the eleven GEMMs of a batch-64 training step (forward, dX, dW).
void mlp_workloads(int reps) {
  const int64_t widths[] = {784, 1024, 512, 256, 10};
  const int64_t batch = 64;
  std::vector<std::vector<float>> w, bias, act(5), grad(5), dw(4), act1(5);
  for (int l = 0; l < 4; ++l) {
    w.push_back(bench::random_vector(static_cast<size_t>(widths[l] * widths[l + 1]), 10 + l));
    bias.push_back(bench::random_vector(static_cast<size_t>(widths[l + 1]), 20 + l));
    dw[static_cast<size_t>(l)].resize(w.back().size());
  }
  for (int l = 0; l < 5; ++l) {
    act[static_cast<size_t>(l)] = bench::random_vector(static_cast<size_t>(batch * widths[l]), 40 + l);
    grad[static_cast<size_t>(l)] = bench::random_vector(static_cast<size_t>(batch * widths[l]), 50 + l);
    act1[static_cast<size_t>(l)] = bench::random_vector(static_cast<size_t>(widths[l]), 60 + l);
  }
  auto forward = [&](kernels::GemmProvider provider) {
    kernels::set_gemm_provider(provider);
    for (int l = 0; l < 4; ++l) {
      const size_t L = static_cast<size_t>(l);
      kernels::GemmEpilogue e;
      e.bias = bias[L].data();
      e.activation = l < 3 ? kernels::Activation::relu : kernels::Activation::none;
      kernels::sgemm(false, true, 1, widths[l + 1], widths[l], 1.0f, act1[L].data(), widths[l], w[L].data(), widths[l],
                     0.0f, act1[L + 1].data(), widths[l + 1], e);
    }
  };
  auto step = [&](kernels::GemmProvider provider) {
    kernels::set_gemm_provider(provider);
    for (int l = 0; l < 4; ++l) {
      const size_t L = static_cast<size_t>(l);
      kernels::GemmEpilogue e;
      e.bias = bias[L].data();
      e.activation = l < 3 ? kernels::Activation::relu : kernels::Activation::none;
      kernels::sgemm(false, true, batch, widths[l + 1], widths[l], 1.0f, act[L].data(), widths[l], w[L].data(),
                     widths[l], 0.0f, act[L + 1].data(), widths[l + 1], e);
    }
    for (int l = 3; l >= 0; --l) {
      const size_t L = static_cast<size_t>(l);
      kernels::sgemm(true, false, widths[l + 1], widths[l], batch, 1.0f, grad[L + 1].data(), widths[l + 1],
                     act[L].data(), widths[l], 0.0f, dw[L].data(), widths[l]);
      if (l > 0)
        kernels::sgemm(false, false, batch, widths[l], widths[l + 1], 1.0f, grad[L + 1].data(), widths[l + 1],
                       w[L].data(), widths[l], 0.0f, grad[L].data(), widths[l]);
    }
  };
  double flops = 0.0;
  for (int l = 0; l < 4; ++l) flops += (l > 0 ? 3 : 2) * 2.0 * static_cast<double>(batch * widths[l] * widths[l + 1]);
  using kernels::GemmProvider;
  if (!kernels::openblas_available()) return;
  auto f_ours = [&] { forward(GemmProvider::tessera); };
  auto f_theirs = [&] { forward(GemmProvider::openblas); };
  const auto [fo, ft] =
      bench::paired_seconds(f_ours, f_theirs, reps, bench::calibrate_inner(f_ours), bench::calibrate_inner(f_theirs));
  std::printf("%-38s %8.1f us %8.1f us %8.2f\n", "mlp batch-1 forward (4 GEMMs+bias+relu)", fo * 1e6, ft * 1e6,
              ft / fo);
  auto s_ours = [&] { step(GemmProvider::tessera); };
  auto s_theirs = [&] { step(GemmProvider::openblas); };
  const auto [so, st] =
      bench::paired_seconds(s_ours, s_theirs, reps, bench::calibrate_inner(s_ours), bench::calibrate_inner(s_theirs));
  std::printf("%-38s %8.0f us %8.0f us %8.2f   (%.1f vs %.1f GFLOP/s)\n", "mlp batch-64 step (11 GEMMs)", so * 1e6,
              st * 1e6, st / so, flops / so * 1e-9, flops / st * 1e-9);
  kernels::set_gemm_provider(GemmProvider::tessera);
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 7;
  const std::string filter = argc > 2 ? argv[2] : "";
  // nn::Linear keeps weight [out, in] and computes y = x W^T; its gradients are dX = dY W (no
  // transpose) and dW = dY^T X (A transposed, k = batch).
  const std::vector<Shape> shapes = {
      {"square 1024^3", false, false, 1024, 1024, 1024},
      {"square 512^3", false, false, 512, 512, 512},
      {"mlp64 fwd L1 64x1024 k784 (B^T)", false, true, 64, 1024, 784},
      {"mlp64 fwd L2 64x512 k1024 (B^T)", false, true, 64, 512, 1024},
      {"mlp64 fwd L3 64x256 k512 (B^T)", false, true, 64, 256, 512},
      {"mlp64 fwd L4 64x10 k256 (B^T)", false, true, 64, 10, 256},
      {"mlp64 dX L2 64x1024 k512", false, false, 64, 1024, 512},
      {"mlp64 dX L1 64x784 k1024", false, false, 64, 784, 1024},
      {"mlp64 dW L1 1024x784 k64 (A^T)", true, false, 1024, 784, 64},
      {"mlp64 dW L2 512x1024 k64 (A^T)", true, false, 512, 1024, 64},
      {"mlp256 fwd L1 256x1024 k784 (B^T)", false, true, 256, 1024, 784},
      {"mlp256 fwd L2 256x512 k1024 (B^T)", false, true, 256, 512, 1024},
      {"mlp256 dX L1 256x784 k1024", false, false, 256, 784, 1024},
      {"mlp256 dW L1 1024x784 k256 (A^T)", true, false, 1024, 784, 256},
      {"batch1 L1 1x1024 k784 (B^T)", false, true, 1, 1024, 784},
      {"batch1 L2 1x512 k1024 (B^T)", false, true, 1, 512, 1024},
      {"batch1 L1 1x1024 k784", false, false, 1, 1024, 784},
      {"conv2 fwd 64x121 k288 (per image)", false, false, 64, 121, 288},
      {"conv2 dW 64x288 k121 (B^T)", false, true, 64, 288, 121},
      {"conv2 dX 288x121 k64 (A^T)", true, false, 288, 121, 64},
  };

  std::printf("threads=%d openblas=%s\n", runtime::default_pool().size(), kernels::openblas_available() ? "yes" : "no");
  std::printf("%-38s %10s %10s %8s\n", "shape", "tessera", "openblas", "ratio");
  for (const Shape& s : shapes) {
    if (!filter.empty() && std::string(s.name).find(filter) == std::string::npos) continue;
    const int64_t lda = s.ta ? s.m : s.k, ldb = s.tb ? s.k : s.n;
    auto a = bench::random_vector(static_cast<size_t>(s.m * s.k), 1);
    auto b = bench::random_vector(static_cast<size_t>(s.k * s.n), 2);
    std::vector<float> c(static_cast<size_t>(s.m * s.n));
    const double flops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
    double gflops[2] = {0, 0};
    auto run_with = [&](kernels::GemmProvider provider) {
      kernels::set_gemm_provider(provider);
      kernels::sgemm(s.ta, s.tb, s.m, s.n, s.k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f, c.data(), s.n);
    };
    auto ours = [&] { run_with(kernels::GemmProvider::tessera); };
    auto theirs = [&] { run_with(kernels::GemmProvider::openblas); };
    if (kernels::openblas_available()) {
      const auto [t_ours, t_theirs] =
          bench::paired_seconds(ours, theirs, reps, bench::calibrate_inner(ours), bench::calibrate_inner(theirs));
      gflops[0] = flops / t_ours * 1e-9;
      gflops[1] = flops / t_theirs * 1e-9;
    } else {
      gflops[0] = flops / bench::median_seconds(ours, reps, bench::calibrate_inner(ours)) * 1e-9;
    }
    std::printf("%-38s %10.1f %10.1f %8.2f\n", s.name, gflops[0], gflops[1],
                gflops[1] > 0 ? gflops[0] / gflops[1] : 0.0);
    std::fflush(stdout);
  }
  mlp_workloads(reps);
  return 0;
}
