// Can cuBLASLt fold the ReLU's backward pass and the bias gradient into the batch-4096 MLP's products
// (TF32, f32 data)? A standalone check for the GPU machine, built there with `nvcc -O3 -arch=sm_90
// bench/cuda/epilogue_shapes.cu -lcublasLt -o /tmp/epilogue_shapes` (scripts/device/cuda_suite.sh stage
// `epilogues`). The forward product of layer 1 (h = relu(x W1^T + b1), 4096 x 1024 x 784) with
// RELU_AUX_BIAS (the ReLU's mask kept as a bitmask), and the backward product into it (dh = dz2 W2,
// 4096 x 1024 x 512) with DRELU_BGRAD (the mask applied and the bias gradient summed in the same
// launch), each timed against the plain product; "no algorithm" when the heuristic offers none.
// Measured 2026-12-04: forward 24.3 -> 52.6 us with the mask kept, backward 19.5 -> 41.3 us with
// DRELU_BGRAD (38.8 with DRELU alone): slower than the separate mask and sum launches they would replace.
// Column-major throughout: a row-major [r, c] matrix is a column-major c x r one.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdio>

#include "bench_lt.h"

namespace {

cublasLtMatrixLayout_t layout(int rows, int cols, int ld) {
  cublasLtMatrixLayout_t l;
  CHECK_BLAS(cublasLtMatrixLayoutCreate(&l, CUDA_R_32F, rows, cols, ld));
  return l;
}

// D (m x n) = op_a(A) op_b(B) with the epilogue; the fastest candidate in microseconds, or -1.
float best_us(const Lt& lt, cublasLtEpilogue_t epilogue, cublasOperation_t op_a, cublasOperation_t op_b, int m, int n,
              int k, const float* a, int lda, const float* b, int ldb, float* d, const float* bias_or_grad, void* aux) {
  cublasLtMatmulDesc_t op;
  CHECK_BLAS(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F));
  CHECK_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a)));
  CHECK_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b)));
  CHECK_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
  if (bias_or_grad != nullptr) {
    CHECK_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_or_grad, sizeof(bias_or_grad)));
  }
  if (aux != nullptr) {
    const int64_t aux_ld = m;  // one bit per element of D, rows padded to whole bytes (m % 128 == 0 here)
    CHECK_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof(aux)));
    CHECK_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld, sizeof(aux_ld)));
  }
  cublasLtMatrixLayout_t la = op_a == CUBLAS_OP_N ? layout(m, k, lda) : layout(k, m, lda);
  cublasLtMatrixLayout_t lb = op_b == CUBLAS_OP_N ? layout(k, n, ldb) : layout(n, k, ldb);
  cublasLtMatrixLayout_t ld = layout(m, n, m);
  const float best = fastest_candidate_us(lt, op, la, lb, ld, a, b, d);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(op);
  return best;
}

void report(const char* what, float us) {
  if (us < 0) {
    std::printf("%-58s no algorithm\n", what);
  } else {
    std::printf("%-58s %8.2f us\n", what, us);
  }
}

}  // namespace

int main() {
  const Lt lt;
  const int batch = 4096, in = 784, hidden = 1024, next = 512;
  float *x, *w1, *b1, *hout, *w2, *dz2, *dh, *db1;
  void* mask;
  CHECK(cudaMalloc(&x, sizeof(float) * batch * in));
  CHECK(cudaMalloc(&w1, sizeof(float) * hidden * in));
  CHECK(cudaMalloc(&b1, sizeof(float) * hidden));
  CHECK(cudaMalloc(&hout, sizeof(float) * batch * hidden));
  CHECK(cudaMalloc(&w2, sizeof(float) * next * hidden));
  CHECK(cudaMalloc(&dz2, sizeof(float) * batch * next));
  CHECK(cudaMalloc(&dh, sizeof(float) * batch * hidden));
  CHECK(cudaMalloc(&db1, sizeof(float) * hidden));
  CHECK(cudaMalloc(&mask, batch * hidden / 8));
  // Forward: h^T (hidden x batch) = W1 (row-major [hidden, in]: op T) x x^T (row-major [batch, in]: op N).
  report("forward 4096x1024x784 bias+relu (as now)",
         best_us(lt, CUBLASLT_EPILOGUE_RELU_BIAS, CUBLAS_OP_T, CUBLAS_OP_N, hidden, batch, in, w1, in, x, in, hout, b1,
                 nullptr));
  report("forward 4096x1024x784 bias+relu keeping the mask (RELU_AUX_BIAS)",
         best_us(lt, CUBLASLT_EPILOGUE_RELU_AUX_BIAS, CUBLAS_OP_T, CUBLAS_OP_N, hidden, batch, in, w1, in, x, in, hout,
                 b1, mask));
  // Backward: dh^T (hidden x batch) = W2^T (row-major [next, hidden]: op N) x dz2^T (row-major [batch, next]: op N).
  report("backward 4096x1024x512 plain (as now, + mask and bias-grad launches)",
         best_us(lt, CUBLASLT_EPILOGUE_DEFAULT, CUBLAS_OP_N, CUBLAS_OP_N, hidden, batch, next, w2, hidden, dz2, next, dh,
                 nullptr, nullptr));
  report("backward 4096x1024x512 with the mask and bias gradient (DRELU_BGRAD)",
         best_us(lt, CUBLASLT_EPILOGUE_DRELU_BGRAD, CUBLAS_OP_N, CUBLAS_OP_N, hidden, batch, next, w2, hidden, dz2, next,
                 dh, db1, mask));
  report("backward 4096x1024x512 with the mask only (DRELU)",
         best_us(lt, CUBLASLT_EPILOGUE_DRELU, CUBLAS_OP_N, CUBLAS_OP_N, hidden, batch, next, w2, hidden, dz2, next, dh,
                 nullptr, mask));
  CHECK(cudaDeviceSynchronize());
  return 0;
}
