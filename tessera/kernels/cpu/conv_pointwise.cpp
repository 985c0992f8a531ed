// Pointwise convolutions by pixel vectors (conv_pointwise.h): which ones run there, and the weights
// packed in blocks of 8 output channels (portable: it runs once, when an executable is built).
#include "tessera/kernels/cpu/conv_pointwise.h"

#include <cstring>

#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/kernels/cpu/x86_kernels.h"

namespace tessera::kernels::conv_detail {

namespace {

constexpr int64_t kHeaderFloats = 16;
constexpr int32_t kMagic = 0x52564e43;  // "CNVR"

struct Header {
  int32_t magic, out_channels, in_channels;
  bool operator==(const Header&) const = default;
};

int64_t row_blocks(const Conv2dGeometry& g) {
  return (g.out_channels + kPointwiseRows - 1) / kPointwiseRows;
}

}  // namespace

bool pointwise_rows_may_apply(const Conv2dGeometry& g) {
  return g.groups == 1 && is_pointwise(g);
}

bool pointwise_rows_can_run(const Conv2dGeometry& g) {
  return TESSERA_X86_KERNELS && use_avx512() && pointwise_rows_may_apply(g);
}

bool pointwise_rows_apply(const Conv2dGeometry& g) {
  // Measured with bench_conv --pointwise (one thread) on MobileNetV2's layers: at batch 1 on planes of
  // 28x28 and up (input and output together a few MiB) 1.05-1.3x faster than the implicit GEMM and
  // direct tiles, and at batch 16 the expansions 1.1-1.2x; on 14x14 and 7x7 planes (4 and 1 pixels
  // past the last 48) direct tiles win, and so do they or the GEMM on the reductions of batch 16.
  const int64_t plane = g.out_h * g.out_w;
  const int64_t bytes = 4 * g.batch * plane * (g.in_channels + g.out_channels);
  return pointwise_rows_can_run(g) && plane >= 784 &&
         (bytes <= (int64_t{8} << 20) || g.out_channels > g.in_channels);
}

int64_t pointwise_rows_packed_floats(const Conv2dGeometry& g) {
  return kHeaderFloats + row_blocks(g) * kPointwiseRows * g.in_channels;
}

void pointwise_rows_pack_weights(const Conv2dGeometry& g, const float* w, float* dst, runtime::ThreadPool& pool) {
  const Header h{kMagic, static_cast<int32_t>(g.out_channels), static_cast<int32_t>(g.in_channels)};
  std::memset(dst, 0, sizeof(float) * kHeaderFloats);
  std::memcpy(dst, &h, sizeof(h));
  float* out = dst + kHeaderFloats;
  const int64_t cin = g.in_channels;
  pool.parallel_for(row_blocks(g), 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      for (int64_t ci = 0; ci < cin; ++ci) {
        for (int64_t r = 0; r < kPointwiseRows; ++r) {
          const int64_t co = b * kPointwiseRows + r;
          out[(b * cin + ci) * kPointwiseRows + r] = co < g.out_channels ? w[co * cin + ci] : 0.0f;
        }
      }
    }
  });
}

bool pointwise_rows_packed_for(const Conv2dGeometry& g, const float* packed) {
  Header h;
  std::memcpy(&h, packed, sizeof(h));
  return h == Header{kMagic, static_cast<int32_t>(g.out_channels), static_cast<int32_t>(g.in_channels)};
}

int64_t pointwise_rows_workspace_bytes(const Conv2dGeometry& g, bool weights_packed) {
  return weights_packed ? 0 : 4 * padded_floats(pointwise_rows_packed_floats(g));
}

}  // namespace tessera::kernels::conv_detail
