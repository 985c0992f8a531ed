// The graph fuzzer itself: its generator covers the op set and is deterministic, its shrinker and
// regression files work, it finds an injected miscompile — and the CI budget: a fixed number of
// random graphs per shard (TESSERA_FUZZ_GRAPHS, default 400) on the CPU backend must all agree with
// the reference backend.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "tessera/backends/cpu/cpu_backend.h"
#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"
#include "tessera/testing/graph_fuzz/fuzz_driver.h"

namespace tessera::testing::fuzz {
namespace {

int64_t budget() {
  const char* env = std::getenv("TESSERA_FUZZ_GRAPHS");
  return env != nullptr && *env != '\0' ? std::atoll(env) : 400;
}

std::string describe(const FuzzReport& r) {
  std::string out = fmt::format("{} graphs ({} rejected), {} executions, {:.1f} s, {} findings\n", r.totals.graphs,
                                r.totals.rejected, r.totals.executions, r.totals.seconds, r.findings.size());
  for (const Finding& f : r.findings) {
    out += fmt::format("--- seed {} [{}] {} (+{} similar)\n{}\n", f.seed, f.variant, f.what, f.repeats,
                       write_regression(f.shrunk));
  }
  return out;
}

TEST(GraphFuzz, GeneratorCoversEveryRegisteredOp) {
  const std::set<std::string> generated = generated_ops();
  std::string missing;
  for (const std::string& op : ir::OpRegistry::instance().names()) {
    if (!generated.count(op) && !ops_not_generated().count(op)) missing += " " + op;
  }
  EXPECT_EQ(missing, "") << "ops the graph fuzzer never builds (add a recipe or list them with a reason)";
  for (const auto& [op, reason] : ops_not_generated()) {
    EXPECT_NE(ir::OpRegistry::instance().find(op), nullptr) << op << " is listed but not registered";
    EXPECT_FALSE(reason.empty()) << op;
  }
}

TEST(GraphFuzz, EveryRecipeBuildsGraphs) {
  for (const std::string& recipe : recipe_names()) {
    GeneratorOptions o;
    o.only = {recipe};
    int built = 0;
    for (uint64_t seed = 0; seed < 30 && built < 3; ++seed) {
      const GeneratedGraph g = generate_graph(seed, o);
      for (const std::string& r : g.recipes) built += r == recipe ? 1 : 0;
    }
    EXPECT_GE(built, 1) << "recipe '" << recipe << "' never built a node in 30 graphs";
  }
}

TEST(GraphFuzz, GraphsDependOnlyOnTheSeed) {
  for (uint64_t seed : {1u, 2u, 77u}) {
    const GeneratedGraph a = generate_graph(seed), b = generate_graph(seed);
    EXPECT_EQ(ir::print_graph(a.graph), ir::print_graph(b.graph));
    EXPECT_EQ(a.exact, b.exact);
  }
  EXPECT_NE(ir::print_graph(generate_graph(1).graph), ir::print_graph(generate_graph(2).graph));
}

// A backend that computes like the reference except that every tanh is off by 1: the fuzzer must find
// it, and the shrinker must reduce the graph to little more than the tanh.
class TanhIsWrongBackend final : public backends::Backend {
 public:
  std::string name() const override { return "tanh-is-wrong"; }
  bool supports(const ir::Node&) const override { return true; }
  using backends::Backend::compile;
  std::unique_ptr<backends::Executable> compile(const ir::Graph& graph, const backends::CompileSpec&) override {
    std::unordered_map<ir::Value, ir::Value, ir::ValueHash> wrong;
    for (const ir::NodePtr& n : graph.nodes()) {
      if (n->op_name() == "tanh") {
        const Tensor t(ir::Value(n, 0));
        wrong.emplace(ir::Value(n, 0), ops::add(t, ops::scalar_like(t, 1.0)).value());
      }
    }
    // Everything downstream of each tanh reads the wrong value instead.
    const auto map = ir::substitute(graph, std::move(wrong));
    return backends::reference_backend().compile(ir::Graph::build(graph.inputs(), ir::outputs_of(graph, map), graph.name()));
  }
};

TEST(GraphFuzz, FindsAndShrinksAnInjectedMiscompile) {
  TanhIsWrongBackend wrong;
  BackendUnderTest b{"tanh-is-wrong", &wrong, {Variant{"default", [] { return std::shared_ptr<void>(); }}}, 1};
  FuzzOptions o;
  o.graphs = 300;
  o.max_findings = 1;
  o.generator.gradient_probability = 0;
  const FuzzReport r = run_fuzzer(b, o);
  ASSERT_EQ(r.findings.size(), 1u) << describe(r);
  const Case& c = r.findings[0].shrunk.c;
  bool has_tanh = false;
  for (const ir::NodePtr& n : c.graph.nodes()) has_tanh = has_tanh || n->op_name() == "tanh";
  EXPECT_TRUE(has_tanh) << write_regression(r.findings[0].shrunk);
  EXPECT_LE(c.graph.nodes().size(), 4u) << "not shrunk:\n" << write_regression(r.findings[0].shrunk);
  EXPECT_EQ(c.graph.outputs().size(), 1u);
  // The regression file reproduces it after a round trip.
  const Regression back = parse_regression(write_regression(r.findings[0].shrunk), "round trip");
  EXPECT_EQ(ir::print_graph(back.c.graph), ir::print_graph(c.graph));
  EXPECT_NE(replay(back.c, b), "");
  EXPECT_EQ(replay(back.c, backend_under_test("reference")), "");
}

TEST(GraphFuzz, RegressionFilesRejectMissingData) {
  const std::string graph = "graph @g(%0: f32[2] {name = \"x\"}) {\n  %1 = neg(%0) : f32[2]\n  return %1\n}\n";
  EXPECT_THROW(parse_regression("# exact: 0\n" + graph, "t"), Error);                     // no input data
  EXPECT_THROW(parse_regression("# exact: 0\n# input 0: 0x00\n" + graph, "t"), Error);    // too short
  EXPECT_THROW(parse_regression("# input 0: 0x0000000000000000\n" + graph, "t"), Error);  // no exact line
  const Regression r = parse_regression("# exact: 1\n# input 0: 0x0000803f00000040\n" + graph, "t");
  EXPECT_EQ(r.c.inputs[0].to_vector<float>(), (std::vector<float>{1, 2}));
}

// The CI budget, in shards that ctest runs in parallel.
class GraphFuzzBudget : public ::testing::TestWithParam<int> {};

TEST_P(GraphFuzzBudget, CpuBackendAgreesWithTheReference) {
  FuzzOptions o;
  o.seed = 1000 + static_cast<uint64_t>(GetParam());
  o.graphs = budget();
  o.out_dir = (std::filesystem::temp_directory_path() / "tessera-graph-fuzz").string();
  const FuzzReport r = run_fuzzer(backend_under_test("cpu"), o);
  std::printf("shard %d: %lld graphs, %lld rejected, %lld executions in %.1f s\n", GetParam(),
              static_cast<long long>(r.totals.graphs), static_cast<long long>(r.totals.rejected),
              static_cast<long long>(r.totals.executions), r.totals.seconds);
  EXPECT_TRUE(r.findings.empty()) << describe(r);
  EXPECT_GT(r.totals.graphs, 0);
}

INSTANTIATE_TEST_SUITE_P(Shards, GraphFuzzBudget, ::testing::Range(0, 4));

}  // namespace
}  // namespace tessera::testing::fuzz
