// The Vulkan backend's library shaders against the reference backend, at ragged sizes (lanes shorter
// and longer than a workgroup, sizes no power of two), on strided and broadcast operands, in f32 and
// f16: softmax / log_softmax / logsumexp, argmax / argmin, cumsum, gather / index_select / embedding / one_hot,
// scatter_add and embedding_grad (both formulations, repeated indices, more hits than the shared list
// holds), pad / slice_backward, and the grouped Adam update. Each graph must compile into one Vulkan
// executable, with nothing on the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "tessera/api/transforms.h"
#include "tessera/backends/vulkan/context.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/optim.h"
#include "vulkan/vulkan_test_util.h"

namespace tessera::test {
namespace {

constexpr DType kLibraryDtypes[] = {DType::f32, DType::f16};

double lib_tolerance(DType dt) { return dt == DType::f16 ? 4e-3 : 2e-5; }

Array lib_indices(const std::vector<int64_t>& v, const Shape& shape, DType dt) {
  return Array::from_vector(v, shape).astype(dt);
}

// Integer values 0..levels-1 (ties everywhere), as `dt`.
Array lib_levels(const Shape& shape, uint64_t seed, int levels, DType dt) {
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((i * 7 + seed * 13 + i / 5) % static_cast<size_t>(levels));
  return Array::from_vector(v, shape).astype(dt);
}

TEST(VulkanLibraryOps, SoftmaxFamilyOverRaggedLanes) {
  auto f = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::softmax(a[0]),          ops::log_softmax(a[1]),
                               ops::softmax(a[2], 1),       ops::log_softmax(a[2], 0),
                               ops::softmax(a[3], 0),       ops::logsumexp(a[2], {1, 2}),
                               ops::logsumexp(a[1], {1}, true), ops::logsumexp(a[0], {}),
                               ops::softmax(ops::transpose(a[0], 0, 1), 1)};
  };
  for (DType dt : kLibraryDtypes) {
    SCOPED_TRACE(dtype_name(dt));
    const ir::Graph g = trace(f, {{dt, {37, 5}}, {dt, {3, 1000}}, {dt, {2, 300, 3}}, {dt, {7}}});
    expect_vulkan_matches(g,
                          {random_array({37, 5}, 1, -6, 6, dt), random_array({3, 1000}, 2, -6, 6, dt),
                           random_array({2, 300, 3}, 3, -6, 6, dt), random_array({7}, 4, -6, 6, dt)},
                          lib_tolerance(dt));
  }
}

TEST(VulkanLibraryOps, SoftmaxFamilyKeepsTheReferencesInfinitiesAndNaN) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  // Masked entries, a fully masked row, a NaN, a +inf.
  const Array x = Array::from_vector<double>({0.5, -inf, 1.5, -inf, 2, 0,  //
                                              -inf, -inf, -inf, -inf, -inf, -inf,  //
                                              1, 2, nan, 3, 4, 5,  //
                                              1, inf, 2, 3, -inf, 0},
                                             {4, 6})
                      .astype(DType::f32);
  auto f = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::softmax(a[0]), ops::log_softmax(a[0]), ops::logsumexp(a[0], {1})};
  };
  expect_vulkan_matches(trace(f, {{DType::f32, {4, 6}}}), {x}, 1e-6);
}

TEST(VulkanLibraryOps, ArgExtremaTakeTheFirstOfTiesAndNaN) {
  auto f = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::argmax(a[0], 1), ops::argmin(a[0], 0, true), ops::argmax(a[1], 1),
                               ops::argmin(a[1], 2), ops::argmax(a[2], 0)};
  };
  for (DType dt : kLibraryDtypes) {
    SCOPED_TRACE(dtype_name(dt));
    Array with_nan = lib_levels({6, 7, 3}, 2, 5, DType::f64);
    with_nan.data<double>()[10] = std::numeric_limits<double>::quiet_NaN();
    with_nan.data<double>()[31] = std::numeric_limits<double>::quiet_NaN();
    const ir::Graph g = trace(f, {{dt, {5, 300}}, {dt, {6, 7, 3}}, {dt, {1}}});
    expect_vulkan_matches(g, {lib_levels({5, 300}, 1, 4, dt), with_nan.astype(dt), lib_levels({1}, 3, 2, dt)}, 0);
  }
}

TEST(VulkanLibraryOps, RunningSumsOverShortAndChunkedLanes) {
  auto f = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::cumsum(a[0], 1), ops::cumsum(a[0], 0, true), ops::cumsum(a[1], 1, true),
                               ops::cumsum(a[1], 2), ops::cumsum(ops::transpose(a[2], 0, 1), 1)};
  };
  for (DType dt : kLibraryDtypes) {
    SCOPED_TRACE(dtype_name(dt));
    // Lanes of 1000 and 777 run in chunks, one workgroup each; lanes of 3 to 13 share workgroups.
    const ir::Graph g = trace(f, {{dt, {3, 1000}}, {dt, {4, 13, 5}}, {dt, {777, 2}}});
    expect_vulkan_matches(g,
                          {random_array({3, 1000}, 30, -1, 1, dt), random_array({4, 13, 5}, 31, -1, 1, dt),
                           random_array({777, 2}, 32, -1, 1, dt)},
                          dt == DType::f16 ? 2e-2 : 5e-5);
  }
}

TEST(VulkanLibraryOps, PicksReadOperandsWhereTheyLie) {
  for (DType dt : kLibraryDtypes) {
    for (DType it : {DType::i64, DType::i32}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " with " + dtype_name(it) + " indices");
      auto f = [](const std::vector<Tensor>& a) {
        const Tensor xt = ops::transpose(a[0], 0, 1);  // [9, 6], strided
        const Tensor column = ops::broadcast_to(ops::reshape(a[2], {1, 5}), {9, 5});
        return std::vector<Tensor>{ops::gather(xt, 1, a[1]),       ops::gather(xt, 1, column),
                                   ops::index_select(a[0], 1, a[2]), ops::index_select(xt, 0, a[2]),
                                   ops::embedding(xt, a[3]),        ops::embedding(a[0], ops::slice(a[3], 1, 1, 3))};
      };
      const ir::Graph g = trace(f, {{dt, {6, 9}}, {it, {9, 4}}, {it, {5}}, {it, {2, 3}}});
      std::vector<int64_t> picks;
      for (int64_t i = 0; i < 36; ++i) picks.push_back((i * 5 + 3) % 6);
      expect_vulkan_matches(g,
                            {random_array({6, 9}, 5, -3, 3, dt), lib_indices(picks, {9, 4}, it),
                             lib_indices({4, 0, 4, 2, 5}, {5}, it), lib_indices({1, 5, 0, 3, 3, 2}, {2, 3}, it)},
                            0);
    }
  }
}

TEST(VulkanLibraryOps, OneHotWritesOnesOfAnyDtype) {
  auto f = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::one_hot(a[0], 7), ops::one_hot(a[0], 5, DType::f16),
                               ops::one_hot(a[0], 6, DType::i32), ops::one_hot(a[0], 4, DType::i64)};
  };
  const ir::Graph g = trace(f, {{DType::i64, {3, 5}}});
  expect_vulkan_matches(g, {lib_indices({0, 1, 2, 3, 3, 2, 1, 0, 0, 0, 1, 1, 2, 2, 3}, {3, 5}, DType::i64)}, 0);
}

TEST(VulkanLibraryOps, ScattersSumInIndexOrderByLineAndByTarget) {
  for (DType dt : kLibraryDtypes) {
    SCOPED_TRACE(dtype_name(dt));
    auto f = [](const std::vector<Tensor>& a) {
      // By line: an index smaller than x off the axis, src larger than the index.
      const Tensor by_line = ops::scatter_add(a[0], 1, a[1], a[2]);
      // By target: one index vector broadcast over the other axes (as the convolution folds).
      const Tensor spread = ops::broadcast_to(ops::reshape(a[4], {1, 8, 1}), {5, 8, 3});
      const Tensor by_target = ops::scatter_add(ops::transpose(a[3], 0, 2), 1, spread, a[5]);
      return std::vector<Tensor>{by_line, by_target};
    };
    const ir::Graph g = trace(f, {{dt, {4, 7}}, {DType::i64, {3, 5}}, {dt, {4, 6}}, {dt, {3, 6, 5}},
                                  {DType::i32, {8}}, {dt, {5, 8, 3}}});
    std::vector<int64_t> lines;
    for (int64_t i = 0; i < 15; ++i) lines.push_back((i * 4 + 1) % 7);
    expect_vulkan_matches(g,
                          {random_array({4, 7}, 6, -1, 1, dt), lib_indices(lines, {3, 5}, DType::i64),
                           random_array({4, 6}, 7, -1, 1, dt), random_array({3, 6, 5}, 8, -1, 1, dt),
                           lib_indices({5, 0, 5, 2, 0, 5, 1, 5}, {8}, DType::i32), random_array({5, 8, 3}, 9, -1, 1, dt)},
                          lib_tolerance(dt));
  }
}

Tensor lib_embedding_grad(const Tensor& g, const Tensor& indices, int64_t rows) {
  return ir::make_node1("embedding_grad", {g, indices}, ir::Attrs{{"num_embeddings", rows}});
}

TEST(VulkanLibraryOps, EmbeddingGradientsAddRepeatedRowsDeterministically) {
  // 3000 rows onto 4 targets: more hits a target than the shader's shared list holds between flushes.
  auto f = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{lib_embedding_grad(a[0], a[1], 4), lib_embedding_grad(a[2], a[3], 9)};
  };
  for (DType dt : kLibraryDtypes) {
    SCOPED_TRACE(dtype_name(dt));
    const ir::Graph g = trace(f, {{dt, {3000, 5}}, {DType::i64, {3000}}, {dt, {2, 3, 6}}, {DType::i32, {2, 3}}});
    std::vector<int64_t> rows;
    for (int64_t i = 0; i < 3000; ++i) rows.push_back(i % 7 == 0 ? 3 : i % 3);
    const std::vector<Array> in = {random_array({3000, 5}, 10, -1, 1, dt), lib_indices(rows, {3000}, DType::i64),
                                   random_array({2, 3, 6}, 11, -1, 1, dt),
                                   lib_indices({8, 0, 8, 2, 8, 0}, {2, 3}, DType::i32)};
    // Sums of ~1000 terms in f32 (the reference adds in f64; f16 rounds once at the end on both).
    const std::vector<Array> first = expect_vulkan_matches(g, in, dt == DType::f16 ? 4e-3 : 1e-4);
    const std::vector<Array> second = vulkan_under_test().compile(g)->run(in);
    for (size_t i = 0; i < first.size(); ++i) {
      EXPECT_TRUE(same_bytes(first[i], second[i].to(host_device()))) << "output " << i << " differs between runs";
    }
  }
}

TEST(VulkanLibraryOps, PadAndSliceBackwardPlaceTheirSource) {
  for (DType dt : kLibraryDtypes) {
    SCOPED_TRACE(dtype_name(dt));
    auto f = [](const std::vector<Tensor>& a) {
      const Tensor xt = ops::transpose(a[0], 0, 1);  // [5, 4], strided
      return std::vector<Tensor>{ops::pad(xt, {{1, 2}, {0, 3}}, ops::PadMode::Constant, 2.5),
                                 ops::pad(a[0], {{2, 1}, {1, 3}}, ops::PadMode::Reflect),
                                 ops::slice_backward(a[1], 1, 1, 2, 8), ops::slice_backward(a[1], 0, 6, -2, 7),
                                 ops::slice_backward(ops::transpose(a[1], 0, 1), 0, 9, -3, 10)};
    };
    const ir::Graph g = trace(f, {{dt, {4, 5}}, {dt, {3, 4}}});
    expect_vulkan_matches(g, {random_array({4, 5}, 12, -2, 2, dt), random_array({3, 4}, 13, -2, 2, dt)}, 0);
  }
}

// Adam on 20 tensors (two dispatches of the grouped update), plain, with L2 weight decay and as AdamW.
TEST(VulkanLibraryOps, AdamUpdatesEveryTensorOfAGroup) {
  struct Case {
    const char* what;
    ops::AdamUpdateOptions options;
    DType dtype;
    double step;
  };
  ops::AdamUpdateOptions l2;
  l2.weight_decay = 0.05;
  ops::AdamUpdateOptions adamw;
  adamw.weight_decay = 0.01;
  adamw.decoupled = true;
  ops::AdamUpdateOptions no_momentum;
  no_momentum.beta1 = 0.0;
  const Case cases[] = {{"adam, step 1", {}, DType::f32, 1},     {"adam, step 7", {}, DType::f32, 7},
                        {"l2 decay", l2, DType::f32, 3},         {"adamw", adamw, DType::f32, 1000},
                        {"beta1 0", no_momentum, DType::f32, 2}, {"adam f16", {}, DType::f16, 4}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const int tensors = c.dtype == DType::f16 ? 3 : 20;
    std::vector<ir::TensorType> types;
    std::vector<Array> in;
    for (int k = 0; k < tensors; ++k) {
      const Shape shape = {k % 4 + 1, 37 + 11 * k};
      for (int part = 0; part < 4; ++part) {
        types.push_back({c.dtype, shape});
        const double lo = part == 3 ? 0.0 : -1.0;  // v is non-negative
        in.push_back(random_array(shape, static_cast<uint64_t>(100 * k + part), lo, 1.0, c.dtype));
      }
    }
    types.push_back({DType::f64, {}});
    types.push_back({DType::f64, {}});
    in.push_back(Array::scalar(2e-3, DType::f64));
    in.push_back(Array::scalar(c.step, DType::f64));
    const ops::AdamUpdateOptions options = c.options;
    auto f = [tensors, options](const std::vector<Tensor>& a) {
      std::vector<Tensor> out;
      for (int k = 0; k < tensors; ++k) {
        for (const Tensor& t : ops::adam_update(a[4 * k], a[4 * k + 1], a[4 * k + 2], a[4 * k + 3], a[4 * tensors],
                                                a[4 * tensors + 1], options)) {
          out.push_back(t);
        }
      }
      return out;
    };
    const ir::Graph g = trace(f, types);
    expect_vulkan_matches(g, in, c.dtype == DType::f16 ? 4e-3 : 2e-6);
    const auto exe = vulkan_under_test().compile(g);
    exe->run(in);
    const auto* vk = dynamic_cast<const backends::vulkan::VulkanExecutable*>(exe.get());
    ASSERT_NE(vk, nullptr);
    // Up to 16 tensors a dispatch, fewer where the device has fewer storage-buffer slots per stage
    // (lavapipe: 32, so 4 tensors of 7 buffers beside lr, step and the status word).
    const VkPhysicalDeviceLimits& limits = backends::vulkan::vulkan_context()->properties().limits;
    const int64_t slots = std::min<int64_t>(limits.maxPerStageDescriptorStorageBuffers, limits.maxPerStageResources);
    const int64_t per_dispatch = std::min<int64_t>(16, (slots - 3) / 7);
    EXPECT_EQ(vk->last_run().dispatches, (tensors + per_dispatch - 1) / per_dispatch) << vk->program().dump();
  }
}

TEST(VulkanLibraryOps, EmptyResultsDispatchNothing) {
  auto f = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::softmax(a[0]), ops::argmax(a[1], 0), ops::cumsum(a[0], 1),
                               ops::pad(a[0], {{1, 1}, {0, 0}}), ops::logsumexp(a[1], {0})};
  };
  const ir::Graph g = trace(f, {{DType::f32, {4, 0}}, {DType::f32, {3, 0}}});
  expect_vulkan_matches(g, {Array::empty(DType::f32, {4, 0}), Array::empty(DType::f32, {3, 0})}, 0);
}

TEST(VulkanLibraryOps, InvalidDataIsReportedByTheRunThatMetIt) {
  auto f = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{ops::gather(a[0], 1, a[1])}; };
  const auto exe = vulkan_under_test().compile(trace(f, {{DType::f32, {2, 3}}, {DType::i64, {2, 1}}}));
  const Array x = Array::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_TESSERA_ERROR(exe->run({x, Array::from_vector<int64_t>({7, 0}, {2, 1})}), "out of range");
  EXPECT_TESSERA_ERROR(exe->run({x, Array::from_vector<int64_t>({0, -1}, {2, 1})}), "out of range");
  // The word was cleared with the report.
  const auto good = exe->run({x, Array::from_vector<int64_t>({2, 1}, {2, 1})});
  EXPECT_EQ(good[0].to(host_device()).to_vector<float>(), (std::vector<float>{3, 5}));

  auto adam = [](const std::vector<Tensor>& a) { return ops::adam_update(a[0], a[1], a[2], a[3], a[4], a[5]); };
  const ir::TensorType p{DType::f32, {5}}, scalar{DType::f64, {}};
  const auto update = vulkan_under_test().compile(trace(adam, {p, p, p, p, scalar, scalar}));
  std::vector<Array> in;
  for (int i = 0; i < 4; ++i) in.push_back(random_array({5}, static_cast<uint64_t>(20 + i), 0, 1, DType::f32));
  in.push_back(Array::scalar(1e-3, DType::f64));
  in.push_back(Array::scalar(0.5, DType::f64));
  EXPECT_TESSERA_ERROR(update->run(in), "whole number");
}

}  // namespace
}  // namespace tessera::test
