// A compiled step covered by library calls, generated kernels and views allocates nothing in steady
// state: this binary counts every operator new and malloc-family call while the counter is armed
// (through AddressSanitizer's allocation hooks in sanitizer builds).
#include <atomic>
#include <cstdlib>
#include <new>

#include "model_steps.h"
#include "tessera/ops/quant.h"
#include "tessera/runtime/thread_scratch.h"

// GCC inlines these replacements into callers and then flags free() on a new'd pointer, which is
// exactly what the replacement pair does on purpose.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<int64_t> g_allocations{0};
void note_allocation() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

// GCC says __SANITIZE_ADDRESS__; clang 14 only answers __has_feature(address_sanitizer).
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_TEST_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(TESSERA_TEST_UNDER_ASAN)
// Under AddressSanitizer, which owns malloc and operator new, its allocation hooks do the counting.
// Declared in compiler-rt's sanitizer/allocator_interface.h, which GCC does not ship.
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*, std::size_t),
                                                         void (*free_hook)(const volatile void*));
namespace {
void malloc_hook(const volatile void*, std::size_t) {
  note_allocation();
}
void free_hook(const volatile void*) {}
[[maybe_unused]] const int g_hooks_installed = __sanitizer_install_malloc_and_free_hooks(malloc_hook, free_hook);
}  // namespace
#else
void* operator new(std::size_t n) {
  note_allocation();
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  return operator new(n);
}
void* operator new(std::size_t n, std::align_val_t a) {
  note_allocation();
  const std::size_t align = static_cast<std::size_t>(a);
  if (void* p = std::aligned_alloc(align, (n + align - 1) / align * align)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return operator new(n, a);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}

#if !defined(__SANITIZE_THREAD__) && defined(__GLIBC__)
// glibc's own entry points, so that the wrappers below can count and forward.
extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void* malloc(std::size_t n) {
  note_allocation();
  return __libc_malloc(n);
}
void* calloc(std::size_t n, std::size_t size) {
  note_allocation();
  return __libc_calloc(n, size);
}
void* realloc(void* p, std::size_t n) {
  note_allocation();
  return __libc_realloc(p, n);
}
void* aligned_alloc(std::size_t alignment, std::size_t n) {
  note_allocation();
  return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, std::size_t alignment, std::size_t n) {
  note_allocation();
  *out = __libc_memalign(alignment, n);
  return *out != nullptr || n == 0 ? 0 : 12;  // ENOMEM
}
}
#endif
#endif

namespace tessera::test {
namespace {

using backends::cpu::JitMode;

// Counts allocations over `runs` calls of run_into after two warm-up calls.
int64_t steady_state_allocations(backends::Executable& exe, const std::vector<Array>& inputs, int runs) {
  std::vector<Array> outputs;
  for (const ir::Value& v : exe.graph().outputs()) outputs.push_back(Array::empty(v.dtype(), v.shape()));
  exe.run_into(inputs, outputs);
  exe.run_into(inputs, outputs);
  g_allocations = 0;
  g_counting = true;
  for (int i = 0; i < runs; ++i) exe.run_into(inputs, outputs);
  g_counting = false;
  return g_allocations.load();
}

TEST(CpuZeroAlloc, CountingAllocatorSeesAllocations) {
  g_allocations = 0;
  g_counting = true;
  const Array a = Array::zeros(DType::f32, {16});
  std::vector<int>* v = new std::vector<int>(3);
  g_counting = false;
  delete v;
  EXPECT_GE(g_allocations.load(), 2);
}

// The measure-then-reserve contract on its own: scratch that one thread measured is given to every
// pool thread, after which no thread allocates for it, whichever thread asks.
TEST(CpuZeroAlloc, ReservedThreadScratchAllocatesNothingOnAnyThread) {
  using runtime::ScratchSlot;
  runtime::ThreadPool pool(3);
  // Larger than anything requested before in this process, so this test's own request sets the size.
  const size_t bytes = runtime::thread_scratch_high_water(ScratchSlot::gemm_rows) + (1 << 20);
  runtime::thread_scratch(ScratchSlot::gemm_rows, bytes);
  EXPECT_GE(runtime::thread_scratch_high_water(ScratchSlot::gemm_rows), bytes);
  auto allocations_on_every_thread = [&](size_t want) {
    g_allocations = 0;
    g_counting = true;
    pool.run_on_each_thread([&](int64_t, int64_t) { runtime::thread_scratch(ScratchSlot::gemm_rows, want); });
    g_counting = false;
    return g_allocations.load();
  };
  runtime::reserve_thread_scratch(pool);
  EXPECT_EQ(allocations_on_every_thread(bytes), 0);
  // Without a reserve, the two workers' first use of a larger size allocates: the check above can fail.
  const size_t larger = bytes + (1 << 20);
  runtime::thread_scratch(ScratchSlot::gemm_rows, larger);
  EXPECT_GE(allocations_on_every_thread(larger), 2);
}

// Reserving again with nothing new to hand out costs nothing; each pool keeps its own record.
TEST(CpuZeroAlloc, ReserveRunsOnlyWhenAScratchSizeGrew) {
  using runtime::ScratchSlot;
  runtime::ThreadPool first(2), second(2);
  runtime::thread_scratch(ScratchSlot::gemm_rows, runtime::thread_scratch_high_water(ScratchSlot::gemm_rows) + 4096);
  EXPECT_TRUE(runtime::reserve_thread_scratch(first));
  EXPECT_FALSE(runtime::reserve_thread_scratch(first));
  EXPECT_TRUE(runtime::reserve_thread_scratch(second));
  EXPECT_FALSE(runtime::reserve_thread_scratch(second));
  runtime::thread_scratch(ScratchSlot::quant_sums, runtime::thread_scratch_high_water(ScratchSlot::quant_sums) + 64);
  EXPECT_TRUE(runtime::reserve_thread_scratch(first));
}

TEST(CpuZeroAlloc, MlpTrainingStepAllocatesNothingInSteadyState) {
  ScopedJit jit(JitMode::always);
  const StepGraph s = mlp_train_step(16, {64, 48, 32, 10});
  auto exe = backends::cpu_backend().compile(s.graph);
  const backends::cpu::CompileInfo info = backends::cpu::compile_info(*exe);
  ASSERT_EQ(info.fallback_steps, 0) << info.program;
  EXPECT_EQ(steady_state_allocations(*exe, s.inputs, 10), 0) << info.program;
}

// A quantized two-layer decode step (x8 Q4_K and row-layout Q6_K weights, one activation row and a
// batch of five) allocates nothing once its thread scratch is reserved.
TEST(CpuZeroAlloc, QuantizedMatmulsAllocateNothingInSteadyState) {
  ScopedJit jit(JitMode::always);
  const Tensor w1 = ops::quantize_weights(random_array({256, 512}, 1, -1, 1, DType::f32), "q4_k");
  const Tensor w2 = ops::quantize_weights(random_array({24, 256}, 2, -1, 1, DType::f32), "q6_k");
  for (int64_t m : {1, 5}) {
    const ir::Graph g = trace(
        [&](const std::vector<Tensor>& a) -> std::vector<Tensor> {
          const Tensor h = ops::relu(ops::quantized_matmul(a[0], w1, "q4_k"));
          return {ops::quantized_matmul(h, w2, "q6_k")};
        },
        {{DType::f32, {m, 512}}});
    auto exe = backends::cpu_backend().compile(g);
    const backends::cpu::CompileInfo info = backends::cpu::compile_info(*exe);
    ASSERT_EQ(info.fallback_steps, 0) << info.program;
    EXPECT_EQ(steady_state_allocations(*exe, {random_array({m, 512}, 3, -1, 1, DType::f32)}, 10), 0) << info.program;
  }
}

TEST(CpuZeroAlloc, CnnTrainingStepAllocatesNothingInSteadyState) {
  ScopedJit jit(JitMode::always);
  const StepGraph s = cnn_train_step(4);
  auto exe = backends::cpu_backend().compile(s.graph);
  const backends::cpu::CompileInfo info = backends::cpu::compile_info(*exe);
  ASSERT_EQ(info.fallback_steps, 0) << "reference kernels allocate: " << info.program;
  EXPECT_EQ(steady_state_allocations(*exe, s.inputs, 10), 0) << info.program;
}

TEST(CpuZeroAlloc, ViewsAndLibraryCallsAllocateNothing) {
  ScopedJit jit(JitMode::off);
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
        const Tensor h = ops::matmul(ops::transpose(a[0], 0, 1), a[1]);
        return {ops::reshape(ops::softmax(h, -1), {-1}), ops::sum(h, {0}), ops::slice(a[1], 0, 1, 3)};
      },
      {{DType::f32, {16, 8}}, {DType::f32, {16, 12}}});
  auto exe = backends::cpu_backend().compile(g);
  ASSERT_EQ(backends::cpu::compile_info(*exe).fallback_steps, 0) << backends::cpu::compile_info(*exe).program;
  const std::vector<Array> in = {Array::full(DType::f32, {16, 8}, 0.5), Array::full(DType::f32, {16, 12}, 0.25)};
  EXPECT_EQ(steady_state_allocations(*exe, in, 10), 0);
}

}  // namespace
}  // namespace tessera::test
