// Pipeline: order, repetition to a fixed point, TESSERA_DUMP and TESSERA_VERIFY_PASSES, the signature
// check, and the default pipeline's pass list.
#include <cstdlib>

#include "pass_test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

ir::Graph small_graph() {
  return trace_graph1([](const std::vector<Tensor>& x) { return ops::log(1.0 + x[0] * 1.0) + ops::exp(x[0]); },
                      {f32({3})});
}

std::string run_capturing_stderr(const passes::Pipeline& p, const ir::Graph& g) {
  ::testing::internal::CaptureStderr();
  p.run(g);
  return ::testing::internal::GetCapturedStderr();
}

// A pass that records when it runs.
passes::Pass recording(const std::string& name, std::vector<std::string>& log) {
  return passes::Pass{name, [name, &log](const ir::Graph& g) {
                        log.push_back(name);
                        return g;
                      }};
}

}  // namespace

TEST(Pipeline, DefaultPipelineLists) {
  std::vector<std::string> names;
  for (const passes::Pass& p : passes::default_pipeline().passes()) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"canonicalize", "constant_folding", "algebraic_simplify",
                                             "stable_rewrites", "cse", "dce"}));
  EXPECT_GT(passes::default_pipeline().max_rounds(), 1);
}

TEST(Pipeline, RunsPassesInOrderAndStopsAtAFixedPoint) {
  std::vector<std::string> log;
  passes::Pipeline p;
  p.add(recording("first", log)).add(recording("second", log)).repeat(5);
  p.run(small_graph());
  // Nothing changed in round 1, so there is no round 2.
  EXPECT_EQ(log, (std::vector<std::string>{"first", "second"}));
}

TEST(Pipeline, RepeatsWhileAPassChangesTheGraph) {
  // A pass that peels one neg off the output per run needs one round per neg.
  int runs = 0;
  const passes::Pass peel{"peel", [&runs](const ir::Graph& g) {
                            ++runs;
                            const ir::Value& out = g.outputs()[0];
                            if (out.node()->op_name() != "neg") return g;
                            return ir::Graph::build(g.inputs(), {out.node()->input(0)}, g.name());
                          }};
  const ir::Graph g =
      trace_graph1([](const std::vector<Tensor>& x) { return ops::neg(ops::neg(ops::neg(x[0]))); }, {f32({3})});
  EXPECT_EQ(op_names(passes::Pipeline({peel}).run(g)), "neg neg");
  EXPECT_EQ(op_names(passes::Pipeline({peel}).repeat(2).run(g)), "neg");
  runs = 0;
  const ir::Graph done = passes::Pipeline({peel}).repeat(10).run(g);
  EXPECT_TRUE(done.nodes().empty());
  EXPECT_EQ(runs, 4);  // three rounds that peel, one that finds nothing
}

TEST(Pipeline, DefaultPipelineReachesAFixedPoint) {
  ir::Graph g = small_graph();
  ir::Graph once = passes::default_pipeline().run(g);
  EXPECT_EQ(op_names(once), "log1p exp add");
  EXPECT_TRUE(same_graph(once, passes::default_pipeline().run(once)));
  expect_same_values(g, once, random_inputs(g, 1, 0.1, 1.0), 0.0, 1e-6);
}

TEST(Pipeline, RejectsBadArguments) {
  passes::Pipeline p;
  EXPECT_TESSERA_ERROR(p.add(passes::Pass{"empty", {}}), "empty");
  EXPECT_TESSERA_ERROR(p.repeat(0), "max_rounds");
}

TEST(Pipeline, DumpAllPrintsTheGraphAfterEveryPass) {
  ScopedEnv dump("TESSERA_DUMP", "all");
  const ir::Graph g = small_graph();
  const std::string err = run_capturing_stderr(passes::default_pipeline(), g);
  size_t at = 0;
  for (const char* pass : {"canonicalize", "constant_folding", "algebraic_simplify", "stable_rewrites", "cse", "dce"}) {
    const size_t found = err.find(std::string("// after ") + pass + "\ngraph @traced(", at);
    ASSERT_NE(found, std::string::npos) << pass << " in:\n" << err;
    at = found + 1;
  }
  // The text after a pass is the graph it produced: the mul by 1 is gone after algebraic_simplify,
  // log1p appears after stable_rewrites.
  const size_t algebraic = err.find("// after algebraic_simplify");
  const size_t stable = err.find("// after stable_rewrites");
  EXPECT_NE(err.find("mul(", 0), std::string::npos);
  EXPECT_EQ(err.find("mul(", algebraic), std::string::npos);
  EXPECT_EQ(err.substr(0, stable).find("log1p("), std::string::npos);
  EXPECT_NE(err.find("log1p(", stable), std::string::npos);
  // The dump after dce is exactly the final graph.
  const std::string final_text = ir::print_graph(passes::default_pipeline().run(g));
  EXPECT_NE(err.find("// after dce\n" + final_text), std::string::npos);
}

TEST(Pipeline, DumpSelectedPassesOnly) {
  ScopedEnv dump("TESSERA_DUMP", "cse, dce");
  const std::string err = run_capturing_stderr(passes::default_pipeline(), small_graph());
  EXPECT_NE(err.find("// after cse\n"), std::string::npos) << err;
  EXPECT_NE(err.find("// after dce\n"), std::string::npos) << err;
  EXPECT_EQ(err.find("// after canonicalize"), std::string::npos) << err;
  EXPECT_EQ(err.find("// after stable_rewrites"), std::string::npos) << err;
}

TEST(Pipeline, NoDumpWithoutTheVariable) {
  ScopedEnv dump("TESSERA_DUMP", "");
  EXPECT_EQ(run_capturing_stderr(passes::default_pipeline(), small_graph()), "");
  ScopedEnv other("TESSERA_DUMP", "fusion");
  EXPECT_EQ(run_capturing_stderr(passes::default_pipeline(), small_graph()), "");
}

TEST(Pipeline, VerifySwitchCatchesAnInvalidGraph) {
  // A broken pass: an exp node whose recorded output type (f32) is not what inference gives (f64).
  const passes::Pass broken{"broken", [](const ir::Graph& g) {
                              const ir::Value wide = ops::cast(g.inputs()[0], DType::f64).value();
                              auto bad = std::make_shared<const ir::Node>(&ir::OpRegistry::instance().get("exp"),
                                                                          std::vector<ir::Value>{wide}, ir::Attrs{},
                                                                          std::vector<ir::TensorType>{f32({3})});
                              return ir::Graph::build(g.inputs(), {ir::Value(bad, 0)}, g.name());
                            }};
  passes::Pipeline p({broken});
  {
    ScopedEnv verify("TESSERA_VERIFY_PASSES", "0");
    EXPECT_NO_THROW(p.run(small_graph()));
  }
  ScopedEnv verify("TESSERA_VERIFY_PASSES", "1");
  EXPECT_TESSERA_ERROR(p.run(small_graph()), "pass 'broken' produced an invalid graph", "exp", "f64[3]");
  EXPECT_NO_THROW(passes::default_pipeline().run(small_graph()));
}

TEST(Pipeline, ASignatureChangeIsAlwaysAnError) {
  const passes::Pass widen{"widen", [](const ir::Graph& g) {
                             return ir::Graph::build(g.inputs(), {ops::cast(g.outputs()[0], DType::f64).value()},
                                                     g.name());
                           }};
  EXPECT_TESSERA_ERROR(passes::Pipeline({widen}).run(small_graph()), "pass 'widen'", "outputs");
}
