#pragma once
// Shared by the quantized-matmul kernel tests: random data, the AVX2 switch, and the exact product the
// kernels approximate.
#include <random>
#include <vector>

#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/kernels/quant/quant_matmul.h"
#include "tessera/quant/quantize.h"

namespace tessera::test {

using quant::GgmlType;
namespace qk = tessera::kernels::quant;

// n normal values of standard deviation sigma, seeded.
inline std::vector<float> gaussian(size_t n, uint64_t seed, float sigma = 1.0f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Restores the AVX2 switch after a test that turns it off.
struct Avx2Switch {
  explicit Avx2Switch(bool on) : was_(kernels::use_avx2()) { kernels::set_avx2_enabled(on); }
  ~Avx2Switch() { kernels::set_avx2_enabled(was_); }
  bool was_;
};

// The same for the AVX-512 VNNI kernels (off: the AVX2 ones run where the CPU has both).
struct VnniSwitch {
  explicit VnniSwitch(bool on) : was_(kernels::use_avx512_vnni()) { kernels::set_avx512_vnni_enabled(on); }
  ~VnniSwitch() { kernels::set_avx512_vnni_enabled(was_); }
  bool was_;
};

// The paths a check runs on: AVX2 on or off and, with it on, the AVX-512 VNNI kernels on or off. The
// VNNI switch is set first (members are built in order): use_avx512_vnni() reads false while AVX2 is
// off, so a VNNI switch made after the AVX2 one would restore VNNI as off.
struct KernelPaths {
  KernelPaths(bool avx2, bool vnni) : vnni_(vnni), avx2_(avx2) {}
  VnniSwitch vnni_;
  Avx2Switch avx2_;
};

// y = dequant(quant_act(x)) · dequant(W)^T in double: what the kernel computes up to float rounding.
inline std::vector<double> expected(GgmlType type, const std::vector<uint8_t>& w, const std::vector<float>& x,
                                    int64_t m, int64_t n, int64_t k) {
  const GgmlType act = qk::activation_type(type);
  const std::vector<float> wd = quant::dequantize(type, w.data(), w.size(), n, k);
  std::vector<float> xd = x;
  if (act != GgmlType::f32) {
    std::vector<uint8_t> xq(static_cast<size_t>(m * quant::row_bytes(act, k)));
    for (int64_t i = 0; i < m; ++i)
      qk::quantize_activation_row(act, x.data() + i * k, xq.data() + i * quant::row_bytes(act, k), k);
    xd = quant::dequantize(act, xq.data(), xq.size(), m, k);
  }
  std::vector<double> y(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += static_cast<double>(xd[i * k + p]) * wd[j * k + p];
      y[i * n + j] = s;
    }
  return y;
}

}  // namespace tessera::test
