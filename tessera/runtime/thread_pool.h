#pragma once
// A persistent pool of worker threads for data-parallel kernels. parallel_for splits [0, n) into
// contiguous chunks and blocks until all are done; it allocates nothing per call, so compiled
// executables stay allocation-free in steady state.
#include <atomic>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace tessera::runtime {

// A non-owning reference to a callable `void(int64_t begin, int64_t end)` (no heap, unlike
// std::function). The callable must outlive the call it is passed to.
class RangeFn {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, RangeFn>>>
  RangeFn(F&& f)  // NOLINT(google-explicit-constructor): passed inline as a lambda
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, int64_t b, int64_t e) { (*static_cast<std::remove_reference_t<F>*>(o))(b, e); }) {}
  void operator()(int64_t begin, int64_t end) const { call_(object_, begin, end); }

 private:
  void* object_;
  void (*call_)(void*, int64_t, int64_t);
};

class ThreadPool {
 public:
  explicit ThreadPool(int num_threads);  // num_threads >= 1; the calling thread is one of them
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const;
  // Runs fn over [0, n) in at most size() contiguous chunks of at least `grain` items each; the
  // calling thread takes a chunk too. Nested calls from inside a worker run serially.
  void parallel_for(int64_t n, int64_t grain, RangeFn fn);
  // Runs fn(t, t + 1) once for each task t in [0, tasks), each claimed by whichever thread is free
  // next (the caller too): with several tasks per thread, a thread that another process keeps off
  // its core (a shared machine) holds up one task, not a fixed share of the work. Nested calls from
  // inside a worker run serially; at most 65535 tasks.
  void parallel_tasks(int64_t tasks, RangeFn fn);
  // Runs fn(i, i + 1) exactly once on each of the size() threads (the caller included), for
  // per-thread set-up such as reserving scratch. Waits for a pool that another thread is using;
  // called from inside a parallel_for it can only run fn(0, 1) on the current thread.
  void run_on_each_thread(RangeFn fn);

  // How far this pool's threads have been grown by reserve_thread_scratch (thread_scratch.h): the
  // count of high-water raises at its last run on this pool.
  std::atomic<uint64_t>& scratch_epoch();

 private:
  struct Impl;
  Impl* impl_;
};

// The process-wide pool: TESSERA_NUM_THREADS threads, else std::thread::hardware_concurrency().
ThreadPool& default_pool();

}  // namespace tessera::runtime
