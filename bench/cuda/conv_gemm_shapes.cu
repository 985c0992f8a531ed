// Would explicit im2col + cuBLAS beat the implicit-GEMM SIMT kernels on the CNN's second convolution
// (n256, 32->64 channels, 13x13 -> 11x11, 3x3)? A standalone measurement for the GPU machine, built
// there with `nvcc -O3 -arch=sm_90 bench/cuda/conv_gemm_shapes.cu -lcublas -o /tmp/conv_gemm_shapes`
// (scripts/device/cuda_suite.sh stage `convshapes`): cuBLAS's f32 SGEMM (no TF32) on the three products
// in each operand orientation, and the im2col / col2im passes the explicit form adds, each timed over
// 50 runs after a warm-up. Compare with the profile's implicit-GEMM kernels (fwd 70, input grad 129,
// weight grad 81 us at stop 29).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>

#include "bench_check.h"

constexpr int kN = 256, kCin = 32, kCout = 64, kH = 13, kOH = 11, kK = 3;
constexpr int kTaps = kCin * kK * kK;  // 288
constexpr int kCols = kN * kOH * kOH;  // 30976

// cols[(ci, kh, kw), (n, oh, ow)] from x[n, ci, h, w] (no padding, stride 1).
__global__ void im2col(const float* x, float* cols) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= kCols) return;
  const int n = j / (kOH * kOH), p = j % (kOH * kOH), oh = p / kOH, ow = p % kOH;
  const float* src = x + (size_t)n * kCin * kH * kH + oh * kH + ow;
  for (int ci = 0; ci < kCin; ++ci)
    for (int kh = 0; kh < kK; ++kh)
      for (int kw = 0; kw < kK; ++kw)
        cols[(size_t)((ci * kK + kh) * kK + kw) * kCols + j] = src[(size_t)ci * kH * kH + kh * kH + kw];
}

// dx[n, ci, h, w] = sum of the dcols entries that read it (a gather: no atomics, fixed order).
__global__ void col2im(const float* dcols, float* dx) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= kN * kCin * kH * kH) return;
  const int w = i % kH, h = (i / kH) % kH, ci = (i / (kH * kH)) % kCin, n = i / (kH * kH * kCin);
  float s = 0.f;
  for (int kh = 0; kh < kK; ++kh) {
    const int oh = h - kh;
    if (oh < 0 || oh >= kOH) continue;
    for (int kw = 0; kw < kK; ++kw) {
      const int ow = w - kw;
      if (ow < 0 || ow >= kOH) continue;
      s += dcols[(size_t)((ci * kK + kh) * kK + kw) * kCols + n * kOH * kOH + oh * kOH + ow];
    }
  }
  dx[i] = s;
}

int main() {
  cublasHandle_t h;
  CHECK_BLAS(cublasCreate(&h));
  CHECK_BLAS(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH));  // plain f32, as the f32 CNN step needs
  float *x, *cols, *w, *y, *dx;
  CHECK(cudaMalloc(&x, sizeof(float) * kN * kCin * kH * kH));
  CHECK(cudaMalloc(&cols, sizeof(float) * kTaps * kCols));
  CHECK(cudaMalloc(&w, sizeof(float) * kCout * kTaps));
  CHECK(cudaMalloc(&y, sizeof(float) * kCout * kCols));
  CHECK(cudaMalloc(&dx, sizeof(float) * kN * kCin * kH * kH));
  CHECK(cudaMemset(x, 0, sizeof(float) * kN * kCin * kH * kH));
  CHECK(cudaMemset(w, 0, sizeof(float) * kCout * kTaps));
  CHECK(cudaMemset(y, 0, sizeof(float) * kCout * kCols));
  const float one = 1.f, zero = 0.f;
  // Row-major C[m, n] = op(A) op(B) is column-major C^T = op(B)^T op(A)^T; each product is timed with A
  // and B stored either way round (lda / ldb follow).
  auto gemm = [&](const char* what, int m, int n, int k, const float* a, const float* b, float* c) {
    const double flops = 2.0 * m * n * k;
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        const cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
        const int lda = ta ? m : k, ldb = tb ? k : n;
        const float us = time_us([&] { CHECK_BLAS(cublasSgemm(h, opb, opa, n, m, k, &one, b, ldb, a, lda, &zero, c, n)); });
        std::printf("%-34s %5d x %6d x %6d  A%s B%s  %8.2f us  %6.2f TFLOP/s\n", what, m, n, k, ta ? "^T" : "  ",
                    tb ? "^T" : "  ", us, flops / us * 1e-6);
      }
    }
  };
  gemm("forward   Y = W cols", kCout, kCols, kTaps, w, cols, y);
  gemm("input grad dcols = W^T dY", kTaps, kCols, kCout, w, y, cols);
  gemm("weight grad dW = dY cols^T", kCout, kTaps, kCols, y, cols, w);
  const int threads = 256;
  std::printf("%-34s %8.2f us\n", "im2col (35.7 MB written)",
              time_us([&] { im2col<<<(kCols + threads - 1) / threads, threads>>>(x, cols); }));
  const int elems = kN * kCin * kH * kH;
  std::printf("%-34s %8.2f us\n", "col2im (35.7 MB read)",
              time_us([&] { col2im<<<(elems + threads - 1) / threads, threads>>>(cols, dx); }));
  CHECK(cudaDeviceSynchronize());
  return 0;
}
