// Internal compiler errors a user can act on: nodes remember the module or user-level op that built
// them, a report names the node and saves the graph for replay, the program verifier catches unsound
// schedules, and the fusion / pass switches that work around a compiler bug parse and take effect.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cpu_test_util.h"
#include "tessera/backends/common/compile_options.h"
#include "tessera/backends/common/program_verifier.h"
#include "tessera/backends/internal_error.h"
#include "tessera/ir/origin.h"

namespace tessera::test {
namespace {

using backends::common::CompileOptions;
using backends::common::Fusion;
using backends::common::FusionSet;

bool any_origin_contains(const ir::Graph& g, const std::string& fragment) {
  for (const ir::NodePtr& n : g.nodes()) {
    if (n->origin().find(fragment) != std::string::npos) return true;
  }
  return false;
}

TEST(NodeOrigin, ModulesAndCompositeOpsNameTheNodesTheyBuild) {
  ops::Generator gen(1);
  auto model = std::make_shared<nn::Sequential>();
  model->add(std::make_shared<nn::Linear>(4, 3, true, gen));
  const Tensor x = Tensor::placeholder("x", DType::f32, {2, 4});
  const Tensor y = (*model)(x);
  // "Sequential > Linear(in_features=4, ...) '0'": the module's description and its registered name.
  EXPECT_NE(y.value().node()->origin().find("> Linear("), std::string::npos) << y.value().node()->origin();
  EXPECT_NE(y.value().node()->origin().find(") '0'"), std::string::npos) << y.value().node()->origin();
  EXPECT_EQ(y.value().node()->origin().rfind("Sequential", 0), 0u) << y.value().node()->origin();
  const Tensor loss = ops::cross_entropy(y, Tensor::placeholder("t", DType::i64, {2}));
  EXPECT_NE(loss.value().node()->origin().find("ops::cross_entropy"), std::string::npos);
  // Outside every scope a node has no origin; scopes end with their block.
  EXPECT_EQ(ops::neg(x).value().node()->origin(), "");
  {
    const ir::OriginScope scope("my block");
    EXPECT_EQ(ops::neg(x).value().node()->origin(), "my block");
  }
  EXPECT_EQ(ops::neg(x).value().node()->origin(), "");
}

TEST(NodeOrigin, GradientNodesNameTheNodeTheyDifferentiate) {
  ops::Generator gen(1);
  nn::Linear fc(4, 3, true, gen);
  auto f = [&](const std::vector<Tensor>& a) { return ops::sum(ops::square(fc(a[0]))); };
  const ir::Graph g = trace(grad(f), {{DType::f32, {2, 4}}});
  EXPECT_TRUE(any_origin_contains(g, "gradient of")) << ir::print_graph(g);
  EXPECT_TRUE(any_origin_contains(g, "gradient of Linear(")) << ir::print_graph(g);
}

TEST(InternalError, TheReportNamesTheNodeSavesTheGraphAndSaysWhatToDo) {
  const auto dir = std::filesystem::temp_directory_path() / "tessera-ice-test";
  std::filesystem::create_directories(dir);
  ::setenv("TESSERA_DUMP_DIR", dir.c_str(), 1);
  const Tensor x = Tensor::placeholder("x", DType::f32, {2, 3});
  Tensor y;
  {
    const ir::OriginScope scope("Block 'b1'");
    y = ops::relu(x) * 2.0;
  }
  const ir::Graph g = ir::Graph::build({x}, {y}, "g");
  const ir::Node* relu = g.nodes()[0].get();
  std::string message;
  try {
    backends::raise_internal_error({"cpu", "something broke", &g, nullptr, relu, "TESSERA_FUSION=-epilogue"});
  } catch (const backends::InternalCompilerError& e) {
    message = e.what();
  }
  ::unsetenv("TESSERA_DUMP_DIR");
  EXPECT_NE(message.find("cpu backend: internal compiler error: something broke"), std::string::npos) << message;
  EXPECT_NE(message.find("while compiling %1 = relu(%0) : f32[2, 3]"), std::string::npos) << message;
  EXPECT_NE(message.find("built by Block 'b1'"), std::string::npos) << message;
  EXPECT_NE(message.find("TESSERA_FUSION=-epilogue"), std::string::npos) << message;
  EXPECT_NE(message.find("tessera check"), std::string::npos) << message;
  // The saved file holds the graph, which parses back to the same text.
  const size_t at = message.find(dir.string());
  ASSERT_NE(at, std::string::npos) << message;
  const std::string path = message.substr(at, message.find(".tsr", at) + 4 - at);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(ir::print_graph(ir::parse_graph(text.str())), ir::print_graph(g));
  std::filesystem::remove_all(dir);
}

// A hand-made Program with one fault at a time: the verifier names the step and the buffer.
class NoopStep final : public backends::common::Step {
 public:
  void run(const backends::common::RunContext&) const override {}
  backends::common::StepKind kind() const override { return backends::common::StepKind::library; }
  std::string describe() const override { return "noop"; }
};

TEST(ProgramVerifier, FindsReadsBeforeWritesReadOnlyWritesAndMissingOutputs) {
  using backends::common::BufferKind;
  backends::common::Program p;
  p.num_inputs = 1;
  p.num_outputs = 1;
  p.buffers = {{BufferKind::input, 0, 16}, {BufferKind::arena, 0, 16}, {BufferKind::output, 0, 16}};
  p.steps.push_back(std::make_unique<NoopStep>());
  p.steps.push_back(std::make_unique<NoopStep>());
  // Sound: input -> arena -> output.
  std::vector<runtime::StepAccess> access = {{{1}, {0}}, {{2}, {1}}};
  EXPECT_FALSE(backends::common::verify_program(p, access, false).has_value());
  // The arena buffer is read before it is written.
  access = {{{2}, {1}}, {{1}, {0}}};
  auto fault = backends::common::verify_program(p, access, false);
  ASSERT_TRUE(fault.has_value());
  EXPECT_EQ(fault->step, 0);
  EXPECT_NE(fault->what.find("reads arena buffer 1 (16 bytes) before any step writes it"), std::string::npos)
      << fault->what;
  // A step writes the input.
  access = {{{0, 1}, {0}}, {{2}, {1}}};
  fault = backends::common::verify_program(p, access, false);
  ASSERT_TRUE(fault.has_value());
  EXPECT_NE(fault->what.find("writes input buffer 0 (slot 0), which is read-only"), std::string::npos) << fault->what;
  // Nothing writes the output.
  access = {{{1}, {0}}, {{1}, {1}}};
  fault = backends::common::verify_program(p, access, false);
  ASSERT_TRUE(fault.has_value());
  EXPECT_NE(fault->what.find("no step writes output 0"), std::string::npos) << fault->what;
}

TEST(CompileOptions, FusionSwitchesParse) {
  using backends::common::parse_fusion;
  EXPECT_EQ(parse_fusion("0"), FusionSet::none());
  EXPECT_EQ(parse_fusion("off"), FusionSet::none());
  EXPECT_EQ(parse_fusion(""), FusionSet::all());
  EXPECT_EQ(parse_fusion("1"), FusionSet::all());
  EXPECT_EQ(parse_fusion("-epilogue,-clusters"), FusionSet::all().without(Fusion::epilogue).without(Fusion::clusters));
  EXPECT_EQ(parse_fusion("epilogue, in_place"), FusionSet::none().with(Fusion::epilogue).with(Fusion::in_place));
  EXPECT_EQ(parse_fusion("-epilogue").str(),
            "transposed_product,clusters,adam_groups,in_place,relayout,row_kernels,depthwise_pointwise");
  EXPECT_TESSERA_ERROR(parse_fusion("-epilog"), "unknown fusion 'epilog'", "epilogue, transposed_product");
  EXPECT_TESSERA_ERROR(parse_fusion("epilogue,-clusters"), "not both");
}

TEST(CompileOptions, PassSwitchesParse) {
  using backends::common::parse_passes;
  EXPECT_TRUE(parse_passes("0").all_off);
  EXPECT_TRUE(parse_passes("").disabled.empty());
  EXPECT_EQ(parse_passes("-cse,-dce").disabled, (std::vector<std::string>{"cse", "dce"}));
  EXPECT_TESSERA_ERROR(parse_passes("-cse2"), "unknown pass 'cse2'", "constant_folding");
  EXPECT_TESSERA_ERROR(parse_passes("cse"), "must name a pass to leave out with '-'");
}

// The switches reach the compiler: with epilogues off, x @ w + b is a plain GEMM and a separate add.
TEST(CompileOptions, SwitchesChangeWhatIsCompiled) {
  auto f = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{ops::relu(ops::matmul(a[0], a[1]) + a[2])}; };
  const ir::Graph g = trace(f, {{DType::f32, {4, 8}}, {DType::f32, {8, 16}}, {DType::f32, {16}}});
  const std::vector<Array> inputs = {random_array({4, 8}, 1, -1, 1, DType::f32), random_array({8, 16}, 2, -1, 1, DType::f32),
                                     random_array({16}, 3, -1, 1, DType::f32)};
  std::string fused, plain;
  {
    backends::common::ScopedCompileOptions o(CompileOptions{});
    fused = backends::cpu::compile_info(*backends::cpu_backend().compile(g)).program;
  }
  {
    backends::common::ScopedCompileOptions o(CompileOptions{FusionSet::all().without(Fusion::epilogue), {}});
    plain = backends::cpu::compile_info(*backends::cpu_backend().compile(g)).program;
    expect_matches_reference(g, inputs, "epilogues off");
  }
  EXPECT_NE(fused.find("+bias relu"), std::string::npos) << fused;
  EXPECT_EQ(plain.find("+bias"), std::string::npos) << plain;
}

}  // namespace
}  // namespace tessera::test
