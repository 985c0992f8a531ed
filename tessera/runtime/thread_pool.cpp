#include "tessera/runtime/thread_pool.h"

#include "tessera/core/error.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tessera::runtime {
namespace {

// True on a pool worker while it runs a chunk, and on a caller while its parallel_for is active:
// a nested parallel_for then runs serially instead of deadlocking on the busy pool.
thread_local bool t_inside_parallel_for = false;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// How long an idle worker (or a waiting caller) spins before it sleeps. Kernels of a compiled step
// arrive microseconds apart, and a condition-variable wake-up costs tens of microseconds.
std::chrono::microseconds spin_duration() {
  static const std::chrono::microseconds value = [] {
    if (const char* env = std::getenv("TESSERA_SPIN_US")) {
      char* end = nullptr;
      const long us = std::strtol(env, &end, 10);
      if (end != env && us >= 0) return std::chrono::microseconds(us);
    }
    return std::chrono::microseconds(200);
  }();
  return value;
}

// Spins until pred() holds or the spin budget runs out; returns pred()'s last value.
template <typename Pred>
bool spin_until(Pred pred) {
  const auto budget = spin_duration();
  if (budget.count() == 0) return pred();
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (pred()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() - start > budget) return pred();
  }
}

// Chunks are claimed through one atomic word holding (generation << 32) | (chunks << 16) | next
// chunk index, so a worker that wakes late can never claim a chunk of a later job, nor mix the
// chunk count of one job with another. The caller claims chunks the
// same way: when a worker is descheduled (a loaded machine), the caller runs its chunks instead of
// waiting a scheduler time slice for it.
constexpr int kChunkBits = 16;
constexpr uint64_t kChunkMask = (uint64_t{1} << kChunkBits) - 1;
constexpr int kMaxThreads = static_cast<int>(kChunkMask);

}  // namespace

struct ThreadPool::Impl {
  int num_threads = 1;
  std::vector<std::thread> workers;

  // Serialises concurrent callers: a second caller that finds the pool busy runs serially.
  std::mutex dispatch;

  std::mutex sleep_mutex;
  std::condition_variable work_ready;
  std::condition_variable work_done;
  std::atomic<int> sleeping_workers{0};
  std::atomic<bool> caller_sleeping{false};

  std::atomic<uint64_t> generation{0};  // bumped once per job; workers wait for it to change
  std::atomic<int> started{0};          // workers that have entered worker_loop
  std::atomic<uint64_t> claim{0};       // (generation << 32) | (chunks << 16) | next unclaimed chunk
  std::atomic<int> finished{0};         // chunks completed in the current job
  std::atomic<bool> stopping{false};
  std::atomic<uint64_t> scratch_epoch{0};

  // The current job; written by the caller before the generation is published.
  const RangeFn* fn = nullptr;
  int64_t n = 0;
  int chunks = 0;
  std::mutex error_mutex;
  std::exception_ptr error;

  void run_chunk(int index, int count) {
    const int64_t begin = n * index / count;
    const int64_t end = n * (index + 1) / count;
    if (begin >= end) return;
    try {
      (*fn)(begin, end);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  }

  // Claims and runs chunks of job `gen` until none is left.
  void drain(uint64_t gen) {
    uint64_t word = claim.load(std::memory_order_acquire);
    for (;;) {
      if ((word >> 32) != (gen & 0xffffffffu)) return;  // a later job: ours is finished
      const int count = static_cast<int>((word >> kChunkBits) & kChunkMask);
      const int index = static_cast<int>(word & kChunkMask);
      if (index >= count) return;
      if (!claim.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
      run_chunk(index, count);
      if (finished.fetch_add(1, std::memory_order_acq_rel) + 1 == count &&
          caller_sleeping.load(std::memory_order_seq_cst)) {
        std::lock_guard<std::mutex> lock(sleep_mutex);
        work_done.notify_all();
      }
      word = claim.load(std::memory_order_acquire);
    }
  }

  void worker_loop() {
    t_inside_parallel_for = true;  // everything a worker runs is inside some parallel_for
    started.fetch_add(1, std::memory_order_release);
    uint64_t seen = 0;
    for (;;) {
      auto changed = [&] {
        return generation.load(std::memory_order_acquire) != seen || stopping.load(std::memory_order_acquire);
      };
      if (!spin_until(changed)) {
        std::unique_lock<std::mutex> lock(sleep_mutex);
        sleeping_workers.fetch_add(1, std::memory_order_seq_cst);
        work_ready.wait(lock, [&] {
          return generation.load(std::memory_order_seq_cst) != seen || stopping.load(std::memory_order_seq_cst);
        });
        sleeping_workers.fetch_sub(1, std::memory_order_relaxed);
      }
      if (stopping.load(std::memory_order_acquire)) return;
      seen = generation.load(std::memory_order_acquire);
      drain(seen);
    }
  }

  uint64_t publish(int count) {
    const uint64_t gen = generation.load(std::memory_order_relaxed) + 1;
    chunks = count;
    finished.store(0, std::memory_order_relaxed);
    claim.store(((gen & 0xffffffffu) << 32) | (static_cast<uint64_t>(count) << kChunkBits), std::memory_order_release);
    generation.store(gen, std::memory_order_seq_cst);
    if (sleeping_workers.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard<std::mutex> lock(sleep_mutex);
      work_ready.notify_all();
    }
    return gen;
  }

  // Runs a job of `count` chunks over [0, n) on the pool; the caller holds `dispatch`.
  void run_job(int64_t items, int count, RangeFn job) {
    fn = &job;
    n = items;
    error = nullptr;
    const uint64_t gen = publish(count);
    t_inside_parallel_for = true;
    drain(gen);
    t_inside_parallel_for = false;
    wait_for_chunks();
    if (error) {
      std::exception_ptr e = error;
      error = nullptr;
      std::rethrow_exception(e);
    }
  }

  void wait_for_chunks() {
    auto done = [&] { return finished.load(std::memory_order_acquire) == chunks; };
    if (spin_until(done)) return;
    std::unique_lock<std::mutex> lock(sleep_mutex);
    caller_sleeping.store(true, std::memory_order_seq_cst);
    work_done.wait(lock, [&] { return finished.load(std::memory_order_seq_cst) == chunks; });
    caller_sleeping.store(false, std::memory_order_relaxed);
  }
};

ThreadPool::ThreadPool(int num_threads) : impl_(new Impl) {
  impl_->num_threads = std::clamp(num_threads, 1, kMaxThreads);
  impl_->workers.reserve(static_cast<size_t>(impl_->num_threads - 1));
  for (int i = 1; i < impl_->num_threads; ++i) impl_->workers.emplace_back([this] { impl_->worker_loop(); });
  // Return only once every worker runs: a thread's start-up (and a sanitizer's per-thread set-up, which
  // allocates) then never falls inside the caller's later work, and the first parallel_for finds its
  // workers ready instead of doing every chunk itself.
  while (impl_->started.load(std::memory_order_acquire) < impl_->num_threads - 1) std::this_thread::yield();
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(impl_->sleep_mutex);
    impl_->stopping.store(true, std::memory_order_seq_cst);
    impl_->work_ready.notify_all();
  }
  for (auto& w : impl_->workers) w.join();
  delete impl_;
}

int ThreadPool::size() const {
  return impl_->num_threads;
}

std::atomic<uint64_t>& ThreadPool::scratch_epoch() {
  return impl_->scratch_epoch;
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, RangeFn fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t max_chunks = std::max<int64_t>(n / grain, 1);
  const int count = static_cast<int>(std::min<int64_t>(impl_->num_threads, max_chunks));
  if (count <= 1 || t_inside_parallel_for) {
    fn(0, n);
    return;
  }
  std::unique_lock<std::mutex> busy(impl_->dispatch, std::try_to_lock);
  if (!busy.owns_lock()) {  // another thread is using the pool right now
    fn(0, n);
    return;
  }
  impl_->run_job(n, count, fn);
}

void ThreadPool::parallel_tasks(int64_t tasks, RangeFn fn) {
  if (tasks <= 0) return;
  TESSERA_CHECK(tasks <= kMaxThreads, "parallel_tasks: {} tasks, at most {}", tasks, kMaxThreads);
  if (tasks == 1 || impl_->num_threads == 1 || t_inside_parallel_for) {
    fn(0, tasks);
    return;
  }
  std::unique_lock<std::mutex> busy(impl_->dispatch, std::try_to_lock);
  if (!busy.owns_lock()) {  // another thread is using the pool right now
    fn(0, tasks);
    return;
  }
  impl_->run_job(tasks, static_cast<int>(tasks), fn);  // one chunk per task
}

void ThreadPool::run_on_each_thread(RangeFn fn) {
  if (t_inside_parallel_for) {
    fn(0, 1);
    return;
  }
  const int count = impl_->num_threads;
  // Each chunk waits until every thread holds one, so no thread can take two.
  std::atomic<int> arrived{0};
  auto each = [&](int64_t begin, int64_t end) {
    arrived.fetch_add(1, std::memory_order_acq_rel);
    while (arrived.load(std::memory_order_acquire) < count) std::this_thread::yield();
    fn(begin, end);
  };
  std::lock_guard<std::mutex> busy(impl_->dispatch);
  impl_->run_job(count, count, each);
}

ThreadPool& default_pool() {
  // Never destroyed: kernels may still run from other static destructors at exit, and the process
  // ends the (idle) workers anyway.
  static ThreadPool* pool = new ThreadPool([] {
    if (const char* env = std::getenv("TESSERA_NUM_THREADS")) {
      char* end = nullptr;
      const long v = std::strtol(env, &end, 10);
      if (end != env && v >= 1) return static_cast<int>(std::min<long>(v, kMaxThreads));
    }
    const unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : static_cast<int>(hw);
  }());
  return *pool;
}

}  // namespace tessera::runtime
