// The memory planner: liveness, best-fit placement and in-place hand-over, checked by brute force on
// random schedules and on the plans of real compiled graphs.
#include <random>

#include "model_steps.h"
#include "op_samples.h"
#include "tessera/runtime/memory_plan.h"

namespace tessera::test {
namespace {

using runtime::BufferRequest;
using runtime::check_memory_plan;
using runtime::plan_memory;

std::vector<BufferRequest> random_requests(uint64_t seed, int count, int steps) {
  std::mt19937_64 rng(seed);
  std::vector<BufferRequest> r;
  for (int i = 0; i < count; ++i) {
    BufferRequest b;
    b.bytes = static_cast<int64_t>(rng() % 5000);
    b.first = static_cast<int32_t>(rng() % static_cast<uint64_t>(steps));
    b.last = b.first + static_cast<int32_t>(rng() % 6);
    if (i > 0 && rng() % 3 == 0) b.reuse_from = static_cast<int32_t>(rng() % static_cast<uint64_t>(i));
    r.push_back(b);
  }
  // Requests are listed in order of birth, as a schedule produces them.
  std::stable_sort(r.begin(), r.end(),
                   [](const BufferRequest& a, const BufferRequest& b) { return a.first < b.first; });
  for (size_t i = 0; i < r.size(); ++i) {
    if (r[i].reuse_from >= static_cast<int32_t>(i)) r[i].reuse_from = -1;
  }
  return r;
}

TEST(MemoryPlan, RandomSchedulesNeverOverlapLiveBuffers) {
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const std::vector<BufferRequest> r = random_requests(seed, 60, 40);
    const runtime::MemoryPlan p = plan_memory(r);
    EXPECT_EQ(check_memory_plan(r, p), "") << "seed " << seed;
    EXPECT_LE(p.peak_bytes, p.requested_bytes) << "seed " << seed;
  }
}

TEST(MemoryPlan, ReusesMemoryOfDeadBuffers) {
  // A chain a -> b -> c -> d where each dies as the next is born: two blocks suffice.
  std::vector<BufferRequest> r = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  const runtime::MemoryPlan p = plan_memory(r);
  EXPECT_EQ(check_memory_plan(r, p), "");
  EXPECT_EQ(p.peak_bytes, 2 * 1024);
  EXPECT_EQ(p.requested_bytes, 4 * 1024);
  EXPECT_EQ(p.offsets[0], p.offsets[2]);
  EXPECT_EQ(p.offsets[1], p.offsets[3]);
}

TEST(MemoryPlan, InPlaceHandOverWhenTheSourceDiesAtTheStep) {
  std::vector<BufferRequest> r = {{4096, 0, 1}, {4096, 1, 2, 0}, {4096, 2, 3, 1}};
  const runtime::MemoryPlan p = plan_memory(r);
  EXPECT_EQ(check_memory_plan(r, p), "");
  EXPECT_TRUE(p.in_place[1]);
  EXPECT_TRUE(p.in_place[2]);
  EXPECT_EQ(p.offsets[0], p.offsets[1]);
  EXPECT_EQ(p.offsets[1], p.offsets[2]);
  EXPECT_EQ(p.peak_bytes, 4096);
}

TEST(MemoryPlan, NoHandOverWhenTheSourceLivesOnOrIsTooSmall) {
  std::vector<BufferRequest> r = {{4096, 0, 2}, {4096, 1, 2, 0}, {64, 0, 1}, {128, 1, 1, 2}};
  const runtime::MemoryPlan p = plan_memory(r);
  EXPECT_EQ(check_memory_plan(r, p), "");
  EXPECT_FALSE(p.in_place[1]);  // the source is read after the step
  EXPECT_FALSE(p.in_place[3]);  // the source is smaller
}

TEST(MemoryPlan, BestFitPicksTheSmallestHole) {
  // Holes of 2048 and 1024 bytes open at step 1; a 1000-byte buffer born at step 2 takes the smaller.
  std::vector<BufferRequest> r = {{2048, 0, 1}, {64, 0, 5}, {1024, 0, 1}, {64, 0, 5}, {1000, 2, 3}};
  const runtime::MemoryPlan p = plan_memory(r);
  EXPECT_EQ(check_memory_plan(r, p), "");
  EXPECT_EQ(p.offsets[4], p.offsets[2]);
}

TEST(MemoryPlan, CheckerCatchesOverlaps) {
  std::vector<BufferRequest> r = {{100, 0, 2}, {100, 1, 3}};
  runtime::MemoryPlan bad;
  bad.offsets = {0, 64};
  bad.in_place = {false, false};
  bad.peak_bytes = 256;
  EXPECT_NE(check_memory_plan(r, bad), "");
}

TEST(MemoryPlan, LivenessFollowsTheSchedule) {
  // Buffer 0 written at step 0, read at 2; buffer 1 written at 1 and never read; buffer 2 is a
  // result kept alive to the end.
  const std::vector<runtime::StepAccess> steps = {{{0}, {}}, {{1}, {0}}, {{2}, {0}}, {{3}, {2}}};
  const auto live = runtime::compute_liveness(5, steps, {2});
  EXPECT_EQ(live[0].first, 0);
  EXPECT_EQ(live[0].last, 2);
  EXPECT_EQ(live[1].first, 1);
  EXPECT_EQ(live[1].last, 1);
  EXPECT_EQ(live[2].last, 3);
  EXPECT_EQ(live[4].first, -1);
}

// The plans the backend makes for whole training steps are sound and reuse memory.
TEST(MemoryPlan, TrainingStepPlansAreSound) {
  for (backends::cpu::JitMode mode : {backends::cpu::JitMode::off, backends::cpu::JitMode::always}) {
    ScopedJit jit(mode);
    for (const StepGraph& s : {mlp_train_step(32, {784, 256, 128, 10}), cnn_train_step(4)}) {
      auto exe = backends::cpu_backend().compile(s.graph);
      const backends::common::Program& p = backends::cpu::program_of(*exe);
      EXPECT_EQ(check_memory_plan(p.arena_requests, p.memory), "");
      EXPECT_EQ(exe->peak_bytes(), p.memory.peak_bytes);
      EXPECT_GT(exe->peak_bytes(), 0);
      EXPECT_LT(p.memory.peak_bytes, p.memory.requested_bytes) << "no reuse at all";
    }
  }
}

// An elementwise chain in generated code writes each result over its dying input.
TEST(MemoryPlan, ElementwiseChainsRunInPlace) {
  ScopedJit jit(backends::cpu::JitMode::always);
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
        // Each link is a separate kernel (a softmax between them blocks fusion).
        const Tensor t = ops::softmax(ops::exp(a[0] * 2.0), -1);
        return {ops::sum(ops::softmax(ops::tanh(t) + 1.0, -1), {1})};
      },
      {{DType::f32, {64, 128}}});
  auto exe = backends::cpu_backend().compile(g);
  const backends::cpu::CompileInfo info = backends::cpu::compile_info(*exe);
  EXPECT_GE(info.in_place, 2) << info.program;
  expect_matches_reference(g, {sample_array({DType::f32, {64, 128}}, 3, -1, 1)}, "in-place chain");
}

// A kernel must not write over an input that it also reads elsewhere (through a view of the same
// memory): here every row adds the first row of x, which in place would be overwritten first.
TEST(MemoryPlan, NoInPlaceOverMemoryReadThroughAnotherView) {
  ScopedJit jit(backends::cpu::JitMode::always);
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
        const Tensor x = ops::matmul(a[0], a[1]);
        const Tensor first_row = ops::slice(x, 0, 0, 1);
        // argmax (a reference kernel, run first) also reads first_row, so the view stays outside the
        // generated kernel, which then reads x twice: whole, and through the view.
        const Tensor r = ops::argmax(first_row, 1);
        return {r, ops::matmul(ops::exp(x) + first_row, a[2])};
      },
      {{DType::f32, {64, 32}}, {DType::f32, {32, 48}}, {DType::f32, {48, 8}}});
  expect_matches_reference(
      g,
      {sample_array({DType::f32, {64, 32}}, 1, -1, 1), sample_array({DType::f32, {32, 48}}, 2, -1, 1),
       sample_array({DType::f32, {48, 8}}, 3, -1, 1)},
      "in-place hazard");
}

}  // namespace
}  // namespace tessera::test
