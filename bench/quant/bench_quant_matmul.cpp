// Quantized matmul on the CPU, against the machine's own limits measured in the same run:
//   decode  1xK · KxN (K, N in {2048, 4096, 8192}) for Q4_0, Q8_0, Q4_K: weight bytes streamed per
//           second, beside the STREAM triad bandwidth (target: >= 80%) and beside a pass that only
//           reads the same weight bytes, one stream per thread (stream_read_sum);
//   prefill 128xK · KxN: GFLOP/s, beside the f32 GEMM (tessera::kernels::sgemm) of the same shape.
// Decode rotates through enough copies of the weights (>= 256 MiB) that they come from DRAM, not the
// 32 MiB L3. Q4_0, Q8_0 and Q4_K run on the x8 layout (eight rows interleaved, re-laid once as at model
// load) unless --rows asks for GGUF's row layout. Usage: bench_quant_matmul [--quick] [--json] [--rows]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/kernels/bench_util.h"
#include "tessera/core/half.h"
#include "tessera/kernels/cpu/bandwidth.h"
#include "tessera/kernels/cpu/gemm.h"
#include "tessera/kernels/quant/interleave_x8.h"
#include "tessera/kernels/quant/quant_matmul.h"
#include "tessera/quant/quantize.h"
#include "tessera/runtime/thread_pool.h"

using namespace tessera;
using quant::GgmlType;

namespace {

// Random but well-formed weight bytes: random codes, and every f16 scale set to a small value (real
// quantization of 8192x8192 with the reference encoders would take minutes).
std::vector<uint8_t> random_weights(GgmlType type, int64_t n, int64_t k, uint64_t seed) {
  std::vector<uint8_t> w(static_cast<size_t>(n * quant::row_bytes(type, k)));
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < w.size(); i += 8) {
    const uint64_t r = rng();
    std::memcpy(w.data() + i, &r, std::min<size_t>(8, w.size() - i));
  }
  const uint16_t d = f32_to_f16_bits(0.01f);
  const int64_t block = quant::type_traits(type).type_size;
  for (size_t off = 0; off < w.size(); off += static_cast<size_t>(block)) {
    switch (type) {
      case GgmlType::q4_0:
      case GgmlType::q8_0:
        std::memcpy(&w[off], &d, 2);
        break;
      case GgmlType::q4_k:
        std::memcpy(&w[off], &d, 2);
        std::memcpy(&w[off + 2], &d, 2);
        break;
      case GgmlType::q6_k:
        std::memcpy(&w[off + 208], &d, 2);
        break;
      default:
        break;
    }
  }
  return w;
}

std::vector<float> random_floats(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// STREAM triad over 3 x 128 MiB (far beyond the 32 MiB L3), allocated once.
struct Triad {
  static constexpr int64_t kN = int64_t{32} << 20;
  std::vector<float> a = std::vector<float>(static_cast<size_t>(kN)), b = random_floats(static_cast<size_t>(kN), 1),
                     c = random_floats(static_cast<size_t>(kN), 2);
  void operator()() { kernels::stream_triad(kN, a.data(), b.data(), c.data(), 3.0f); }
  static double gbs(double seconds) { return 3.0 * 4.0 * static_cast<double>(kN) / seconds * 1e-9; }
};

// Q4_0, Q8_0 and Q4_K weights in the x8 layout (interleave_x8.h), re-laid once as a model load does, unless
// --rows asks for the GGUF row layout.
std::vector<uint8_t> in_layout(GgmlType type, std::vector<uint8_t> w, int64_t n, int64_t k, bool x8) {
  if (!x8 || !kernels::quant::can_interleave_x8(type, n)) return w;
  std::vector<uint8_t> out(w.size());
  kernels::quant::interleave_x8(type, w.data(), n, k, out.data());
  return out;
}

void matmul(GgmlType type, bool x8, const uint8_t* w, int64_t n, int64_t k, const float* x, int64_t m, float* y) {
  if (x8 && kernels::quant::can_interleave_x8(type, n)) {
    kernels::quant::quantized_matmul_x8(type, w, n, k, x, m, y);
  } else {
    kernels::quant::quantized_matmul(type, w, n, k, x, m, y);
  }
}

}  // namespace

struct DecodeResult {
  GgmlType type;
  int64_t k, n;
  double seconds, gbs, triad_gbs, read_gbs;  // triad and read: sampled alternately with this shape
};

int main(int argc, char** argv) {
  bool quick = false, json = false, x8 = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--json") == 0) json = true;
    if (std::strcmp(argv[i], "--rows") == 0) x8 = false;
  }
  const int reps = quick ? 5 : 9;
  // The machine is shared and its bandwidth drifts by a quarter within minutes, so every shape's
  // samples alternate with samples of the triad and of the read pass (bench::interleaved_seconds),
  // and each shape is compared with those measured alongside it. The best triad of the run is
  // reported too.
  Triad triad;
  const std::vector<int64_t> sizes = quick ? std::vector<int64_t>{4096} : std::vector<int64_t>{2048, 4096, 8192};
  std::vector<DecodeResult> decode;
  for (GgmlType type : {GgmlType::q4_0, GgmlType::q8_0, GgmlType::q4_k}) {
    for (int64_t k : sizes) {
      for (int64_t n : sizes) {
        const size_t bytes = static_cast<size_t>(n * quant::row_bytes(type, k));
        const size_t copies = std::clamp<size_t>((size_t{256} << 20) / bytes + 1, 1, 64);
        std::vector<std::vector<uint8_t>> w;
        for (size_t c = 0; c < copies; ++c) w.push_back(in_layout(type, random_weights(type, n, k, 10 + c), n, k, x8));
        const std::vector<float> x = random_floats(static_cast<size_t>(k), 3);
        std::vector<float> y(static_cast<size_t>(n));
        size_t next = 0;
        auto one_call = [&] {
          matmul(type, x8, w[next].data(), n, k, x.data(), 1, y.data());
          next = (next + 1) % copies;
        };
        size_t next_read = 0;
        uint64_t sink = 0;
        auto one_read = [&] {
          sink += kernels::stream_read_sum(static_cast<int64_t>(bytes / 8),
                                           reinterpret_cast<const uint64_t*>(w[next_read].data()));
          next_read = (next_read + 1) % copies;
        };
        // A kernel or read sample streams every copy once (at least 256 MiB), about as long as a
        // triad sample.
        const std::vector<double> t = bench::interleaved_seconds(
            reps, {{std::ref(triad), 1}, {one_call, static_cast<int>(copies)}, {one_read, static_cast<int>(copies)}});
        if (sink == 42) std::printf(" ");  // keeps the read passes from being optimised away
        decode.push_back({type, k, n, t[1], static_cast<double>(bytes) / t[1] * 1e-9, Triad::gbs(t[0]),
                          static_cast<double>(bytes) / t[2] * 1e-9});
      }
    }
  }
  double best_triad = 0;
  for (const DecodeResult& d : decode) best_triad = std::max(best_triad, d.triad_gbs);

  std::string js = "{\"threads\": " + std::to_string(runtime::default_pool().size()) + ", \"layout\": \"" +
                   (x8 ? "x8" : "rows") + "\"" + ", \"best_stream_triad_gbs\": " + std::to_string(best_triad) +
                   ", \"decode\": [";
  if (!json) {
    std::printf(
        "threads %d; Q4_0/Q8_0/Q4_K weights in the %s layout; STREAM triad measured alongside each shape (best of "
        "the run: %.1f GB/s)\n\n",
        runtime::default_pool().size(), x8 ? "x8" : "GGUF row", best_triad);
    std::printf(
        "decode: y[1,N] = x[1,K] . W[N,K]^T, weights from DRAM; \"read\" only reads the same bytes\n"
        "%-6s %6s %6s %10s %10s %11s %9s %10s %10s %8s\n",
        "type", "K", "N", "us/call", "GB/s", "triad GB/s", "% triad", "% best", "read GB/s", "% read");
  }
  for (size_t i = 0; i < decode.size(); ++i) {
    const DecodeResult& d = decode[i];
    if (json) {
      js += std::string(i == 0 ? "" : ", ") + "{\"type\": \"" + quant::type_name(d.type) +
            "\", \"k\": " + std::to_string(d.k) + ", \"n\": " + std::to_string(d.n) +
            ", \"gbs\": " + std::to_string(d.gbs) + ", \"triad_gbs\": " + std::to_string(d.triad_gbs) +
            ", \"fraction_of_triad\": " + std::to_string(d.gbs / d.triad_gbs) +
            ", \"fraction_of_best_triad\": " + std::to_string(d.gbs / best_triad) +
            ", \"read_gbs\": " + std::to_string(d.read_gbs) +
            ", \"fraction_of_read\": " + std::to_string(d.gbs / d.read_gbs) + "}";
    } else {
      std::printf("%-6s %6lld %6lld %10.1f %10.1f %11.1f %8.0f%% %9.0f%% %10.1f %7.0f%%\n", quant::type_name(d.type),
                  static_cast<long long>(d.k), static_cast<long long>(d.n), d.seconds * 1e6, d.gbs, d.triad_gbs,
                  100.0 * d.gbs / d.triad_gbs, 100.0 * d.gbs / best_triad, d.read_gbs, 100.0 * d.gbs / d.read_gbs);
    }
  }
  js += "], \"prefill\": [";
  if (!json) {
    std::printf("\nprefill: Y[128,N] = X[128,K] . W[N,K]^T\n%-6s %6s %6s %10s %10s %14s\n", "type", "K", "N", "ms/call",
                "GFLOP/s", "sgemm GFLOP/s");
  }
  bool first = true;
  const int64_t m = 128;
  for (int64_t kn : quick ? std::vector<int64_t>{2048} : std::vector<int64_t>{2048, 4096}) {
    const int64_t k = kn, n = kn;
    const std::vector<float> x = random_floats(static_cast<size_t>(m * k), 4);
    std::vector<float> y(static_cast<size_t>(m * n));
    const std::vector<float> wf = random_floats(static_cast<size_t>(n * k), 5);
    const double flops = 2.0 * static_cast<double>(m * n * k);
    auto sgemm = [&] { kernels::sgemm(false, true, m, n, k, 1.0f, x.data(), k, wf.data(), k, 0.0f, y.data(), n); };
    for (GgmlType type : {GgmlType::q4_0, GgmlType::q8_0, GgmlType::q4_k, GgmlType::q6_k}) {
      const std::vector<uint8_t> w = in_layout(type, random_weights(type, n, k, 6), n, k, x8);
      // The GEMM's samples alternate with the quantized product's, so each ratio comes from one stretch of time.
      const auto [t_sgemm, t] = bench::paired_seconds(
          sgemm, [&] { matmul(type, x8, w.data(), n, k, x.data(), m, y.data()); }, reps, 1, 1);
      if (json) {
        js += std::string(first ? "" : ", ") + "{\"type\": \"" + quant::type_name(type) +
              "\", \"k\": " + std::to_string(k) + ", \"n\": " + std::to_string(n) +
              ", \"m\": 128, \"gflops\": " + std::to_string(flops / t * 1e-9) +
              ", \"sgemm_gflops\": " + std::to_string(flops / t_sgemm * 1e-9) + "}";
      } else {
        std::printf("%-6s %6lld %6lld %10.2f %10.1f %14.1f\n", quant::type_name(type), static_cast<long long>(k),
                    static_cast<long long>(n), t * 1e3, flops / t * 1e-9, flops / t_sgemm * 1e-9);
      }
      first = false;
    }
  }
  if (json) std::printf("%s]}\n", js.c_str());
  return 0;
}
