// Convolution forward: the dispatch (depthwise, direct tiles, implicit GEMM) and the packing of constant
// weights for whichever of them runs, and the older forms kept as explicit
// options and cross-checks: im2col + SGEMM per (image, group), and a direct loop. Their bias,
// activation and residual are applied per output plane while it is still in cache.
#include <cstring>

#include "tessera/kernels/cpu/activation.h"
#include "tessera/kernels/cpu/conv_direct.h"
#include "tessera/kernels/cpu/conv_internal.h"
#include "tessera/kernels/cpu/conv_pointwise.h"
#include "tessera/kernels/cpu/conv_winograd.h"

namespace tessera::kernels {

namespace {
using namespace conv_detail;

// Measured with bench_conv on the issue-3 CNN (batch 64, one thread, CPU time): conv1 (1 -> 32
// channels, 3x3 on 28x28) takes 2.0 ms by im2col + GEMM and 4.5 ms by the direct loop; conv2
// (32 -> 64 on 13x13) 5.0 ms against 83 ms. So the direct loop is never the automatic choice.
bool use_direct(ConvAlgorithm algorithm) {
  return algorithm == ConvAlgorithm::direct;
}

// y = post(act(y + bias) + residual) over the out_per_group planes of one (image, group).
void finish_planes(const Conv2dGeometry& g, float* y, const float* bias, const float* residual, const ConvEpilogue& e) {
  const int64_t plane = out_plane(g);
  for (int64_t co = 0; co < out_per_group(g); ++co) {
    float* yp = y + co * plane;
    if (bias != nullptr) {
      const float b = bias[co];
      for (int64_t i = 0; i < plane; ++i) yp[i] += b;
    }
    apply_activation(e.activation, yp, plane);
    if (residual != nullptr) {
      const float* rp = residual + co * plane;
      for (int64_t i = 0; i < plane; ++i) yp[i] += rp[i];
    }
    apply_activation(e.post_activation, yp, plane);
  }
}

// One (image, group) by direct accumulation: for each output row and tap, a strided axpy.
void direct_image_group(const Conv2dGeometry& g, const float* x, const float* w, float* y) {
  const int64_t plane = out_plane(g);
  for (int64_t co = 0; co < out_per_group(g); ++co) {
    float* yp = y + co * plane;
    std::memset(yp, 0, sizeof(float) * static_cast<size_t>(plane));
    for (int64_t ci = 0; ci < in_per_group(g); ++ci) {
      const float* xc = x + ci * in_plane(g);
      const float* wk = w + (co * in_per_group(g) + ci) * taps(g);
      for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
        int64_t oh_lo = 0, oh_hi = 0;
        valid_outputs(g.in_h, g.out_h, g.stride_h, kh * g.dilation_h - g.pad_h, oh_lo, oh_hi);
        for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
          const float wv = wk[kh * g.kernel_w + kw];
          const int64_t w_off = kw * g.dilation_w - g.pad_w;
          int64_t ow_lo = 0, ow_hi = 0;
          valid_outputs(g.in_w, g.out_w, g.stride_w, w_off, ow_lo, ow_hi);
          for (int64_t oh = oh_lo; oh < oh_hi; ++oh) {
            float* yr = yp + oh * g.out_w;
            const float* xr = xc + (oh * g.stride_h + kh * g.dilation_h - g.pad_h) * g.in_w + w_off;
            if (g.stride_w == 1) {
              for (int64_t ow = ow_lo; ow < ow_hi; ++ow) yr[ow] += wv * xr[ow];
            } else {
              for (int64_t ow = ow_lo; ow < ow_hi; ++ow) yr[ow] += wv * xr[ow * g.stride_w];
            }
          }
        }
      }
    }
  }
}

}  // namespace

// The Winograd tile an algorithm asks for (the automatic choice's for `automatic`).
static int winograd_tile_of(const Conv2dGeometry& g, ConvAlgorithm algorithm) {
  return algorithm == ConvAlgorithm::winograd ? 2 : algorithm == ConvAlgorithm::winograd_4x4 ? 4 : winograd_tile(g);
}

// Whether direct tiles could run g on some CPU: its workspace and packed weights are planned for them
// too, as AVX-512 may be switched on or off between planning and running.
bool direct_tiles_may_apply(const Conv2dGeometry& g) {
  return g.groups == 1;
}

int64_t conv2d_forward_workspace_bytes(const Conv2dGeometry& g, runtime::ThreadPool* pool, bool weights_packed) {
  (void)pool;  // the workspaces do not depend on the threads
  if (is_depthwise(g)) return 0;
  const int64_t direct = direct_tiles_may_apply(g) ? direct_tiles_workspace_bytes(g, weights_packed) : 0;
  const int64_t winograd = winograd_may_apply(g) ? winograd_workspace_bytes(g, weights_packed) : 0;
  const int64_t rows = pointwise_rows_may_apply(g) ? pointwise_rows_workspace_bytes(g, weights_packed) : 0;
  return std::max({direct, winograd, rows, implicit_gemm_workspace_bytes(g, weights_packed)});
}

bool conv2d_takes_packed_weights(const Conv2dGeometry& g) {
  return !is_depthwise(g);
}

int64_t conv2d_packed_weights_floats(const Conv2dGeometry& g) {
  const int64_t direct = direct_tiles_may_apply(g) ? direct_tiles_packed_floats(g) : 0;
  const int64_t winograd = winograd_may_apply(g) ? winograd_packed_floats(g) : 0;
  const int64_t rows = pointwise_rows_may_apply(g) ? pointwise_rows_packed_floats(g) : 0;
  return std::max({direct, winograd, rows, implicit_gemm_packed_floats(g)});
}

void conv2d_pack_weights(const Conv2dGeometry& g, const float* w, float* packed, runtime::ThreadPool* pool,
                         ConvAlgorithm algorithm) {
  runtime::ThreadPool& tp = pool != nullptr ? *pool : runtime::default_pool();
  const bool automatic = algorithm == ConvAlgorithm::automatic;
  const bool explicit_winograd = algorithm == ConvAlgorithm::winograd || algorithm == ConvAlgorithm::winograd_4x4;
  if ((automatic && winograd_apply(g)) || (explicit_winograd && winograd_can_run(g))) {
    winograd_pack_weights(g, w, packed, tp, winograd_tile_of(g, algorithm));
  } else if ((automatic && pointwise_rows_apply(g)) ||
             (algorithm == ConvAlgorithm::pointwise_rows && pointwise_rows_can_run(g))) {
    pointwise_rows_pack_weights(g, w, packed, tp);
  } else if (direct_tiles_apply(g) && algorithm != ConvAlgorithm::implicit_gemm) {
    direct_tiles_pack_weights(g, w, packed, tp);
  } else {
    implicit_gemm_pack_weights(g, w, packed, tp);
  }
}

namespace {

// The whole im2col matrix per (image, group), then SGEMM (ConvAlgorithm::im2col_gemm; the automatic
// choice before the implicit GEMM).
int64_t im2col_workspace_bytes(const Conv2dGeometry& g, runtime::ThreadPool& pool) {
  if (is_pointwise(g)) return 0;
  return split_of(g, pool).slices * padded_floats(col_rows(g) * out_plane(g)) * 4;
}

}  // namespace

void conv2d_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* bias, float* y,
                    void* workspace, const ConvEpilogue& epilogue, runtime::ThreadPool* pool, ConvAlgorithm algorithm,
                    const float* packed_weights) {
  check_conv2d_geometry(g, "conv2d_forward");
  runtime::ThreadPool& tp = pool != nullptr ? *pool : runtime::default_pool();
  const int64_t plane = out_plane(g);
  if (g.batch == 0 || plane == 0) return;
  if ((algorithm == ConvAlgorithm::winograd || algorithm == ConvAlgorithm::winograd_4x4) && !winograd_can_run(g))
    algorithm = ConvAlgorithm::automatic;
  if (algorithm == ConvAlgorithm::pointwise_rows && !pointwise_rows_can_run(g)) algorithm = ConvAlgorithm::automatic;
  if (algorithm == ConvAlgorithm::automatic && is_depthwise(g)) {
    conv2d_depthwise_forward(g, x, w, bias, y, epilogue, tp);
    return;
  }
  if ((algorithm == ConvAlgorithm::automatic && winograd_apply(g)) || algorithm == ConvAlgorithm::winograd ||
      algorithm == ConvAlgorithm::winograd_4x4) {
    winograd_forward(g, x, w, packed_weights, bias, y, workspace, epilogue, tp, winograd_tile_of(g, algorithm));
    return;
  }
  if ((algorithm == ConvAlgorithm::automatic && pointwise_rows_apply(g)) || algorithm == ConvAlgorithm::pointwise_rows) {
    pointwise_rows_forward(g, x, w, packed_weights, bias, y, workspace, epilogue, tp);
    return;
  }
  const bool direct_tiles = direct_tiles_apply(g);
  if ((algorithm == ConvAlgorithm::automatic || algorithm == ConvAlgorithm::direct_tiles) && direct_tiles) {
    direct_tiles_forward(g, x, w, packed_weights, bias, y, workspace, epilogue, tp);
    return;
  }
  if (algorithm == ConvAlgorithm::automatic || algorithm == ConvAlgorithm::implicit_gemm ||
      algorithm == ConvAlgorithm::direct_tiles) {
    implicit_gemm_forward(g, x, w, packed_weights, bias, y, workspace, epilogue, tp);
    return;
  }
  const bool direct = use_direct(algorithm);
  const bool pointwise = is_pointwise(g);
  const Split split = split_of(g, tp);
  const int64_t col_floats = padded_floats(col_rows(g) * plane);
  // A caller-provided workspace is sized for the automatic choice: these explicit requests get their own.
  const bool needs_col = !direct && !pointwise;
  Workspace ws(nullptr, needs_col ? im2col_workspace_bytes(g, tp) : 0);
  const int64_t tasks = g.batch * g.groups;
  const int64_t k = col_rows(g);

  auto run_task = [&](int64_t task, float* col, runtime::ThreadPool& gemm_pool) {
    const int64_t n = task / g.groups, gi = task % g.groups;
    const float* xg = x + (n * g.in_channels + gi * in_per_group(g)) * in_plane(g);
    const float* wg = w + gi * out_per_group(g) * k;
    const int64_t y_offset = (n * g.out_channels + gi * out_per_group(g)) * plane;
    float* yg = y + y_offset;
    if (direct) {
      direct_image_group(g, xg, wg, yg);
    } else {
      const float* b = xg;
      if (!pointwise) {
        im2col(g, xg, col);
        b = col;
      }
      sgemm(false, false, out_per_group(g), plane, k, 1.0f, wg, k, b, plane, 0.0f, yg, plane, {}, &gemm_pool);
    }
    finish_planes(g, yg, bias != nullptr ? bias + gi * out_per_group(g) : nullptr,
                  epilogue.residual != nullptr ? epilogue.residual + y_offset : nullptr, epilogue);
  };

  if (split.over_images) {
    tp.parallel_for(split.slices, 1, [&](int64_t s0, int64_t s1) {
      for (int64_t s = s0; s < s1; ++s) {
        float* col = needs_col ? ws.floats() + s * col_floats : nullptr;
        for (int64_t t = tasks * s / split.slices; t < tasks * (s + 1) / split.slices; ++t) run_task(t, col, tp);
      }
    });
  } else if (direct) {
    // Few images: split the output channels of each image over the threads instead.
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t n = t / g.groups, gi = t % g.groups;
      tp.parallel_for(out_per_group(g), 1, [&](int64_t c0, int64_t c1) {
        Conv2dGeometry part = g;
        part.out_channels = (c1 - c0) * g.groups;  // out_per_group(part) == c1 - c0
        const int64_t co0 = gi * out_per_group(g) + c0;
        const float* xg = x + (n * g.in_channels + gi * in_per_group(g)) * in_plane(g);
        float* yg = y + (n * g.out_channels + co0) * plane;
        direct_image_group(part, xg, w + co0 * k, yg);
        finish_planes(part, yg, bias != nullptr ? bias + co0 : nullptr,
                      epilogue.residual != nullptr ? epilogue.residual + (n * g.out_channels + co0) * plane : nullptr,
                      epilogue);
      });
    }
  } else {
    for (int64_t t = 0; t < tasks; ++t) run_task(t, ws.floats(), tp);
  }
}

}  // namespace tessera::kernels
