#include "tessera/backends/cuda/gemm.h"

#include <fmt/format.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "tessera/backends/common/compile_profile.h"
#include "tessera/backends/cuda/cuda_check.h"
#include "tessera/backends/cuda/gemm_autotune.h"
#include "tessera/core/error.h"

namespace tessera::backends::cuda {

namespace {

constexpr int kGemmCandidates = 16;  // heuristic results timed per product (gemm_autotune.h)

uint32_t gemm_reduction_mask() {
  const char* env = std::getenv("TESSERA_CUDA_GEMM_REDUCTIONS");
  const std::string v = env != nullptr ? env : "separate";
  if (v == "all") return CUBLASLT_REDUCTION_SCHEME_MASK;
  if (v == "none") return CUBLASLT_REDUCTION_SCHEME_NONE;
  TESSERA_CHECK(v == "separate", "TESSERA_CUDA_GEMM_REDUCTIONS must be separate, none or all, not '{}'", v);
  return CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE |
         CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE;
}

cudaDataType_t data_type(DType dt) {
  switch (dt) {
    case DType::f32:
      return CUDA_R_32F;
    case DType::f16:
      return CUDA_R_16F;
    case DType::bf16:
      return CUDA_R_16BF;
    default:
      throw Error(fmt::format("cuda gemm: no cuBLASLt product for {} (f32, f16, bf16)", dtype_name(dt)));
  }
}

cublasLtMatrixLayout_t layout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                              int64_t batch_stride) {
  cublasLtMatrixLayout_t l = nullptr;
  check(cublasLtMatrixLayoutCreate(&l, type, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld),
        "cublasLtMatrixLayoutCreate");
  if (batch > 1) {
    const int32_t count = static_cast<int32_t>(batch);
    check(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
          "cublasLtMatrixLayoutSetAttribute(batch count)");
    check(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &batch_stride,
                                           sizeof(batch_stride)),
          "cublasLtMatrixLayoutSetAttribute(batch stride)");
  }
  return l;
}

cublasLtEpilogue_t epilogue_of(const GemmShape& s) {
  switch (s.activation) {
    case GemmActivation::none:
      return s.bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    case GemmActivation::relu:
      return s.bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case GemmActivation::gelu:
      return s.bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

}  // namespace

GemmPlan::GemmPlan(cublasLtHandle_t handle, const GemmShape& s, void* workspace, size_t workspace_bytes)
    : handle_(handle), shape_(s), workspace_(workspace), workspace_bytes_(workspace_bytes) {
  const cudaDataType_t type = data_type(s.dtype);
  const cudaDataType_t out_type = s.f32_output ? CUDA_R_32F : type;
  const cublasComputeType_t compute =
      s.dtype == DType::f32 && s.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  check(cublasLtMatmulDescCreate(&op_, compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
  // Column-major D^T (n x m) = op(B stored) * op(A stored).
  const cublasOperation_t op_first = s.b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_second = s.a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &op_first, sizeof(op_first)),
        "cublasLtMatmulDescSetAttribute(transa)");
  check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &op_second, sizeof(op_second)),
        "cublasLtMatmulDescSetAttribute(transb)");
  const cublasLtEpilogue_t epilogue = epilogue_of(s);
  check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)),
        "cublasLtMatmulDescSetAttribute(epilogue)");
  if (s.bias) {
    const cudaDataType_t bias_type = out_type;
    check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof(bias_type)),
          "cublasLtMatmulDescSetAttribute(bias type)");
  }
  // Stored operands as column-major matrices: a row-major [r, c] matrix with row stride ld is a
  // column-major c x r matrix with leading dimension ld.
  a_ = s.b_transposed ? layout(type, s.k, s.n, s.ldb, s.batch, s.stride_b) : layout(type, s.n, s.k, s.ldb, s.batch, s.stride_b);
  b_ = s.a_transposed ? layout(type, s.m, s.k, s.lda, s.batch, s.stride_a) : layout(type, s.k, s.m, s.lda, s.batch, s.stride_a);
  c_ = layout(out_type, s.n, s.m, s.ldd, s.batch, s.stride_d);
  d_ = layout(out_type, s.n, s.m, s.ldd, s.batch, s.stride_d);

  cublasLtMatmulPreference_t pref = nullptr;
  check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes_,
                                             sizeof(workspace_bytes_)),
        "cublasLtMatmulPreferenceSetAttribute(workspace)");
  // cuBLASLt's A is our B and its B our A (the swap above).
  const uint32_t align_first = static_cast<uint32_t>(s.align_b), align_second = static_cast<uint32_t>(s.align_a),
                 align_out = static_cast<uint32_t>(s.align_d);
  check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_first,
                                             sizeof(align_first)),
        "cublasLtMatmulPreferenceSetAttribute(alignment A)");
  check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_second,
                                             sizeof(align_second)),
        "cublasLtMatmulPreferenceSetAttribute(alignment B)");
  check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_out,
                                             sizeof(align_out)),
        "cublasLtMatmulPreferenceSetAttribute(alignment C)");
  check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_out,
                                             sizeof(align_out)),
        "cublasLtMatmulPreferenceSetAttribute(alignment D)");
  // Training must be reproducible bit for bit (a resumed run equals one that never stopped). A split-K
  // algorithm that reduces "in place" adds its parts into the output one at a time but in no fixed
  // order: with the timed choice free to take one, two runs of the same MLP step in one process ended
  // an ulp apart. TESSERA_CUDA_GEMM_REDUCTIONS picks what is allowed: "separate" (default: split-K
  // only with its parts reduced by a separate pass over the workspace), "none" (no split-K at all;
  // the MLP step at batch 64 took 311 instead of 215 us) or "all".
  const uint32_t reductions = gemm_reduction_mask();
  check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &reductions,
                                             sizeof(reductions)),
        "cublasLtMatmulPreferenceSetAttribute(reduction scheme)");
  std::vector<cublasLtMatmulHeuristicResult_t> results(kGemmCandidates);
  int found = 0;
  std::optional<common::CompilePhase> phase(std::in_place, "gemm heuristic");
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(handle_, op_, a_, b_, c_, d_, pref, kGemmCandidates,
                                                               results.data(), &found);
  cublasLtMatmulPreferenceDestroy(pref);
  check(status, "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0) throw Error(fmt::format("cuda gemm: cuBLASLt has no algorithm for {}", describe()));
  results.resize(static_cast<size_t>(found));
  GemmProblem problem{handle_, op_, a_, b_, c_, d_, &shape_, ""};
  problem.key = fmt::format("{} batch {} ld {} {} {} stride {} {} {} align {} {} {} workspace {}", describe(), s.batch,
                            s.lda, s.ldb, s.ldd, s.stride_a, s.stride_b, s.stride_d, s.align_a, s.align_b, s.align_d,
                            workspace_bytes_);
  phase.emplace("gemm choice");
  algo_ = choose_gemm_algo(problem, results);
}

GemmPlan::~GemmPlan() {
  if (a_) cublasLtMatrixLayoutDestroy(a_);
  if (b_) cublasLtMatrixLayoutDestroy(b_);
  if (c_) cublasLtMatrixLayoutDestroy(c_);
  if (d_) cublasLtMatrixLayoutDestroy(d_);
  if (op_) cublasLtMatmulDescDestroy(op_);
}

void GemmPlan::run(const void* a, const void* b, const void* bias, const void* c, void* d, cudaStream_t stream) const {
  if (shape_.bias) {
    check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)),
          "cublasLtMatmulDescSetAttribute(bias)");
  }
  const float alpha = 1.0f, beta = shape_.residual ? 1.0f : 0.0f;
  check(cublasLtMatmul(handle_, op_, &alpha, b, a_, a, b_, &beta, shape_.residual ? c : d, c_, d, d_, &algo_,
                       workspace_, workspace_bytes_, stream),
        "cublasLtMatmul");
}

std::string GemmPlan::describe() const {
  const GemmShape& s = shape_;
  return fmt::format("{}gemm{} {}x{}x{}{}{}{}{}{}{}", dtype_name(s.dtype), s.f32_output ? " to f32" : "", s.m, s.n, s.k,
                     s.batch > 1 ? fmt::format(" batch {}", s.batch) : "", s.a_transposed ? " A^T" : "",
                     s.b_transposed ? " B^T" : "", s.bias ? " +bias" : "",
                     s.activation == GemmActivation::relu ? " relu" : s.activation == GemmActivation::gelu ? " gelu" : "",
                     s.tf32 ? " tf32" : "");
}

}  // namespace tessera::backends::cuda
