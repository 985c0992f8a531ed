// End-to-end reductions: sum/mean/max/min/prod over various axes, keepdims, dtypes, fused with
// the elementwise chain before them and the epilogue after, against the reference backend.
#include <limits>

#include "codegen_test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

using ReduceFn = std::function<Tensor(const Tensor&, const ops::Axes&, bool)>;

std::vector<std::pair<std::string, ReduceFn>> reductions() {
  return {
      {"sum", [](const Tensor& x, const ops::Axes& a, bool k) { return ops::sum(x, a, k); }},
      {"mean", [](const Tensor& x, const ops::Axes& a, bool k) { return ops::mean(x, a, k); }},
      {"max", [](const Tensor& x, const ops::Axes& a, bool k) { return ops::max(x, a, k); }},
      {"min", [](const Tensor& x, const ops::Axes& a, bool k) { return ops::min(x, a, k); }},
      {"prod", [](const Tensor& x, const ops::Axes& a, bool k) { return ops::prod(x, a, k); }},
  };
}

}  // namespace

TEST(JitReduce, EveryReductionOverEveryAxisSet) {
  const Shape shape = {3, 4, 5};
  const std::vector<ops::Axes> axis_sets = {{}, {0}, {1}, {2}, {0, 1}, {0, 2}, {1, 2}, {-1}};
  uint64_t seed = 100;
  // Every (reduction, axes, keepdims) of one dtype in one graph: one compiler run per dtype.
  for (DType dt : {DType::f32, DType::f64, DType::i32, DType::i64, DType::u8, DType::i8, DType::boolean}) {
    SCOPED_TRACE(dtype_name(dt));
    const Array x = random_of(dt, shape, seed++, is_floating(dt) ? -2 : -9, is_floating(dt) ? 2 : 9);
    size_t count = 0;
    auto clusters = check_against_reference(
        [&](const std::vector<Tensor>& in) {
          std::vector<Tensor> outs;
          for (const auto& [name, fn] : reductions()) {
            if (name == "mean" && !is_floating(dt)) continue;
            for (const ops::Axes& axes : axis_sets) {
              for (bool keepdims : {false, true}) outs.push_back(fn(in[0], axes, keepdims));
            }
          }
          count = outs.size();
          return outs;
        },
        {x}, 1e-6, 1e-12);
    EXPECT_EQ(clusters.size(), count);
  }
}

TEST(JitReduce, SumsOfManyFloatsStayAccurate) {
  // 1M values with a large common offset: a naive float accumulator drifts by ~1e-3 relative.
  const Array x = random_of(DType::f32, {1 << 20}, 5, 1000, 1001);
  check_against_reference(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{ops::sum(in[0]), ops::mean(in[0])};
      },
      {x}, 1e-7);
}

TEST(JitReduce, ColumnAndRowReductionsOnLargeInputs) {
  // Columns (the inner axis kept: tiled accumulators) and rows (the inner axis reduced: SIMD), big
  // enough to be split between threads.
  const Array x = random_of(DType::f32, {513, 777}, 6);
  check_against_reference(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{ops::sum(in[0], {0}), ops::max(in[0], {0}), ops::sum(in[0], {1}),
                                   ops::min(in[0] * 2.0, {1}, true)};
      },
      {x}, 1e-6, 1e-9);
}

TEST(JitReduce, MaxAndMinPropagateNan) {
  std::vector<double> v(40, 1.0);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 7) - 3.0;
  v[5] = std::nan("");
  v[33] = std::numeric_limits<double>::infinity();
  const Array x = Array::from_vector(v, {4, 10}).astype(DType::f32);
  check_against_reference(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{ops::max(in[0], {1}), ops::min(in[0], {0}), ops::max(in[0]), ops::min(in[0], {1})};
      },
      {x});
}

TEST(JitReduce, EmptyReductionsGiveIdentities) {
  const Array x = random_of(DType::f32, {3, 0, 4}, 7);
  check_against_reference(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{ops::sum(in[0], {1}), ops::prod(in[0], {1}), ops::mean(in[0], {1}),
                                   ops::sum(in[0], {0, 2})};
      },
      {x});
  const Array i = random_of(DType::i32, {0, 5}, 8);
  check_against_reference(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{ops::sum(in[0], {0}), ops::prod(in[0])};
      },
      {i});
}

TEST(JitReduce, FusedChainsBeforeAndAfter) {
  const Array x = random_of(DType::f32, {8, 16, 12}, 9), b = random_of(DType::f32, {12}, 10);
  auto clusters = check_against_reference(
      [](const std::vector<Tensor>& in) {
        const Tensor e = ops::exp(in[0] * 0.5 - in[1]);
        return std::vector<Tensor>{ops::log(ops::sum(e, {2})) + 1.0, e};
      },
      {x, b});
  // One kernel computes e (a full-shape output) and the reduction with its epilogue.
  ASSERT_EQ(clusters.size(), 1u);
  EXPECT_EQ(clusters[0].outputs.size(), 2u);
}

TEST(JitReduce, MeanOverPermutedAndBroadcastInputs) {
  const Array x = random_of(DType::f64, {6, 5}, 11), y = random_of(DType::f64, {5, 1}, 12);
  check_against_reference(
      [](const std::vector<Tensor>& in) {
        const Tensor t = ops::permute(in[0], {1, 0});  // [5, 6]
        return std::vector<Tensor>{ops::mean(t * in[1], {1}, true), ops::sum(t + in[1], {0})};
      },
      {x, y});
}

TEST(JitReduce, IntegerSumsAndProductsWrap) {
  const Array x = random_of(DType::i32, {4, 40}, 13, 1000000, 2000000);
  check_against_reference(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{ops::prod(in[0], {1}), ops::sum(in[0] * in[0], {0}),
                                   ops::sum(ops::cast(in[0], DType::i8), {1})};
      },
      {x});
}

TEST(JitReduce, BoolReductionsCountAndCombine) {
  const Array x = random_of(DType::boolean, {7, 9}, 14);
  check_against_reference(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{ops::sum(in[0], {1}), ops::prod(in[0], {0}), ops::max(in[0], {1}),
                                   ops::min(in[0], {0}, true)};
      },
      {x});
}
