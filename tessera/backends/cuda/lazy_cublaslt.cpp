// The cuBLASLt functions the CUDA backend calls, defined here with cublasLt.h's prototypes and forwarded
// to libcublasLt, which is opened on the first call (lazy_library.h says why), so no call site changes.
#include <cublasLt.h>
#include <fmt/format.h>

#include "tessera/backends/cuda/lazy_library.h"

namespace tessera::backends::cuda {

const LazyLibrary& cublaslt_library() {
  // The soname of the cuBLAS these headers belong to, found on the search path, else in the toolkit.
  // Leaked on purpose: forwarding calls may come from static destructors that run after it would be gone.
  // The candidates are a named vector, not an initializer list inside the guarded static: clang 14's
  // AddressSanitizer reports a false stack-use-after-scope on the list's temporaries there.
  static const LazyLibrary* library = [] {
    const std::vector<std::string> candidates{
        fmt::format("libcublasLt.so.{}", CUBLAS_VER_MAJOR),
        fmt::format("{}/libcublasLt.so.{}", TESSERA_CUDA_LIBRARY_DIR, CUBLAS_VER_MAJOR)};
    return new LazyLibrary("cuBLASLt", candidates);
  }();
  return *library;
}

}  // namespace tessera::backends::cuda

namespace {

using tessera::backends::cuda::cublaslt_library;
using tessera::backends::cuda::forward;

// What every status-returning function gives when the library could not be loaded.
constexpr cublasStatus_t kNotLoaded = CUBLAS_STATUS_NOT_INITIALIZED;

}  // namespace

// The macro keeps each function's name and the symbol it forwards to the same word.
#define TESSERA_FORWARD(fn, ...) forward<&fn, cublaslt_library>(#fn, kNotLoaded __VA_OPT__(, ) __VA_ARGS__)

extern "C" {

cublasStatus_t CUBLASWINAPI cublasLtCreate(cublasLtHandle_t* lightHandle) {
  return TESSERA_FORWARD(cublasLtCreate, lightHandle);
}

cublasStatus_t CUBLASWINAPI cublasLtDestroy(cublasLtHandle_t lightHandle) {
  return TESSERA_FORWARD(cublasLtDestroy, lightHandle);
}

size_t CUBLASWINAPI cublasLtGetVersion(void) {
  return forward<&cublasLtGetVersion, cublaslt_library>("cublasLtGetVersion", size_t{0});
}

// Without the library, the status text is why it could not be loaded: check() puts it in its error.
const char* CUBLASWINAPI cublasLtGetStatusString(cublasStatus_t status) {
  if (!cublaslt_library().loaded()) return cublaslt_library().error().c_str();
  return forward<&cublasLtGetStatusString, cublaslt_library>("cublasLtGetStatusString", "unknown status", status);
}

const char* CUBLASWINAPI cublasLtGetStatusName(cublasStatus_t status) {
  if (!cublaslt_library().loaded()) return status == kNotLoaded ? "CUBLAS_STATUS_NOT_INITIALIZED" : "unknown status";
  return forward<&cublasLtGetStatusName, cublaslt_library>("cublasLtGetStatusName", "unknown status", status);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                                           const void* alpha, const void* A, cublasLtMatrixLayout_t Adesc,
                                           const void* B, cublasLtMatrixLayout_t Bdesc, const void* beta, const void* C,
                                           cublasLtMatrixLayout_t Cdesc, void* D, cublasLtMatrixLayout_t Ddesc,
                                           const cublasLtMatmulAlgo_t* algo, void* workspace,
                                           size_t workspaceSizeInBytes, cudaStream_t stream) {
  return TESSERA_FORWARD(cublasLtMatmul, lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc,
                         algo, workspace, workspaceSizeInBytes, stream);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* matmulDesc, cublasComputeType_t computeType,
                                                     cudaDataType_t scaleType) {
  return TESSERA_FORWARD(cublasLtMatmulDescCreate, matmulDesc, computeType, scaleType);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc) {
  return TESSERA_FORWARD(cublasLtMatmulDescDestroy, matmulDesc);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                                           cublasLtMatmulDescAttributes_t attr, const void* buf,
                                                           size_t sizeInBytes) {
  return TESSERA_FORWARD(cublasLtMatmulDescSetAttribute, matmulDesc, attr, buf, sizeInBytes);
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* matLayout, cudaDataType type,
                                                       uint64_t rows, uint64_t cols, int64_t ld) {
  return TESSERA_FORWARD(cublasLtMatrixLayoutCreate, matLayout, type, rows, cols, ld);
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout) {
  return TESSERA_FORWARD(cublasLtMatrixLayoutDestroy, matLayout);
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout,
                                                             cublasLtMatrixLayoutAttribute_t attr, const void* buf,
                                                             size_t sizeInBytes) {
  return TESSERA_FORWARD(cublasLtMatrixLayoutSetAttribute, matLayout, attr, buf, sizeInBytes);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  return TESSERA_FORWARD(cublasLtMatmulPreferenceCreate, pref);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  return TESSERA_FORWARD(cublasLtMatmulPreferenceDestroy, pref);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                                 cublasLtMatmulPreferenceAttributes_t attr,
                                                                 const void* buf, size_t sizeInBytes) {
  return TESSERA_FORWARD(cublasLtMatmulPreferenceSetAttribute, pref, attr, buf, sizeInBytes);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulAlgoConfigGetAttribute(const cublasLtMatmulAlgo_t* algo,
                                                                 cublasLtMatmulAlgoConfigAttributes_t attr, void* buf,
                                                                 size_t sizeInBytes, size_t* sizeWritten) {
  return TESSERA_FORWARD(cublasLtMatmulAlgoConfigGetAttribute, algo, attr, buf, sizeInBytes, sizeWritten);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc, cublasLtMatrixLayout_t Adesc,
    cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
    cublasLtMatmulPreference_t preference, int requestedAlgoCount,
    cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int* returnAlgoCount) {
  return TESSERA_FORWARD(cublasLtMatmulAlgoGetHeuristic, lightHandle, operationDesc, Adesc, Bdesc, Cdesc, Ddesc,
                         preference, requestedAlgoCount, heuristicResultsArray, returnAlgoCount);
}

}  // extern "C"

#undef TESSERA_FORWARD
