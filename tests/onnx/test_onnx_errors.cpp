// Bad models and unsupported features: each is refused with a tessera::Error that names what is wrong
// and where (the node, the op, the opset, the value, the file).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "io/io_test_util.h"
#include "onnx_builder.h"
#include "tessera/backends/backend.h"
#include "tessera/core/error.h"
#include "tessera/io/onnx/onnx_import.h"

namespace tessera::test {
namespace {

// The error message of `f`, which must throw tessera::Error.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a tessera::Error";
  return "";
}

void expect_contains(const std::string& message, std::initializer_list<const char*> parts) {
  for (const char* p : parts) EXPECT_NE(message.find(p), std::string::npos) << "'" << p << "' not in: " << message;
}

ModelBuilder relu_model(int64_t opset = 13) {
  ModelBuilder b(opset);
  b.input("x", {int64_t{2}}).output("y");
  b.node("Relu", {"x"}, {"y"}, "act");
  return b;
}

TEST(OnnxErrors, ProtobufThatDoesNotParse) {
  const std::string good = relu_model().bytes();
  for (size_t cut : {size_t{1}, good.size() / 2, good.size() - 1}) {
    const std::string bad = good.substr(0, cut);
    const std::string m = error_of([&] {
      io::onnx::parse_onnx_model(reinterpret_cast<const uint8_t*>(bad.data()), bad.size(), "cut.onnx");
    });
    expect_contains(m, {"cut.onnx"});
  }
  const std::string junk = "\xff\xff\xff\xff garbage";
  expect_contains(error_of([&] {
                    io::onnx::parse_onnx_model(reinterpret_cast<const uint8_t*>(junk.data()), junk.size(), "j.onnx");
                  }),
                  {"j.onnx", "does not parse"});
}

TEST(OnnxErrors, NodeReadingAnUndefinedValue) {
  ModelBuilder b;
  b.input("x", {int64_t{2}}).output("y");
  b.node("Add", {"x", "nowhere"}, {"y"}, "adder");
  expect_contains(error_of([&] { b.parse(); }), {"\"adder\"", "\"nowhere\"", "no input, initializer or node defines"});
}

TEST(OnnxErrors, Cycle) {
  ModelBuilder b;
  b.input("x", {int64_t{2}}).output("y");
  b.node("Add", {"x", "b"}, {"a"}, "first");
  b.node("Relu", {"a"}, {"b"}, "second");
  b.node("Relu", {"a"}, {"y"}, "out");
  expect_contains(error_of([&] { b.parse(); }), {"cycle"});
}

TEST(OnnxErrors, ValueDefinedTwice) {
  ModelBuilder b;
  b.input("x", {int64_t{2}}).output("y");
  b.node("Relu", {"x"}, {"y"}, "one");
  b.node("Relu", {"x"}, {"y"}, "two");
  expect_contains(error_of([&] { b.parse(); }), {"\"two\"", "\"y\"", "already defines"});
}

TEST(OnnxErrors, InitializerWhoseBytesDoNotMatchItsShape) {
  ModelBuilder b = relu_model();
  b.initializer("w", {4}, {1, 2, 3});  // 12 bytes for f32[4]
  expect_contains(error_of([&] { b.parse(); }), {"\"w\"", "raw_data is 12 bytes", "f32[4] needs 16"});
  ModelBuilder typed = relu_model();
  auto& t = typed.int_initializer("i", {1, 2});
  t.set_dims(0, 3);
  expect_contains(error_of([&] { typed.parse(); }), {"\"i\"", "int64_data holds 2 values", "needs 3"});
}

TEST(OnnxErrors, HugeClaimedShapeIsRefusedWithoutAllocating) {
  ModelBuilder b = relu_model();
  auto& t = b.initializer("w", {1}, {1});
  t.set_dims(0, int64_t{1} << 40);
  expect_contains(error_of([&] { b.parse(); }), {"\"w\"", "raw_data is 4 bytes"});
}

TEST(OnnxErrors, UnsupportedOpNamesNodeOpAndOpset) {
  ModelBuilder b;
  b.input("x", {int64_t{2}}).output("y");
  b.node("NoSuchOp", {"x"}, {"y"}, "mystery");
  expect_contains(error_of([&] { io::onnx::import_onnx(b.parse()); }), {"\"mystery\"", "NoSuchOp", "opset 13", "not supported"});
}

TEST(OnnxErrors, UnsupportedAttributeIsNotIgnored) {
  ModelBuilder b = relu_model();
  set_int(*b.graph().mutable_node(0), "bogus", 1);
  expect_contains(error_of([&] { io::onnx::import_onnx(b.parse()); }), {"\"act\"", "Relu-13", "'bogus'", "not supported"});
}

TEST(OnnxErrors, UnsupportedAttributeValue) {
  ModelBuilder b;
  b.input("x", {int64_t{2}}).output("y");
  b.int_initializer("pads", {1, 1});
  auto& n = b.node("Pad", {"x", "pads"}, {"y"}, "pad_wrap");
  set_string(n, "mode", "wrap");
  expect_contains(error_of([&] { io::onnx::import_onnx(b.parse()); }), {"\"pad_wrap\"", "Pad-13", "wrap"});
}

TEST(OnnxErrors, UnsupportedDtype) {
  ModelBuilder b;
  b.input("x", {int64_t{2}}, ::onnx::TensorProto::UINT16).output("y", ::onnx::TensorProto::UINT16);
  b.node("Relu", {"x"}, {"y"});
  expect_contains(error_of([&] { io::onnx::import_onnx(b.parse()); }), {"\"x\"", "UINT16", "no Tessera dtype"});
}

TEST(OnnxErrors, OpVersionOlderThanImplemented) {
  ModelBuilder b(5);  // Tile-1 took `tiles` and `axis` inputs
  b.input("x", {int64_t{2}}).output("y");
  b.node("Tile", {"x"}, {"y"}, "old_tile");
  expect_contains(error_of([&] { io::onnx::import_onnx(b.parse()); }),
                  {"\"old_tile\"", "opset 5", "Tile-1", "from version 6"});
}

TEST(OnnxErrors, OpsetNewerThanKnown) {
  expect_contains(error_of([&] { io::onnx::import_onnx(relu_model(19).parse()); }), {"opset 19", "newest"});
}

TEST(OnnxErrors, ShapeErrorsFromOpsNameTheNode) {
  ModelBuilder b;
  b.input("a", {int64_t{2}, int64_t{3}}).input("b", {int64_t{4}, int64_t{5}}).output("y");
  b.node("MatMul", {"a", "b"}, {"y"}, "mm");
  expect_contains(error_of([&] { io::onnx::import_onnx(b.parse()); }), {"\"mm\"", "MatMul-13", "inner dimensions"});
}

class OnnxExternalData : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = scratch_.path();
    folder_ = root_ / "model";
    std::filesystem::create_directories(folder_);
    const float values[4] = {1, 2, 3, 4};
    std::ofstream(folder_ / "weights.bin", std::ios::binary).write(reinterpret_cast<const char*>(values), 16);
    std::ofstream(root_ / "outside.bin", std::ios::binary).write(reinterpret_cast<const char*>(values), 16);
  }

  // A model adding an external initializer w (f32[n]) to its input.
  ModelBuilder model(const std::string& location, int64_t n = 4, const std::string& offset = "") {
    ModelBuilder b;
    b.input("x", {n}).output("y");
    auto* t = b.graph().add_initializer();
    t->set_name("w");
    t->set_data_type(::onnx::TensorProto::FLOAT);
    t->add_dims(n);
    t->set_data_location(::onnx::TensorProto::EXTERNAL);
    auto* e = t->add_external_data();
    e->set_key("location");
    e->set_value(location);
    if (!offset.empty()) {
      auto* o = t->add_external_data();
      o->set_key("offset");
      o->set_value(offset);
    }
    b.node("Add", {"x", "w"}, {"y"});
    return b;
  }
  io::onnx::ImportedGraph import(const ModelBuilder& b) { return io::onnx::import_onnx(b.parse(folder_.string())); }

  ScratchDir scratch_;
  std::filesystem::path root_, folder_;
};

TEST_F(OnnxExternalData, ReadsAFileInsideTheModelsFolder) {
  const auto g = import(model("weights.bin", 2, "8"));
  const Array y = backends::reference_backend().compile(g.graph)->run({Array::from_vector<float>({10, 20}, {2})})[0];
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{13, 24}));
}

TEST_F(OnnxExternalData, RefusesPathsThatLeaveTheFolder) {
  expect_contains(error_of([&] { import(model("../outside.bin")); }), {"\"w\"", "leaves the model's folder"});
  expect_contains(error_of([&] { import(model((root_ / "outside.bin").string())); }), {"\"w\"", "absolute"});
  std::filesystem::create_symlink(root_ / "outside.bin", folder_ / "link.bin");
  expect_contains(error_of([&] { import(model("link.bin")); }), {"\"w\"", "leaves the model's folder"});
}

TEST_F(OnnxExternalData, RefusesSizesThatDoNotMatch) {
  expect_contains(error_of([&] { import(model("weights.bin", 3)); }), {"\"w\"", "16 bytes", "need 12"});
  expect_contains(error_of([&] { import(model("weights.bin", 4, "100")); }), {"\"w\"", "offset 100"});
  expect_contains(error_of([&] { import(model("missing.bin")); }), {"missing.bin"});
  expect_contains(error_of([&] { io::onnx::import_onnx(model("weights.bin").parse()); }), {"\"w\"", "folder"});
}

}  // namespace
}  // namespace tessera::test
