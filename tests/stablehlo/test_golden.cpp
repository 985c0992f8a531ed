// Golden text of single-op lowerings: the exact StableHLO each rule writes for a small graph, checked
// line by line against what the StableHLO pretty printer (and jax's .as_text()) would print.
#include "tessera/io/stablehlo/checker.h"
#include "tessera/io/stablehlo/export.h"
#include "tessera/io/stablehlo/text.h"
#include "test_util.h"

using namespace tessera;
namespace shlo = tessera::io::stablehlo;

namespace {

struct Built {
  shlo::Module module;
  std::string body;  // the lines of @main between its header and the closing brace
};

// Exports fn traced on inputs named x0, x1, ... of the given types, checks it, and returns the body.
Built build(const MultiFn& fn, const std::vector<ir::TensorType>& types, shlo::ExportOptions options = {}) {
  std::vector<std::string> names;
  for (size_t i = 0; i < types.size(); ++i) names.push_back("x" + std::to_string(i));
  const ir::Graph traced = trace(fn, types, names);
  Built b;
  b.module = shlo::export_graph(ir::Graph::build(traced.inputs(), traced.outputs(), "g"), options);
  shlo::check_exported(b.module);
  const std::string& t = b.module.text;
  const size_t start = t.find('\n', t.find("func.func")) + 1;
  const size_t end = t.rfind("  }\n}");
  b.body = t.substr(start, end - start);
  return b;
}

ir::TensorType f32(const Shape& s) {
  return {DType::f32, s};
}

}  // namespace

TEST(StablehloGolden, ModuleFrame) {
  const Built b =
      build([](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::exp(a[0])}; }, {f32({2, 3})});
  EXPECT_EQ(b.module.text, "// StableHLO exported by Tessera " TESSERA_VERSION
                           " from graph 'g'.\n"
                           "// %arg0: input 'x0' f32[2, 3]\n"
                           "module @g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n"
                           "  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>) {\n"
                           "    %0 = stablehlo.exponential %arg0 : tensor<2x3xf32>\n"
                           "    return %0 : tensor<2x3xf32>\n"
                           "  }\n"
                           "}\n");
}

TEST(StablehloGolden, BroadcastingAddAndPromotion) {
  EXPECT_EQ(
      build([](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {a[0] + a[1]}; }, {f32({2, 3}), f32({3})})
          .body,
      "    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>\n"
      "    %1 = stablehlo.add %arg0, %0 : tensor<2x3xf32>\n"
      "    return %1 : tensor<2x3xf32>\n");
  EXPECT_EQ(build([](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::mul(a[0], a[1])}; },
                  {{DType::i32, {2}}, f32({2})})
                .body,
            "    %0 = stablehlo.convert %arg0 : (tensor<2xi32>) -> tensor<2xf32>\n"
            "    %1 = stablehlo.multiply %0, %arg1 : tensor<2xf32>\n"
            "    return %1 : tensor<2xf32>\n");
  // Booleans: + is or.
  EXPECT_EQ(build([](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::add(a[0], a[1])}; },
                  {{DType::boolean, {2}}, {DType::boolean, {2}}})
                .body,
            "    %0 = stablehlo.or %arg0, %arg1 : tensor<2xi1>\n"
            "    return %0 : tensor<2xi1>\n");
}

TEST(StablehloGolden, ComparisonsAndWhere) {
  EXPECT_EQ(build([](const std::vector<Tensor>& a)
                      -> std::vector<Tensor> { return {ops::where(ops::gt(a[0], a[1]), a[0], ops::zeros_like(a[0]))}; },
                  {f32({3}), f32({3})})
                .body,
            "    %0 = stablehlo.compare  GT, %arg0, %arg1,  FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>\n"
            "    %1 = stablehlo.constant dense<0.0> : tensor<3xf32>\n"
            "    %2 = stablehlo.select %0, %arg0, %1 : tensor<3xi1>, tensor<3xf32>\n"
            "    return %2 : tensor<3xf32>\n");
}

TEST(StablehloGolden, ReduceWithKeepdims) {
  EXPECT_EQ(build([](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::sum(a[0], {1}, true)}; },
                  {f32({2, 3})})
                .body,
            "    %0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
            "    %1 = stablehlo.reduce(%arg0 init: %0) applies stablehlo.add across dimensions = [1] : "
            "(tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n"
            "    %2 = stablehlo.reshape %1 : (tensor<2xf32>) -> tensor<2x1xf32>\n"
            "    return %2 : tensor<2x1xf32>\n");
  // max starts from -inf, written as its bit pattern.
  EXPECT_EQ(
      build([](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::max(a[0])}; }, {f32({4})}).body,
      "    %0 = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "    %1 = stablehlo.reduce(%arg0 init: %0) applies stablehlo.maximum across dimensions = [0] : "
      "(tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"
      "    return %1 : tensor<f32>\n");
}

TEST(StablehloGolden, ArgmaxIsAVariadicReduceWithABody) {
  EXPECT_EQ(
      build([](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::argmax(a[0], 1)}; }, {f32({2, 3})})
          .body,
      "    %0 = stablehlo.iota dim = 1 : tensor<2x3xi64>\n"
      "    %1 = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "    %2 = stablehlo.constant dense<0> : tensor<i64>\n"
      "    %3:2 = \"stablehlo.reduce\"(%arg0, %0, %1, %2) <{dimensions = array<i64: 1>}> ({\n"
      "    ^bb0(%4: tensor<f32>, %5: tensor<i64>, %6: tensor<f32>, %7: tensor<i64>):\n"
      "      %8 = stablehlo.compare  GT, %4, %6,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "      %9 = stablehlo.compare  EQ, %4, %6,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "      %10 = stablehlo.compare  NE, %4, %4,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "      %11 = stablehlo.compare  NE, %6, %6,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "      %12 = stablehlo.not %11 : tensor<i1>\n"
      "      %13 = stablehlo.and %10, %12 : tensor<i1>\n"
      "      %14 = stablehlo.or %8, %13 : tensor<i1>\n"
      "      %15 = stablehlo.and %10, %11 : tensor<i1>\n"
      "      %16 = stablehlo.or %9, %15 : tensor<i1>\n"
      "      %17 = stablehlo.compare  LT, %5, %7,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
      "      %18 = stablehlo.and %16, %17 : tensor<i1>\n"
      "      %19 = stablehlo.or %14, %18 : tensor<i1>\n"
      "      %20 = stablehlo.select %19, %4, %6 : tensor<i1>, tensor<f32>\n"
      "      %21 = stablehlo.select %19, %5, %7 : tensor<i1>, tensor<i64>\n"
      "      stablehlo.return %20, %21 : tensor<f32>, tensor<i64>\n"
      "    }) : (tensor<2x3xf32>, tensor<2x3xi64>, tensor<f32>, tensor<i64>) -> (tensor<2xf32>, tensor<2xi64>)\n"
      "    return %3#1 : tensor<2xi64>\n");
}

TEST(StablehloGolden, MatmulIsDotGeneral) {
  auto mm = [](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::matmul(a[0], a[1])}; };
  EXPECT_EQ(build(mm, {f32({2, 3}), f32({3, 4})}).body,
            "    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : "
            "(tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>\n"
            "    return %0 : tensor<2x4xf32>\n");
  EXPECT_EQ(build(mm, {f32({5, 2, 3}), f32({5, 3, 4})}, {.precision = shlo::Precision::Highest}).body,
            "    %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [1], "
            "precision = [HIGHEST, HIGHEST] : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>\n"
            "    return %0 : tensor<5x2x4xf32>\n");
}

TEST(StablehloGolden, ConvolutionWithGroupsAndPrecision) {
  EXPECT_EQ(build(
                [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                  return {ops::conv2d(a[0], a[1], {}, {2, 1}, {1, 0}, {1, 2}, 2)};
                },
                {f32({1, 4, 5, 6}), f32({2, 2, 3, 2})}, {.precision = shlo::Precision::Highest})
                .body,
            "    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], "
            "window = {stride = [2, 1], pad = [[1, 1], [0, 0]], lhs_dilate = [1, 1], rhs_dilate = [1, 2]} "
            "{batch_group_count = 1 : i64, feature_group_count = 2 : i64, precision_config = "
            "[#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]} : (tensor<1x4x5x6xf32>, "
            "tensor<2x2x3x2xf32>) -> tensor<1x2x3x4xf32>\n"
            "    return %0 : tensor<1x2x3x4xf32>\n");
}

TEST(StablehloGolden, MaxPoolIsAReduceWindow) {
  EXPECT_EQ(
      build(
          [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
            return {ops::max_pool2d(a[0], {2, 2}, {2, 2}, {1, 0})};
          },
          {f32({1, 1, 4, 4})})
          .body,
      "    %0 = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "    %1 = \"stablehlo.reduce_window\"(%arg0, %0) <{padding = dense<[[0, 0], [0, 0], [1, 1], [0, 0]]> : "
      "tensor<4x2xi64>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({\n"
      "    ^bb0(%2: tensor<f32>, %3: tensor<f32>):\n"
      "      %4 = stablehlo.maximum %2, %3 : tensor<f32>\n"
      "      stablehlo.return %4 : tensor<f32>\n"
      "    }) : (tensor<1x1x4x4xf32>, tensor<f32>) -> tensor<1x1x3x2xf32>\n"
      "    return %1 : tensor<1x1x3x2xf32>\n");
}

TEST(StablehloGolden, SlicesPadsAndConcatenation) {
  // A negative step reverses, then slices upward: x[4:0:-2] of 6 elements is x[4], x[2].
  EXPECT_EQ(build([](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::slice(a[0], 0, 4, 0, -2)}; },
                  {f32({6})})
                .body,
            "    %0 = stablehlo.reverse %arg0, dims = [0] : tensor<6xf32>\n"
            "    %1 = stablehlo.slice %0 [1:4:2] : (tensor<6xf32>) -> tensor<2xf32>\n"
            "    return %1 : tensor<2xf32>\n");
  // slice_backward places g at 1, 4, 7 of 9: an interior pad.
  EXPECT_EQ(
      build([](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::slice_backward(a[0], 0, 1, 3, 9)}; },
            {f32({3})})
          .body,
      "    %0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "    %1 = stablehlo.pad %arg0, %0, low = [1], high = [1], interior = [2] : (tensor<3xf32>, tensor<f32>) "
      "-> tensor<9xf32>\n"
      "    return %1 : tensor<9xf32>\n");
  EXPECT_EQ(
      build(
          [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
            return {ops::concat({a[0], a[1]}, 1)};
          },
          {f32({2, 1}), {DType::i32, {2, 2}}})
          .body,
      "    %0 = stablehlo.convert %arg1 : (tensor<2x2xi32>) -> tensor<2x2xf32>\n"
      "    %1 = stablehlo.concatenate %arg0, %0, dim = 1 : (tensor<2x1xf32>, tensor<2x2xf32>) -> tensor<2x3xf32>\n"
      "    return %1 : tensor<2x3xf32>\n");
}

TEST(StablehloGolden, GatherAndScatterUseIndexTuples) {
  EXPECT_EQ(
      build([](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::gather(a[0], 1, a[1])}; },
            {f32({2, 3}), {DType::i64, {2, 2}}})
          .body,
      "    %0 = stablehlo.reshape %arg1 : (tensor<2x2xi64>) -> tensor<2x2x1xi64>\n"
      "    %1 = stablehlo.iota dim = 0 : tensor<2x2x1xi64>\n"
      "    %2 = stablehlo.concatenate %1, %0, dim = 2 : (tensor<2x2x1xi64>, tensor<2x2x1xi64>) -> tensor<2x2x2xi64>\n"
      "    %3 = \"stablehlo.gather\"(%arg0, %2) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = "
      "[0, 1], start_index_map = [0, 1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = "
      "array<i64: 1, 1>}> : (tensor<2x3xf32>, tensor<2x2x2xi64>) -> tensor<2x2xf32>\n"
      "    return %3 : tensor<2x2xf32>\n");
  const Built s =
      build([](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::scatter_add(a[0], 0, a[1], a[2])}; },
            {f32({3}), {DType::i64, {2}}, f32({2})});
  EXPECT_EQ(
      s.body,
      "    %0 = stablehlo.reshape %arg1 : (tensor<2xi64>) -> tensor<2x1xi64>\n"
      "    %1 = \"stablehlo.scatter\"(%arg0, %0, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = "
      "#stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, "
      "unique_indices = false}> ({\n"
      "    ^bb0(%2: tensor<f32>, %3: tensor<f32>):\n"
      "      %4 = stablehlo.add %2, %3 : tensor<f32>\n"
      "      stablehlo.return %4 : tensor<f32>\n"
      "    }) : (tensor<3xf32>, tensor<2x1xi64>, tensor<2xf32>) -> tensor<3xf32>\n"
      "    return %1 : tensor<3xf32>\n");
}

TEST(StablehloGolden, FloatToIntegerCastSaturates) {
  EXPECT_EQ(build([](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::cast(a[0], DType::i8)}; },
                  {f32({2})})
                .body,
            "    %0 = stablehlo.constant dense<-128.0> : tensor<2xf32>\n"
            "    %1 = stablehlo.constant dense<127.0> : tensor<2xf32>\n"
            "    %2 = stablehlo.compare  LE, %arg0, %0,  FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>\n"
            "    %3 = stablehlo.compare  GE, %arg0, %1,  FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>\n"
            "    %4 = stablehlo.not %2 : tensor<2xi1>\n"
            "    %5 = stablehlo.not %3 : tensor<2xi1>\n"
            "    %6 = stablehlo.and %4, %5 : tensor<2xi1>\n"
            "    %7 = stablehlo.compare  EQ, %arg0, %arg0,  FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>\n"
            "    %8 = stablehlo.and %6, %7 : tensor<2xi1>\n"
            "    %9 = stablehlo.constant dense<0.0> : tensor<2xf32>\n"
            "    %10 = stablehlo.select %8, %arg0, %9 : tensor<2xi1>, tensor<2xf32>\n"
            "    %11 = stablehlo.convert %10 : (tensor<2xf32>) -> tensor<2xi8>\n"
            "    %12 = stablehlo.constant dense<-128> : tensor<2xi8>\n"
            "    %13 = stablehlo.constant dense<127> : tensor<2xi8>\n"
            "    %14 = stablehlo.select %2, %12, %11 : tensor<2xi1>, tensor<2xi8>\n"
            "    %15 = stablehlo.select %3, %13, %14 : tensor<2xi1>, tensor<2xi8>\n"
            "    return %15 : tensor<2xi8>\n");
}

TEST(StablehloGolden, SoftmaxGoesThroughItsDecomposition) {
  const Built b = build([](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {ops::softmax(a[0], -1)}; },
                        {f32({2, 3})});
  EXPECT_EQ(b.module.lowered_ops.at("softmax"), "decomposed");
  EXPECT_EQ(b.body,
            "    %0 = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
            "    %1 = stablehlo.reduce(%arg0 init: %0) applies stablehlo.maximum across dimensions = [1] : "
            "(tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n"
            "    %2 = stablehlo.reshape %1 : (tensor<2xf32>) -> tensor<2x1xf32>\n"
            "    %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1] : (tensor<2x1xf32>) -> tensor<2x3xf32>\n"
            "    %4 = stablehlo.subtract %arg0, %3 : tensor<2x3xf32>\n"
            "    %5 = stablehlo.exponential %4 : tensor<2x3xf32>\n"
            "    %6 = stablehlo.constant dense<0.0> : tensor<f32>\n"
            "    %7 = stablehlo.reduce(%5 init: %6) applies stablehlo.add across dimensions = [1] : "
            "(tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n"
            "    %8 = stablehlo.reshape %7 : (tensor<2xf32>) -> tensor<2x1xf32>\n"
            "    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1] : (tensor<2x1xf32>) -> tensor<2x3xf32>\n"
            "    %10 = stablehlo.divide %5, %9 : tensor<2x3xf32>\n"
            "    return %10 : tensor<2x3xf32>\n");
}

TEST(StablehloGolden, ConstantsInlineOrBecomeArguments) {
  const Built b = build(
      [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
        const Tensor small = Tensor::from_vector<float>({0.5f, -2.0f, 1e-5f}, {3});
        const Tensor big = Tensor::from_array(Array::full(DType::f32, {4, 300}, 1.0).astype(DType::f32), "w");
        const Tensor table = Tensor::from_vector<float>(std::vector<float>(1200, 0.0f), {1200});
        return {a[0] + small, ops::matmul(a[1], big), table};
      },
      {f32({3}), f32({2, 4})});
  // The splat stays inline whatever its size; the 1200-element splat too.
  EXPECT_EQ(b.module.arguments.size(), 2u);
  EXPECT_NE(b.body.find("stablehlo.constant dense<[0.5, -2.0, 1.0e-05]> : tensor<3xf32>"), std::string::npos) << b.body;
  EXPECT_NE(b.body.find("stablehlo.constant dense<1.0> : tensor<4x300xf32>"), std::string::npos) << b.body;

  std::vector<float> ramp(1500);
  for (size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<float>(i);
  const Built lifted = build(
      [ramp](const std::vector<Tensor>& a) -> std::vector<Tensor> {
        return {a[0] * Tensor::from_vector<float>(ramp, {1500}, "ramp")};
      },
      {f32({1500})});
  ASSERT_EQ(lifted.module.arguments.size(), 2u);
  EXPECT_EQ(lifted.module.arguments[1].kind, shlo::Argument::Kind::Constant);
  EXPECT_EQ(lifted.module.arguments[1].name, "ramp");
  EXPECT_EQ(lifted.module.arguments[1].value.to_vector<float>(), ramp);
  EXPECT_EQ(lifted.body,
            "    %0 = stablehlo.multiply %arg0, %arg1 : tensor<1500xf32>\n"
            "    return %0 : tensor<1500xf32>\n");
  EXPECT_NE(lifted.module.text.find("// %arg1: constant 'ramp' f32[1500]"), std::string::npos);
  // Inline everything instead: raw bytes for the large one.
  const Built inline_all = build(
      [ramp](const std::vector<Tensor>& a) -> std::vector<Tensor> {
        return {a[0] * Tensor::from_vector<float>(ramp, {1500})};
      },
      {f32({1500})}, {.max_inline_elements = -1});
  EXPECT_EQ(inline_all.module.arguments.size(), 1u);
  EXPECT_NE(inline_all.body.find("dense<\"0x000000000000803F00000040"), std::string::npos);
}

TEST(StablehloGolden, ElementLiterals) {
  EXPECT_EQ(shlo::float_literal(1.0, "f32"), "1.0");
  EXPECT_EQ(shlo::float_literal(0.1, "f32"), "0.1");
  EXPECT_EQ(shlo::float_literal(1e-5, "f32"), "1.0e-05");
  EXPECT_EQ(shlo::float_literal(-0.0, "f32"), "-0.0");
  EXPECT_EQ(shlo::float_literal(0.1, "f64"), "0.1");
  EXPECT_EQ(shlo::float_literal(HUGE_VAL, "f32"), "0x7F800000");
  EXPECT_EQ(shlo::float_literal(-HUGE_VAL, "f64"), "0xFFF0000000000000");
  EXPECT_EQ(shlo::float_literal(HUGE_VAL, "f16"), "0x7C00");
  EXPECT_EQ(shlo::float_literal(-HUGE_VAL, "bf16"), "0xFF80");
  EXPECT_EQ(shlo::int_literal(-1, "i8"), "-1");
  EXPECT_EQ(shlo::int_literal(255, "ui8"), "255");
  EXPECT_EQ(shlo::int_literal(1, "i1"), "true");
  EXPECT_EQ(shlo::tensor_type({DType::u8, {2, 0}}), "tensor<2x0xui8>");
  EXPECT_EQ(shlo::tensor_type({DType::boolean, {}}), "tensor<i1>");
  EXPECT_EQ(shlo::tensor_type({DType::bf16, {7}}), "tensor<7xbf16>");
  EXPECT_EQ(shlo::dense_literal(Array::from_vector<bool>({true, false}, {2})), "dense<[true, false]>");
  EXPECT_EQ(shlo::dense_literal(Array::from_vector<int64_t>({1, 2, 3, 4}, {2, 2})), "dense<[[1, 2], [3, 4]]>");
  EXPECT_EQ(shlo::dense_literal(Array::zeros(DType::f32, {0})), "dense<>");
  // Every f16 reads back exactly through its printed decimal.
  for (uint32_t bits = 0; bits < 0x7C00; bits += 37) {
    const float v = f16_bits_to_f32(static_cast<uint16_t>(bits));
    const std::string s = shlo::float_literal(v, "f16");
    EXPECT_EQ(f32_to_f16_bits(static_cast<float>(std::strtod(s.c_str(), nullptr))), bits) << s;
  }
}
