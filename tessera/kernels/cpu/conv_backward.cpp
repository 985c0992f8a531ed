// Convolution gradients through the im2col matrix:
//   input grad:  dcol = W_g^T · dY_g   (then col2im scatter-adds dcol into dx)
//   weight grad: dW_g += dY_g · col^T  (summed over images; each thread keeps a partial sum that is
//                reduced at the end, so no two threads write the same dW element)
#include <cstring>

#include "tessera/kernels/cpu/conv_internal.h"

namespace tessera::kernels {

namespace {
using namespace conv_detail;
}  // namespace

int64_t conv2d_input_grad_workspace_bytes(const Conv2dGeometry& g, runtime::ThreadPool* pool) {
  runtime::ThreadPool& tp = pool != nullptr ? *pool : runtime::default_pool();
  if (is_pointwise(g)) return 0;
  return split_of(g, tp).slices * padded_floats(col_rows(g) * out_plane(g)) * 4;
}

int64_t conv2d_weight_grad_workspace_bytes(const Conv2dGeometry& g, runtime::ThreadPool* pool) {
  runtime::ThreadPool& tp = pool != nullptr ? *pool : runtime::default_pool();
  const Split split = split_of(g, tp);
  const int64_t col = is_pointwise(g) ? 0 : padded_floats(col_rows(g) * out_plane(g));
  const int64_t partial = split.over_images ? padded_floats(g.out_channels * col_rows(g)) : 0;
  return split.slices * (col + partial) * 4;
}

void conv2d_input_grad(const Conv2dGeometry& g, const float* dy, const float* w, float* dx, void* workspace,
                       runtime::ThreadPool* pool) {
  check_conv2d_geometry(g, "conv2d_input_grad");
  runtime::ThreadPool& tp = pool != nullptr ? *pool : runtime::default_pool();
  if (g.batch == 0) return;
  const int64_t plane = out_plane(g), k = col_rows(g), cpg = in_per_group(g), opg = out_per_group(g);
  const bool pointwise = is_pointwise(g);
  const Split split = split_of(g, tp);
  const int64_t col_floats = padded_floats(k * plane);
  Workspace ws(workspace, conv2d_input_grad_workspace_bytes(g, &tp));
  const int64_t tasks = g.batch * g.groups;

  auto run_task = [&](int64_t task, float* col, runtime::ThreadPool& gemm_pool) {
    const int64_t n = task / g.groups, gi = task % g.groups;
    const float* dyg = dy + (n * g.out_channels + gi * opg) * plane;
    const float* wg = w + gi * opg * k;
    float* dxg = dx + (n * g.in_channels + gi * cpg) * in_plane(g);
    if (plane == 0 || opg == 0) {
      std::memset(dxg, 0, sizeof(float) * static_cast<size_t>(cpg * in_plane(g)));
      return;
    }
    if (pointwise) {  // dx_g = W_g^T · dY_g directly
      sgemm(true, false, cpg, plane, opg, 1.0f, wg, k, dyg, plane, 0.0f, dxg, plane, {}, &gemm_pool);
      return;
    }
    sgemm(true, false, k, plane, opg, 1.0f, wg, k, dyg, plane, 0.0f, col, plane, {}, &gemm_pool);
    std::memset(dxg, 0, sizeof(float) * static_cast<size_t>(cpg * in_plane(g)));
    col2im_add(g, col, dxg);
  };

  if (split.over_images) {
    tp.parallel_for(split.slices, 1, [&](int64_t s0, int64_t s1) {
      for (int64_t s = s0; s < s1; ++s) {
        float* col = pointwise ? nullptr : ws.floats() + s * col_floats;
        for (int64_t t = tasks * s / split.slices; t < tasks * (s + 1) / split.slices; ++t) run_task(t, col, tp);
      }
    });
  } else {
    for (int64_t t = 0; t < tasks; ++t) run_task(t, ws.floats(), tp);
  }
}

void conv2d_weight_grad(const Conv2dGeometry& g, const float* x, const float* dy, float* dw, void* workspace,
                        runtime::ThreadPool* pool) {
  check_conv2d_geometry(g, "conv2d_weight_grad");
  runtime::ThreadPool& tp = pool != nullptr ? *pool : runtime::default_pool();
  const int64_t plane = out_plane(g), k = col_rows(g), cpg = in_per_group(g), opg = out_per_group(g);
  const int64_t w_floats = g.out_channels * k;
  const bool pointwise = is_pointwise(g);
  const Split split = split_of(g, tp);
  const int64_t col_floats = pointwise ? 0 : padded_floats(k * plane);
  const int64_t partial_floats = split.over_images ? padded_floats(w_floats) : 0;
  Workspace ws(workspace, conv2d_weight_grad_workspace_bytes(g, &tp));
  const int64_t tasks = g.batch * g.groups;

  // Accumulates image n, group gi into dw_acc (a full [Cout, cpg, KH, KW] buffer).
  auto run_task = [&](int64_t task, float* col, float* dw_acc, runtime::ThreadPool& gemm_pool) {
    if (plane == 0) return;
    const int64_t n = task / g.groups, gi = task % g.groups;
    const float* xg = x + (n * g.in_channels + gi * cpg) * in_plane(g);
    const float* dyg = dy + (n * g.out_channels + gi * opg) * plane;
    const float* b = xg;
    if (!pointwise) {
      im2col(g, xg, col);
      b = col;
    }
    sgemm(false, true, opg, k, plane, 1.0f, dyg, plane, b, plane, 1.0f, dw_acc + gi * opg * k, k, {}, &gemm_pool);
  };

  if (split.over_images) {
    tp.parallel_for(split.slices, 1, [&](int64_t s0, int64_t s1) {
      for (int64_t s = s0; s < s1; ++s) {
        float* slice = ws.floats() + s * (col_floats + partial_floats);
        float* partial = slice + col_floats;
        std::memset(partial, 0, sizeof(float) * static_cast<size_t>(w_floats));
        for (int64_t t = tasks * s / split.slices; t < tasks * (s + 1) / split.slices; ++t)
          run_task(t, slice, partial, tp);
      }
    });
    // dw = sum of the per-thread partials, split over the weight elements.
    tp.parallel_for(w_floats, 4096, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        float s = 0.0f;
        for (int64_t t = 0; t < split.slices; ++t) s += ws.floats()[t * (col_floats + partial_floats) + col_floats + i];
        dw[i] = s;
      }
    });
  } else {
    std::memset(dw, 0, sizeof(float) * static_cast<size_t>(w_floats));
    for (int64_t t = 0; t < tasks; ++t) run_task(t, ws.floats(), dw, tp);
  }
}

}  // namespace tessera::kernels
