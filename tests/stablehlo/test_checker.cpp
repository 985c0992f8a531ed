// The structural checker accepts well-formed modules and names the line of each kind of mistake.
#include "tessera/io/stablehlo/checker.h"
#include "test_util.h"

using namespace tessera;
namespace shlo = tessera::io::stablehlo;

namespace {

// A module around `body` (ops, then the return) with @main(%arg0: tensor<2x3xf32>) -> `result`.
std::string module(const std::string& body, const std::string& result = "tensor<2x3xf32>",
                   const std::string& args = "%arg0: tensor<2x3xf32>") {
  return "module @m {\n  func.func public @main(" + args + ") -> (" + result + ") {\n" + body + "  }\n}\n";
}

}  // namespace

TEST(StablehloChecker, AcceptsAWellFormedModule) {
  const std::string text = module(
      "    %0 = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>\n"
      "    %1 = stablehlo.broadcast_in_dim %0, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>\n"
      "    %2 = stablehlo.add %arg0, %1 : tensor<2x3xf32>\n"
      "    %3 = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "    %4 = \"stablehlo.reduce_window\"(%2, %3) <{window_dimensions = array<i64: 1, 2>}> ({\n"
      "    ^bb0(%5: tensor<f32>, %6: tensor<f32>):\n"
      "      %7 = stablehlo.maximum %5, %6 : tensor<f32>\n"
      "      stablehlo.return %7 : tensor<f32>\n"
      "    }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x2xf32>\n"
      "    return %2 : tensor<2x3xf32>\n");
  const shlo::CheckedModule m = shlo::check_module(text);
  EXPECT_EQ(m.argument_types, std::vector<std::string>{"tensor<2x3xf32>"});
  EXPECT_EQ(m.result_types, std::vector<std::string>{"tensor<2x3xf32>"});
  EXPECT_EQ(m.op_counts.at("stablehlo.constant"), 2);
  EXPECT_EQ(m.op_counts.at("stablehlo.reduce_window"), 1);
  EXPECT_EQ(m.values, 9);  // %arg0, %0..%4, the two block arguments and %7
}

TEST(StablehloChecker, RejectsAUseBeforeTheDefinition) {
  EXPECT_TESSERA_ERROR(shlo::check_module(module("    %0 = stablehlo.add %arg0, %1 : tensor<2x3xf32>\n"
                                                 "    %1 = stablehlo.add %arg0, %arg0 : tensor<2x3xf32>\n"
                                                 "    return %0 : tensor<2x3xf32>\n")),
                       "line 3", "%1 is used before it is defined");
}

TEST(StablehloChecker, RejectsATwiceDefinedValue) {
  EXPECT_TESSERA_ERROR(shlo::check_module(module("    %0 = stablehlo.abs %arg0 : tensor<2x3xf32>\n"
                                                 "    %0 = stablehlo.abs %arg0 : tensor<2x3xf32>\n"
                                                 "    return %0 : tensor<2x3xf32>\n")),
                       "line 4", "%0 is defined twice");
}

TEST(StablehloChecker, RejectsOperandTypesThatDisagreeWithTheSignature) {
  EXPECT_TESSERA_ERROR(shlo::check_module(module("    %0 = stablehlo.abs %arg0 : tensor<3x2xf32>\n"
                                                 "    return %arg0 : tensor<2x3xf32>\n")),
                       "line 3", "%arg0", "tensor<2x3xf32>", "tensor<3x2xf32>");
  EXPECT_TESSERA_ERROR(
      shlo::check_module(module("    %0 = stablehlo.convert %arg0 : (tensor<2x3xi32>) -> tensor<2x3xf32>\n"
                                "    return %0 : tensor<2x3xf32>\n")),
      "operand 0", "has type tensor<2x3xf32> but the signature says tensor<2x3xi32>");
}

TEST(StablehloChecker, RejectsAReturnThatDisagreesWithMain) {
  EXPECT_TESSERA_ERROR(
      shlo::check_module(module("    %0 = stablehlo.reshape %arg0 : (tensor<2x3xf32>) -> tensor<6xf32>\n"
                                "    return %0 : tensor<6xf32>\n")),
      "result 0 is tensor<6xf32> but @main declares tensor<2x3xf32>");
  EXPECT_TESSERA_ERROR(shlo::check_module(module("    return %arg0, %arg0 : tensor<2x3xf32>, tensor<2x3xf32>\n")),
                       "different number of values");
}

TEST(StablehloChecker, RejectsBrokenShapeRules) {
  EXPECT_TESSERA_ERROR(
      shlo::check_module(
          module("    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1] : (tensor<2x3xf32>) -> tensor<2x4xf32>\n"
                 "    return %arg0 : tensor<2x3xf32>\n")),
      "broadcast_in_dim", "does not broadcast");
  EXPECT_TESSERA_ERROR(
      shlo::check_module(module("    %0 = stablehlo.reshape %arg0 : (tensor<2x3xf32>) -> tensor<5xf32>\n"
                                "    return %arg0 : tensor<2x3xf32>\n")),
      "reshape keeps elements");
  EXPECT_TESSERA_ERROR(
      shlo::check_module(module("    %0 = stablehlo.dot_general %arg0, %arg0, contracting_dims = [1] x [1] : "
                                "(tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>\n"
                                "    return %arg0 : tensor<2x3xf32>\n")),
      "dot_general result type");
  EXPECT_TESSERA_ERROR(
      shlo::check_module(module("    %0 = stablehlo.slice %arg0 [0:2, 1:4] : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
                                "    return %arg0 : tensor<2x3xf32>\n")),
      "slice: range out of bounds");
  EXPECT_TESSERA_ERROR(shlo::check_module(module("    %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<3xf32>\n"
                                                 "    return %arg0 : tensor<2x3xf32>\n")),
                       "the literal has 2 elements for tensor<3xf32>");
}

TEST(StablehloChecker, KeepsRegionValuesInsideTheirRegion) {
  const std::string text = module(
      "    %0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "    %1 = stablehlo.reduce(%arg0 init: %0) applies stablehlo.add across dimensions = [1] : "
      "(tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n"
      "    %2 = \"stablehlo.reduce_window\"(%arg0, %0) <{window_dimensions = array<i64: 1, 1>}> ({\n"
      "    ^bb0(%3: tensor<f32>, %4: tensor<f32>):\n"
      "      %5 = stablehlo.add %3, %4 : tensor<f32>\n"
      "      stablehlo.return %5 : tensor<f32>\n"
      "    }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>\n"
      "    %6 = stablehlo.add %5, %5 : tensor<f32>\n"
      "    return %2 : tensor<2x3xf32>\n");
  EXPECT_TESSERA_ERROR(shlo::check_module(text), "line 10", "%5 is used before it is defined (or outside its region)");
}

TEST(StablehloChecker, RejectsARegionOfTheWrongArity) {
  const std::string text = module(
      "    %0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "    %1 = \"stablehlo.reduce_window\"(%arg0, %0) <{window_dimensions = array<i64: 1, 1>}> ({\n"
      "    ^bb0(%2: tensor<f32>):\n"
      "      stablehlo.return %2 : tensor<f32>\n"
      "    }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>\n"
      "    return %1 : tensor<2x3xf32>\n");
  EXPECT_TESSERA_ERROR(shlo::check_module(text), "the region takes 1 arguments, expected 2");
}

TEST(StablehloChecker, RejectsTextThatIsNoModule) {
  EXPECT_TESSERA_ERROR(shlo::check_module(""), "no module");
  EXPECT_TESSERA_ERROR(shlo::check_module("module @m {\n  func.func public @main(%x: tensor<f32>) -> (tensor<f32>) {\n"
                                          "    return %x : tensor<f32>\n  }\n}\n"),
                       "should be named %arg0");
  EXPECT_TESSERA_ERROR(shlo::check_module(module("    %0 = stablehlo.abs %arg0 : tensor<2x3xf32>\n")), "expected");
  EXPECT_TESSERA_ERROR(shlo::check_module(module("    %0 = stablehlo.iota dim = x : tensor<2xi64>\n"
                                                 "    return %arg0 : tensor<2x3xf32>\n")),
                       "stablehlo check");
  EXPECT_TESSERA_ERROR(shlo::check_module(module("    %0 = stablehlo.abs %arg0 : tensor<2x3xq7>\n"
                                                 "    return %arg0 : tensor<2x3xf32>\n")),
                       "unknown element type 'q7'");
}

TEST(StablehloChecker, ComparesTheSignatureWithTheExport) {
  shlo::Module m;
  m.text = module("    return %arg0 : tensor<2x3xf32>\n");
  m.arguments.push_back({.kind = shlo::Argument::Kind::Input, .name = "x", .type = {DType::f32, {2, 3}}});
  m.results.push_back({DType::f32, {2, 3}});
  EXPECT_NO_THROW(shlo::check_exported(m));
  m.results[0] = {DType::f16, {2, 3}};
  EXPECT_TESSERA_ERROR(shlo::check_exported(m), "@main returns (tensor<2x3xf32>)", "(tensor<2x3xf16>)");
  m.results[0] = {DType::f32, {2, 3}};
  m.arguments.push_back({.kind = shlo::Argument::Kind::Constant, .name = "c", .type = {DType::f32, {4}}});
  EXPECT_TESSERA_ERROR(shlo::check_exported(m), "@main takes (tensor<2x3xf32>)");
}
