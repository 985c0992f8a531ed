#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/runtime/thread_pool.h"

namespace tessera::runtime {
namespace {

// Runs parallel_for and checks that every index in [0, n) is visited exactly once.
void expect_each_index_once(ThreadPool& pool, int64_t n, int64_t grain) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  std::atomic<int> calls{0};
  pool.parallel_for(n, grain, [&](int64_t begin, int64_t end) {
    EXPECT_LT(begin, end);
    calls.fetch_add(1);
    for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
  });
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "index " << i << " n=" << n;
  EXPECT_LE(calls.load(), pool.size());
  if (n > 0) {
    EXPECT_GE(calls.load(), 1);
  }
}

TEST(ThreadPool, CoversEveryIndexOnce) {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int64_t n : {0, 1, 2, 3, 7, 64, 1000, 100003})
      for (int64_t grain : {1, 3, 1000}) expect_each_index_once(pool, n, grain);
  }
}

TEST(ThreadPool, ChunksRespectGrainAndThreadCount) {
  ThreadPool pool(4);
  std::atomic<int> calls{0};
  std::atomic<int64_t> smallest{1 << 30};
  pool.parallel_for(100, 30, [&](int64_t begin, int64_t end) {
    calls.fetch_add(1);
    int64_t cur = smallest.load();
    while (end - begin < cur && !smallest.compare_exchange_weak(cur, end - begin)) {
    }
  });
  EXPECT_EQ(calls.load(), 3);  // 100 / 30 -> at most 3 chunks of >= 30 items
  EXPECT_GE(smallest.load(), 30);

  calls = 0;
  pool.parallel_for(3, 1, [&](int64_t, int64_t) { calls.fetch_add(1); });  // n < threads
  EXPECT_EQ(calls.load(), 3);

  calls = 0;
  pool.parallel_for(10, 100, [&](int64_t begin, int64_t end) {  // grain > n: one serial call
    EXPECT_EQ(begin, 0);
    EXPECT_EQ(end, 10);
    calls.fetch_add(1);
  });
  EXPECT_EQ(calls.load(), 1);
}

TEST(ThreadPool, ParallelTasksRunsEachTaskOnce) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (int64_t tasks : {0, 1, 2, 5, 64, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(tasks));
      pool.parallel_tasks(tasks, [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) hits[static_cast<size_t>(t)].fetch_add(1);
      });
      for (int64_t t = 0; t < tasks; ++t) ASSERT_EQ(hits[static_cast<size_t>(t)].load(), 1) << t << " of " << tasks;
    }
  }
  ThreadPool pool(2);
  EXPECT_THROW(pool.parallel_tasks(70000, [](int64_t, int64_t) {}), Error);
}

TEST(ThreadPool, UsesSeveralThreads) {
  ThreadPool pool(2);
  std::atomic<int> in_flight{0}, max_in_flight{0};
  // Two chunks that wait for each other can only finish if they run on two threads at once.
  std::atomic<int> arrived{0};
  pool.parallel_for(2, 1, [&](int64_t, int64_t) {
    const int now = in_flight.fetch_add(1) + 1;
    int seen = max_in_flight.load();
    while (now > seen && !max_in_flight.compare_exchange_weak(seen, now)) {
    }
    arrived.fetch_add(1);
    while (arrived.load() < 2) std::this_thread::yield();
    in_flight.fetch_sub(1);
  });
  EXPECT_EQ(max_in_flight.load(), 2);
}

TEST(ThreadPool, NestedCallsRunSerially) {
  ThreadPool pool(2);
  std::vector<std::atomic<int>> hits(100 * 50);
  std::atomic<int> inner_calls{0};
  pool.parallel_for(100, 1, [&](int64_t b0, int64_t e0) {
    for (int64_t i = b0; i < e0; ++i) {
      pool.parallel_for(50, 1, [&](int64_t b1, int64_t e1) {
        inner_calls.fetch_add(1);
        EXPECT_EQ(b1, 0);  // the nested call gets the whole range at once
        EXPECT_EQ(e1, 50);
        for (int64_t j = b1; j < e1; ++j) hits[static_cast<size_t>(i * 50 + j)].fetch_add(1);
      });
    }
  });
  EXPECT_EQ(inner_calls.load(), 100);
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
}

TEST(ThreadPool, ConcurrentCallersBothComplete) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  auto work = [&] {
    for (int rep = 0; rep < 200; ++rep)
      pool.parallel_for(1000, 1, [&](int64_t b, int64_t e) { total.fetch_add(e - b); });
  };
  std::thread other(work);
  work();
  other.join();
  EXPECT_EQ(total.load(), 2 * 200 * 1000);
}

TEST(ThreadPool, ManyBackToBackCalls) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  for (int rep = 0; rep < 2000; ++rep) pool.parallel_for(2, 1, [&](int64_t b, int64_t e) { total.fetch_add(e - b); });
  EXPECT_EQ(total.load(), 4000);
}

TEST(ThreadPool, ExceptionPropagatesToCaller) {
  ThreadPool pool(2);
  EXPECT_THROW(pool.parallel_for(100, 1,
                                 [&](int64_t b, int64_t) {
                                   if (b > 0) throw std::runtime_error("boom");
                                 }),
               std::runtime_error);
  // The pool still works afterwards.
  expect_each_index_once(pool, 1000, 1);
}

TEST(ThreadPool, RunOnEachThreadVisitsEveryThreadOnce) {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    for (int rep = 0; rep < 20; ++rep) {
      std::vector<std::thread::id> ids(static_cast<size_t>(threads));
      std::atomic<int> calls{0};
      pool.run_on_each_thread([&](int64_t b, int64_t e) {
        ASSERT_EQ(e, b + 1);
        ids[static_cast<size_t>(b)] = std::this_thread::get_id();
        calls.fetch_add(1);
      });
      EXPECT_EQ(calls.load(), threads);
      for (int i = 0; i < threads; ++i)
        for (int j = i + 1; j < threads; ++j)
          EXPECT_NE(ids[static_cast<size_t>(i)], ids[static_cast<size_t>(j)]) << threads << " threads, " << i << " vs " << j;
    }
  }
}

TEST(ThreadPool, RunOnEachThreadFromAWorkerRunsOnlyThere) {
  ThreadPool pool(2);
  std::atomic<int> inner{0};
  pool.parallel_for(2, 1, [&](int64_t, int64_t) { pool.run_on_each_thread([&](int64_t, int64_t) { ++inner; }); });
  EXPECT_EQ(inner.load(), 2);
}

TEST(ThreadPool, DefaultPoolExists) {
  ThreadPool& pool = default_pool();
  EXPECT_GE(pool.size(), 1);
  EXPECT_EQ(&pool, &default_pool());
  expect_each_index_once(pool, 12345, 7);
}

}  // namespace
}  // namespace tessera::runtime
