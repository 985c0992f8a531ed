// The float-weight kernels of quantized_matmul: the f16 GEMM (many activation rows: weights widened into
// panels, AVX-512 12x32 or AVX2 6x16 register tiles) and the row dot products (decode and few rows,
// AVX-512 or AVX2), each against the exact product in double, for shapes that are not multiples of the
// tiles (n, k odd; m = 1, 3, 8, 17, 128), on every path this CPU has: AVX-512 (unless TESSERA_NO_AVX512
// is set), AVX2 (set_avx512_enabled(false), as TESSERA_NO_AVX512=1 does) and portable.
#include <cmath>
#include <string>

#include "tessera/core/half.h"
#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/kernels/quant/quant_matmul.h"
#include "tessera/quant/quantize.h"
#include "quant_kernel_test_util.h"
#include "test_util.h"

using namespace tessera;
using tessera::quant::GgmlType;
using tessera::test::Avx2Switch;
using tessera::test::gaussian;
namespace qk = tessera::kernels::quant;

namespace {

enum class Path { avx512, avx2, portable };

const char* path_name(Path p) {
  return p == Path::avx512 ? "avx512" : p == Path::avx2 ? "avx2" : "portable";
}

// Selects one kernel path for the scope (and restores the switches). The AVX-512 switch is read before
// the AVX2 one changes: use_avx512() is false while AVX2 is off.
struct PathSwitch {
  explicit PathSwitch(Path p) : avx512_was_(kernels::use_avx512()), avx2_(p != Path::portable) {
    kernels::set_avx512_enabled(p == Path::avx512);
  }
  ~PathSwitch() { kernels::set_avx512_enabled(avx512_was_); }
  bool avx512_was_;
  Avx2Switch avx2_;
};

// The paths this CPU can run: AVX-512 only where the CPU has it and TESSERA_NO_AVX512 is unset.
std::vector<Path> paths() {
  std::vector<Path> p;
  if (kernels::use_avx512()) p.push_back(Path::avx512);
  if (kernels::use_avx2()) p.push_back(Path::avx2);
  p.push_back(Path::portable);
  return p;
}

// y against sum_p x[i, p] * w[j, p] in double, within a few float roundings of sum_p |x w|.
void check(GgmlType type, int64_t m, int64_t n, int64_t k, Path path) {
  SCOPED_TRACE(std::string(quant::type_name(type)) + " " + path_name(path) + " m=" + std::to_string(m) +
               " n=" + std::to_string(n) + " k=" + std::to_string(k));
  const std::vector<float> wf = gaussian(static_cast<size_t>(n * k), 7 + n, 0.05f);
  const std::vector<float> x = gaussian(static_cast<size_t>(m * k), 11 + m, 1.0f);
  const std::vector<uint8_t> w = quant::quantize(type, wf.data(), n, k);
  const std::vector<float> wd = quant::dequantize(type, w.data(), w.size(), n, k);
  std::vector<float> y(static_cast<size_t>(m * n), -1.0f);
  {
    PathSwitch sw(path);
    qk::quantized_matmul(type, w.data(), n, k, x.data(), m, y.data());
  }
  int bad = 0;
  for (int64_t i = 0; i < m && bad < 5; ++i) {
    for (int64_t j = 0; j < n && bad < 5; ++j) {
      double s = 0, mag = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double t = static_cast<double>(x[i * k + p]) * wd[j * k + p];
        s += t;
        mag += std::fabs(t);
      }
      const double got = y[i * n + j];
      if (std::fabs(got - s) > 1e-5 * mag + 1e-30) {
        ++bad;
        ADD_FAILURE() << "y[" << i << ", " << j << "] = " << got << ", expected " << s << " (sum |x w| " << mag << ")";
      }
    }
  }
}

}  // namespace

// The GEMM tiles (12 or 6 rows, 32 or 16 columns, k blocks of up to 256) with ragged edges everywhere:
// 17 rows leave a five-row tile, 100 columns a four-column strip, k = 600 three 200-deep blocks and
// k = 519 two blocks with a tail that is no multiple of the 16-wide panel packing.
TEST(QuantF16, GemmMatchesTheExactProduct) {
  for (const Path path : paths()) {
    for (const int64_t m : {8, 17, 128}) {
      check(GgmlType::f16, m, 100, 519, path);
      check(GgmlType::f16, m, 37, 600, path);
    }
    check(GgmlType::f16, 24, 64, 2100, path);
    check(GgmlType::f16, 400, 37, 300, path);  // two passes of activation rows (at most 384 each)
  }
}

// Decode and few rows: one activation row against four weight stripes (n = 1037 leaves one row after
// them), and one to three rows row by row; k = 519 ends in a partial vector.
TEST(QuantF16, RowDotsMatchTheExactProduct) {
  for (const Path path : paths()) {
    for (const GgmlType type : {GgmlType::f16, GgmlType::bf16, GgmlType::f32}) {
      check(type, 1, 1037, 519, path);
      check(type, 1, 37, 256, path);
      check(type, 3, 100, 519, path);
    }
  }
}

// The AVX-512 and AVX2 forms differ only in the order of the float sums, so they agree to rounding.
TEST(QuantF16, Avx512AgreesWithAvx2) {
  if (!kernels::use_avx512()) GTEST_SKIP() << "this CPU has no AVX-512F (or TESSERA_NO_AVX512 is set)";
  const int64_t n = 300, k = 777;
  const std::vector<float> wf = gaussian(static_cast<size_t>(n * k), 5, 0.05f);
  const std::vector<uint8_t> w = quant::quantize(GgmlType::f16, wf.data(), n, k);
  for (const int64_t m : {1, 3, 8, 17, 128}) {
    SCOPED_TRACE("m=" + std::to_string(m));
    const std::vector<float> x = gaussian(static_cast<size_t>(m * k), 9, 1.0f);
    std::vector<float> wide(static_cast<size_t>(m * n)), narrow(wide.size());
    qk::quantized_matmul(GgmlType::f16, w.data(), n, k, x.data(), m, wide.data());
    {
      PathSwitch sw(Path::avx2);
      qk::quantized_matmul(GgmlType::f16, w.data(), n, k, x.data(), m, narrow.data());
    }
    for (size_t i = 0; i < wide.size(); ++i) ASSERT_NEAR(wide[i], narrow[i], 1e-4f * (std::fabs(narrow[i]) + 1.0f));
  }
}
