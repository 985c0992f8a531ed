// Random ops as graph nodes: their attributes, the generator's bookkeeping, errors, and replay of
// traced and printed graphs.
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

TEST(RandomGraph, NodesCarrySeedOffsetAndParams) {
  ops::Generator g(0xfedcba9876543210ull);
  g.set_offset(5);
  const Tensor t = ops::uniform({2, 3}, -1, 2, g, DType::f64);
  const ir::Node& n = *t.value().node();
  EXPECT_EQ(n.op_name(), "uniform");
  EXPECT_TRUE(n.op().has(ir::kRandom));
  EXPECT_EQ(static_cast<uint64_t>(n.attrs().get_int("seed")), 0xfedcba9876543210ull);
  EXPECT_EQ(n.attrs().get_int("offset"), 5);
  EXPECT_EQ(n.attrs().get_ints("shape"), (Shape{2, 3}));
  EXPECT_EQ(n.attrs().get_dtype("dtype"), DType::f64);
  EXPECT_EQ(n.attrs().get_float("low"), -1.0);
  EXPECT_EQ(n.attrs().get_float("high"), 2.0);
  for (const char* op : {"uniform", "normal", "bernoulli", "randint", "permutation"}) {
    EXPECT_TRUE(ir::OpRegistry::instance().get(op).has(ir::kRandom)) << op;
  }
}

TEST(RandomGraph, GeneratorAdvancesByCountersUsed) {
  ops::Generator g(1);
  EXPECT_EQ(g.offset(), 0u);
  ops::uniform({2, 3}, 0, 1, g);
  EXPECT_EQ(g.offset(), 6u);
  ops::normal({4}, 0, 1, g, DType::f64);  // one counter per element, whatever the dtype
  EXPECT_EQ(g.offset(), 10u);
  ops::bernoulli(ops::full({5, 2}, 0.5), g);
  EXPECT_EQ(g.offset(), 20u);
  ops::randint(0, 3, {7}, g);
  EXPECT_EQ(g.offset(), 27u);
  ops::permutation(9, g);
  EXPECT_EQ(g.offset(), 36u);
  ops::uniform({0, 4}, 0, 1, g);  // empty draws use no counters
  EXPECT_EQ(g.offset(), 36u);
  const Tensor last = ops::uniform({3}, 0, 1, g);
  EXPECT_EQ(last.value().node()->attrs().get_int("offset"), 36);
  EXPECT_EQ(g.advance(4), 39u);  // returns the first reserved counter
  EXPECT_EQ(g.offset(), 43u);
}

TEST(RandomGraph, RejectedCallsLeaveTheGeneratorAlone) {
  ops::Generator g(1);
  g.set_offset(10);
  EXPECT_THROW(ops::uniform({3}, 1, 0, g), Error);
  EXPECT_THROW(ops::randint(0, 0, {3}, g), Error);
  EXPECT_EQ(g.offset(), 10u);
}

TEST(RandomGraph, DefaultGeneratorAndManualSeed) {
  ops::manual_seed(1234);
  EXPECT_EQ(ops::default_generator().seed(), 1234u);
  EXPECT_EQ(ops::default_generator().offset(), 0u);
  const auto a = ops::uniform({16}, 0, 1, ops::default_generator()).to_vector<float>();
  EXPECT_EQ(ops::default_generator().offset(), 16u);
  ops::manual_seed(1234);
  EXPECT_EQ(ops::default_generator().offset(), 0u);
  EXPECT_EQ(ops::uniform({16}, 0, 1, ops::default_generator()).to_vector<float>(), a);
}

TEST(RandomGraph, CompiledGraphsReplayTheSameDraw) {
  // Tracing records the counter in the node, so every run of the compiled graph sees the same noise.
  ops::Generator g(77);
  auto f =
      compile([&g](const std::vector<Tensor>& xs) { return std::vector<Tensor>{xs[0] + ops::normal({3}, 0, 1, g)}; });
  const Tensor zero = ops::zeros({3});
  const auto r1 = f({zero})[0].to_vector<float>();
  const auto r2 = f({zero})[0].to_vector<float>();
  EXPECT_EQ(r1, r2);
  ops::Generator h(77);
  EXPECT_EQ(ops::normal({3}, 0, 1, h).to_vector<float>(), r1);
}

TEST(RandomGraph, TextRoundTripKeepsTheNumbers) {
  ops::Generator g(0x8000000000000001ull);  // a seed above INT64_MAX
  g.set_offset(12345);
  ir::Graph graph = trace(
      [&g](const std::vector<Tensor>& xs) {
        return std::vector<Tensor>{ops::uniform({4}, 0, 1, g) + xs[0], ops::randint(0, 100, {4}, g),
                                   ops::bernoulli(ops::sigmoid(xs[0]), g), ops::permutation(5, g),
                                   ops::normal({2}, 1, 2, g, DType::f64)};
      },
      {{DType::f32, {4}}}, {"x"});
  ir::verify(graph);
  const std::string text = ir::print_graph(graph);
  const ir::Graph back = ir::parse_graph(text);
  ir::verify(back);
  EXPECT_EQ(ir::print_graph(back), text);
  const Array x = Array::from_vector<float>({0.1f, -0.2f, 0.3f, 2.0f}, {4});
  const auto run1 = backends::reference_backend().compile(graph)->run({x});
  const auto run2 = backends::reference_backend().compile(back)->run({x});
  ASSERT_EQ(run1.size(), 5u);
  for (size_t i = 0; i < run1.size(); ++i) EXPECT_EQ(run1[i].to_f64(), run2[i].to_f64()) << "output " << i;
}

TEST(RandomGraph, ShapeAndParameterErrors) {
  ops::Generator g(1);
  EXPECT_TESSERA_ERROR(ops::uniform({2, -1}, 0, 1, g), "uniform", "negative", "[2, -1]");
  EXPECT_TESSERA_ERROR(ops::uniform({2}, 1, 1, g), "uniform", "low < high", "low=1", "high=1");
  EXPECT_TESSERA_ERROR(ops::uniform({2}, 2, 1, g), "uniform", "low < high");
  EXPECT_TESSERA_ERROR(ops::uniform({2}, 0, INFINITY, g), "uniform", "finite");
  EXPECT_TESSERA_ERROR(ops::uniform({2}, 0, 1, g, DType::i32), "uniform", "floating", "i32");
  EXPECT_TESSERA_ERROR(ops::uniform({2}, 1.0 + 1e-9, 1.0 + 2e-9, g, DType::f16), "uniform", "no f16 value");
  EXPECT_TESSERA_ERROR(ops::normal({-3}, 0, 1, g), "normal", "negative", "[-3]");
  EXPECT_TESSERA_ERROR(ops::normal({3}, 0, 1, g, DType::boolean), "normal", "floating", "bool");
  EXPECT_TESSERA_ERROR(ops::normal({3}, 0, -1, g), "normal", "std", "-1");
  EXPECT_TESSERA_ERROR(ops::normal({3}, NAN, 1, g), "normal", "finite");
  EXPECT_TESSERA_ERROR(ops::randint(3, 3, {2}, g), "randint", "low < high", "low=3", "high=3");
  EXPECT_TESSERA_ERROR(ops::randint(0, 1, {-2}, g), "randint", "negative");
  EXPECT_TESSERA_ERROR(ops::randint(0, 10, {2}, g, DType::f32), "randint", "integer", "f32");
  EXPECT_TESSERA_ERROR(ops::randint(0, 300, {2}, g, DType::u8), "randint", "[0, 300)", "u8");
  EXPECT_TESSERA_ERROR(ops::randint(-1, 10, {2}, g, DType::u8), "randint", "u8");
  EXPECT_TESSERA_ERROR(ops::randint(-129, 0, {2}, g, DType::i8), "randint", "i8");
  EXPECT_TESSERA_ERROR(ops::permutation(-1, g), "permutation", "non-negative", "-1");
  EXPECT_TESSERA_ERROR(ops::bernoulli(ops::ones({2}, DType::i32), g), "bernoulli", "i32[2]", "floating");
  EXPECT_EQ(g.offset(), 0u);
}

TEST(RandomGraph, BernoulliChecksProbabilitiesWhenEvaluated) {
  ops::Generator g(1);
  const Tensor bad = ops::bernoulli(Tensor::from_vector<float>({0.5f, 1.5f}, {2}), g);  // builds fine
  EXPECT_TESSERA_ERROR(bad.eval(), "bernoulli", "f32[2]", "1.5", "element 1", "[0, 1]");
  EXPECT_TESSERA_ERROR(ops::bernoulli(Tensor::from_vector<double>({-0.1}, {1}), g).eval(), "bernoulli", "-0.1");
  EXPECT_TESSERA_ERROR(ops::bernoulli(Tensor::from_vector<double>({NAN}, {1}), g).eval(), "bernoulli", "nan");
}

TEST(RandomGraph, UnknownAttributesAreRejected) {
  EXPECT_TESSERA_ERROR(
      ir::make_node1(
          "uniform", {},
          ir::Attrs{
              {"seed", int64_t{1}}, {"offset", int64_t{0}}, {"shape", Shape{2}}, {"dtype", DType::f32}, {"low", 0.0}}),
      "uniform", "missing required attribute 'high'");
}
