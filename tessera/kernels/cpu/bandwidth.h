#pragma once
// Streaming kernels used to measure and compare memory bandwidth (bench_bandwidth, tessera bench):
// the STREAM triad, a read-only pass (one stream per thread: a yardstick for kernels that only read,
// like decode matvecs),
// and the fused elementwise relu(a*x + b) that a compiled graph should match.
#include <cstdint>

#include "tessera/runtime/thread_pool.h"

namespace tessera::kernels {

// a[i] = b[i] + s * c[i]  (STREAM's triad: 2 reads + 1 write per element).
void stream_triad(int64_t n, float* a, const float* b, const float* c, float s, runtime::ThreadPool* pool = nullptr);
// The wrapping sum of n 64-bit words: reads every byte once and writes nothing.
uint64_t stream_read_sum(int64_t n, const uint64_t* x, runtime::ThreadPool* pool = nullptr);
// y[i] = max(a[i] * x[i] + b[i], 0) over arrays (3 reads + 1 write per element).
void fused_relu_axpb(int64_t n, const float* a, const float* x, const float* b, float* y,
                     runtime::ThreadPool* pool = nullptr);
// y[i] = max(a * x[i] + b, 0) with scalar a, b (1 read + 1 write per element).
void fused_relu_axpb_scalar(int64_t n, float a, const float* x, float b, float* y, runtime::ThreadPool* pool = nullptr);

}  // namespace tessera::kernels
