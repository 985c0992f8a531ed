// Bad input: an op with neither a lowering nor a decomposition fails the export naming the op, and
// nothing (no half file) is written when an export or a bundle fails.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tessera/io/npy.h"
#include "tessera/io/stablehlo/bundle.h"
#include "tessera/io/stablehlo/export.h"
#include "test_util.h"

using namespace tessera;
namespace shlo = tessera::io::stablehlo;

namespace {

// An op no exporter knows: registered once for these tests.
const std::string& unlowerable_op() {
  static const std::string name = [] {
    ir::OpRegistry::instance().add(ir::OpDef{
        .name = "test_stablehlo_unlowerable",
        .min_inputs = 1,
        .max_inputs = 1,
        .infer = [](const std::vector<ir::TensorType>& in, const ir::Attrs&) { return in; },
        .reference = [](const std::vector<Array>& in, const ir::Attrs&,
                        const std::vector<ir::TensorType>&) { return in; },
    });
    return std::string("test_stablehlo_unlowerable");
  }();
  return name;
}

ir::Graph unlowerable_graph() {
  const ir::Value x = ir::make_input("x", {DType::f32, {2, 3}});
  const ir::Value y = ir::make_node1(unlowerable_op(), {ops::exp(Tensor(x))});
  return ir::Graph::build({x}, {y}, "bad");
}

std::filesystem::path scratch(const std::string& leaf) {
  const auto dir = std::filesystem::temp_directory_path() / ("tessera_stablehlo_" + std::to_string(::getpid()) + leaf);
  std::filesystem::remove_all(dir);
  return dir;
}

}  // namespace

TEST(StablehloErrors, AnOpWithoutLoweringOrDecompositionIsNamed) {
  EXPECT_EQ(shlo::lowering_kind(unlowerable_op()), "");
  EXPECT_TESSERA_ERROR(shlo::export_graph(unlowerable_graph()), "stablehlo export", "test_stablehlo_unlowerable",
                       "f32[2, 3]", "no StableHLO lowering and no decomposition");
}

TEST(StablehloErrors, AFailedExportWritesNoFile) {
  const auto dir = scratch("_nofile");
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "bad.mlir").string();
  EXPECT_TESSERA_ERROR(shlo::write_module(shlo::export_graph(unlowerable_graph()), path), "test_stablehlo_unlowerable");
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "no temporary file is left behind either";
  std::filesystem::remove_all(dir);
}

TEST(StablehloErrors, WriteModuleReplacesAFileWhole) {
  const auto dir = scratch("_replace");
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "m.mlir").string();
  const ir::Value x = ir::make_input("x", {DType::f32, {2}});
  const shlo::Module m = shlo::export_graph(ir::Graph::build({x}, {ops::exp(Tensor(x)).value()}, "m"));
  shlo::write_module(m, path);
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, m.text);
  std::filesystem::remove_all(dir);
}

TEST(StablehloErrors, ABundleWithWrongValuesWritesNothing) {
  const auto dir = scratch("_bundle");
  const ir::Value x = ir::make_input("x", {DType::f32, {2}});
  const shlo::Module m = shlo::export_graph(ir::Graph::build({x}, {ops::exp(Tensor(x)).value()}, "m"));
  // An input of the wrong shape, then the wrong number of inputs and of expected values.
  EXPECT_TESSERA_ERROR(
      shlo::write_bundle(dir.string(), {.name = "m", .module = &m, .inputs = {Array::zeros(DType::f32, {3})}}),
      "argument 0 ('x') is f32[2]", "f32[3]");
  EXPECT_TESSERA_ERROR(shlo::write_bundle(dir.string(), {.name = "m", .module = &m, .inputs = {}}),
                       "0 input values for 1");
  EXPECT_TESSERA_ERROR(
      shlo::write_bundle(dir.string(), {.name = "m",
                                        .module = &m,
                                        .inputs = {Array::zeros(DType::f32, {2})},
                                        .expected = {Array::zeros(DType::f32, {2}), Array::zeros(DType::f32, {2})}}),
      "2 expected values for 1 results");
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(StablehloErrors, ABundleHoldsEverythingItNames) {
  const auto dir = scratch("_bundle_ok");
  const ir::Value x = ir::make_input("x", {DType::f32, {2}});
  const Tensor big = Tensor::from_array(Array::from_vector<float>({1, 2, 3, 4}, {4}), "table");
  const shlo::Module m = shlo::export_graph(
      ir::Graph::build({x}, {ops::exp(Tensor(x)).value(), ops::sum(big).value()}, "m"), {.max_inline_elements = 2});
  ASSERT_EQ(m.arguments.size(), 2u) << "the 4-element constant is lifted";
  EXPECT_EQ(m.arguments[1].kind, shlo::Argument::Kind::Constant);
  EXPECT_EQ(m.arguments[1].name, "table");
  const auto files = shlo::write_bundle(
      dir.string(), {.name = "m",
                     .module = &m,
                     .inputs = {Array::from_vector<float>({0, 1}, {2})},
                     .expected = {Array::from_vector<float>({1, 2.7182817f}, {2}), Array::scalar(10.0)},
                     .result_names = {"e", "total"},
                     .info = {{"model", "\"toy\""}}});
  ASSERT_EQ(files.size(), 6u);  // mlir, two inputs, two expected, manifest
  for (const auto& f : files) EXPECT_TRUE(std::filesystem::exists(f)) << f;
  const Array lifted = io::load_npy((dir / "m.input_1.npy").string());
  EXPECT_EQ(lifted.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  std::ifstream in(dir / "m.json");
  const std::string manifest((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(manifest.find("\"kind\": \"constant\""), std::string::npos) << manifest;
  EXPECT_NE(manifest.find("\"model\": \"toy\""), std::string::npos) << manifest;
  EXPECT_NE(manifest.find("\"name\": \"total\""), std::string::npos) << manifest;
  std::filesystem::remove_all(dir);
}
