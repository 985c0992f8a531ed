// Would splitting K by hand beat cuBLASLt's own choice on the batch-4096 MLP's weight gradients (TF32,
// few output tiles, K = 4096)? A standalone measurement for the GPU machine, built there with
// `nvcc -O3 -arch=sm_90 bench/cuda/splitk_shapes.cu -lcublasLt -o /tmp/splitk_shapes` (scripts/device/
// cuda_suite.sh stage `splitk`): for each product, cuBLASLt's best of its heuristic's candidates as one
// product, and as a strided batch of s products over K chunks into partials followed by a kernel adding
// them in order (deterministic), s = 2, 4, 8; then the same products with K-major operands. Row-major D [m, n] = A^T B with A stored [k, m] and
// B [k, n], as the weight gradients are. Measured 2026-12-04: 128-138 TFLOP/s split or not (1024x784x4096:
// 51 us), 265 TFLOP/s (25 us) with both operands K-major; the transposes that would make them so cost
// about what that saves except on the largest product.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "bench_lt.h"

__global__ void add_parts(const float* parts, float* d, long long count, int splits) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count; i += (long long)gridDim.x * blockDim.x) {
    float s = parts[i];
    for (int p = 1; p < splits; ++p) s += parts[p * count + i];
    d[i] = s;
  }
}

cublasLtMatrixLayout_t layout(long long rows, long long cols, long long ld, int batch, long long stride) {
  cublasLtMatrixLayout_t l;
  CHECK_BLAS(cublasLtMatrixLayoutCreate(&l, CUDA_R_32F, rows, cols, ld));
  if (batch > 1) {
    CHECK_BLAS(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)));
    CHECK_BLAS(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
  }
  return l;
}

// The fastest of cuBLASLt's heuristic candidates (at most 16, split-K only with a separate reduction, as
// the backend allows) for D^T = op_a(A') op_b(B') over the given layouts, in microseconds.
float best_product_us(const Lt& lt, cublasOperation_t op_a, cublasOperation_t op_b, cublasLtMatrixLayout_t la,
                      cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t ld, const float* a, const float* b, float* d) {
  cublasLtMatmulDesc_t op;
  CHECK_BLAS(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F));
  CHECK_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a)));
  CHECK_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b)));
  const uint32_t reductions = CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE |
                              CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE;
  const float best = fastest_candidate_us(lt, op, la, lb, ld, a, b, d, reductions);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(op);
  return best;
}

int main() {
  const Lt lt;
  const long long kMax = 1024 * 4096;
  float *a, *b, *d, *parts;
  CHECK(cudaMalloc(&a, sizeof(float) * kMax));
  CHECK(cudaMalloc(&b, sizeof(float) * kMax));
  CHECK(cudaMalloc(&d, sizeof(float) * 1024 * 1024));
  CHECK(cudaMalloc(&parts, sizeof(float) * 8 * 1024 * 1024));
  CHECK(cudaMemset(a, 0, sizeof(float) * kMax));
  CHECK(cudaMemset(b, 0, sizeof(float) * kMax));
  struct Shape {
    int m, n, k;
  };
  for (const Shape s : {Shape{1024, 784, 4096}, Shape{512, 1024, 4096}, Shape{256, 512, 4096}, Shape{784, 1024, 4096}}) {
    for (int splits : {1, 2, 4, 8}) {
      const int chunk = s.k / splits;
      // Column-major D^T (n x m) = B (stored [k, n]: column-major n x k, op N) x A (stored [k, m]:
      // column-major m x k, op T); chunk c of K starts c * chunk rows into each stored operand.
      const float product = best_product_us(
          lt, CUBLAS_OP_N, CUBLAS_OP_T, layout(s.n, chunk, s.n, splits, (long long)chunk * s.n),
          layout(s.m, chunk, s.m, splits, (long long)chunk * s.m), layout(s.n, s.m, s.n, splits, (long long)s.m * s.n),
          b, a, splits == 1 ? d : parts);
      const long long count = (long long)s.m * s.n;
      const float add = splits == 1 ? 0.f : time_us([&] { add_parts<<<132 * 8, 256>>>(parts, d, count, splits); });
      std::printf("%5d x %5d x %5d A^T tf32  splits %d: product %7.2f us + adding %6.2f us = %7.2f us  %6.1f TFLOP/s\n",
                  s.m, s.n, s.k, splits, product, add, product + add, 2.0 * s.m * s.n * s.k / (product + add) * 1e-6);
    }
  }
  // The same products with both operands K-major (A stored [m, k], B stored [n, k]): Hopper's TF32
  // tensor-core instructions read only K-major operands, so the stored layout may be what limits them.
  for (const Shape s : {Shape{1024, 784, 4096}, Shape{512, 1024, 4096}, Shape{256, 512, 4096}}) {
    // Column-major D^T (n x m) = B (stored [n, k]: column-major k x n, op T) x A (stored [m, k]: k x m, op N).
    const float product = best_product_us(lt, CUBLAS_OP_T, CUBLAS_OP_N, layout(s.k, s.n, s.k, 1, 0),
                                          layout(s.k, s.m, s.k, 1, 0), layout(s.n, s.m, s.n, 1, 0), b, a, d);
    std::printf("%5d x %5d x %5d K-major tf32: product %7.2f us  %6.1f TFLOP/s\n", s.m, s.n, s.k, product,
                2.0 * s.m * s.n * s.k / product * 1e-6);
  }
  CHECK(cudaDeviceSynchronize());
  return 0;
}
