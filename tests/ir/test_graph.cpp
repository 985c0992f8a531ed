// Graph construction, the verifier, DOT export, the op registry and leaf identity.
#include <memory>

#include "ir_test_ops.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

// A node made directly, bypassing make_node's checks, to hand the verifier a broken graph.
ir::Value raw_node(const std::string& op, std::vector<ir::Value> inputs, ir::Attrs attrs,
                   std::vector<ir::TensorType> outputs) {
  auto node = std::make_shared<const ir::Node>(&ir::OpRegistry::instance().get(op), std::move(inputs), std::move(attrs),
                                               std::move(outputs));
  return ir::Value(node, 0);
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST(Graph, BuildOrdersNodesTopologically) {
  ir::Value x = ir::make_input("x", {DType::f32, {2}});
  Tensor a = ops::neg(Tensor(x));
  Tensor b = ops::exp(a);
  Tensor c = a + b;  // diamond: a is used twice but appears once
  const ir::Graph g = ir::Graph::build({x}, {c.value(), b.value()});
  ASSERT_EQ(g.nodes().size(), 3u);
  EXPECT_EQ(g.nodes()[0]->op_name(), "neg");
  EXPECT_EQ(g.nodes()[1]->op_name(), "exp");
  EXPECT_EQ(g.nodes()[2]->op_name(), "add");
  EXPECT_EQ(g.name(), "main");
  EXPECT_TRUE(g.is_input(x));
  EXPECT_FALSE(g.is_input(a.value()));
  EXPECT_EQ(g.output_types(), (std::vector<ir::TensorType>{{DType::f32, {2}}, {DType::f32, {2}}}));
}

TEST(Graph, BuildWithAnUnboundInputThrowsNamingIt) {
  ir::Value x = ir::make_input("x", {DType::f32, {2}});
  ir::Value w = ir::make_input("weights", {DType::f64, {3, 2}});
  Tensor y = ops::sum(Tensor(w), {0}) + ops::cast(Tensor(x), DType::f64);
  EXPECT_TESSERA_ERROR(ir::Graph::build({x}, {y.value()}), "Graph::build", "input 'weights'", "f64[3, 2]", "not bound");
  EXPECT_NO_THROW(ir::Graph::build({x, w}, {y.value()}));
  EXPECT_TESSERA_ERROR(ir::Graph::build({x}, {ir::Value()}), "undefined output");
  EXPECT_TESSERA_ERROR(ir::Graph::build({ir::Value()}, {x}), "undefined input");
}

TEST(Graph, LeavesKeepTheirIdentity) {
  // Two constants with equal data (and two inputs with equal name and type) are different nodes.
  const Array data = Array::from_vector<float>({1, 2}, {2});
  ir::Value c1 = ir::make_constant(data), c2 = ir::make_constant(data);
  EXPECT_NE(c1.node(), c2.node());
  EXPECT_NE(c1.node()->id(), c2.node()->id());
  EXPECT_TRUE(c1.node()->attrs() == c2.node()->attrs());
  const ir::Graph g = ir::Graph::build({}, {ops::add(Tensor(c1), Tensor(c2)).value()});
  EXPECT_EQ(g.nodes().size(), 3u);
  const std::string text = ir::print_graph(g);
  EXPECT_NE(text.find("%2 = add(%0, %1)"), std::string::npos) << text;
  // Parsing keeps them apart too.
  EXPECT_EQ(ir::parse_graph(text).nodes().size(), 3u);

  ir::Value x1 = ir::make_input("x", {DType::f32, {2}}), x2 = ir::make_input("x", {DType::f32, {2}});
  EXPECT_NE(x1, x2);
  Tensor sum = Tensor(x1) + Tensor(x2);
  EXPECT_TESSERA_ERROR(ir::Graph::build({x1}, {sum.value()}), "input 'x'");
  EXPECT_EQ(ir::Graph::build({x1, x2}, {sum.value()}).nodes().size(), 1u);
  // Node ids increase in creation order.
  EXPECT_LT(x1.node()->id(), x2.node()->id());
}

namespace {
// Drops nodes last-first, so that each release frees one node.
void release_last_first(std::vector<ir::NodePtr>& nodes) {
  while (!nodes.empty()) nodes.pop_back();
}
}  // namespace

TEST(Graph, DeepChainDoesNotOverflowTheStack) {
  constexpr int kDepth = 100000;
  std::vector<ir::NodePtr> keep;  // every node of every chain below, released safely at the end
  {
    ir::Value x = ir::make_input("x", {DType::f32, {1}});
    Tensor t(x);
    for (int i = 0; i < kDepth; ++i) {
      t = ops::neg(t);
      keep.push_back(t.value().node());
    }
    const ir::Graph g = ir::Graph::build({x}, {t.value()});
    EXPECT_EQ(g.nodes().size(), static_cast<size_t>(kDepth));
    EXPECT_EQ(g.nodes().front()->inputs()[0], x);
    EXPECT_EQ(g.nodes().back(), t.value().node());
    ir::verify(g);
    const std::string text = ir::print_graph(g);
    const ir::Graph parsed = ir::parse_graph(text);
    EXPECT_EQ(parsed.nodes().size(), static_cast<size_t>(kDepth));
    keep.insert(keep.end(), parsed.nodes().begin(), parsed.nodes().end());
    // Evaluating the chain walks it iteratively as well.
    Tensor u = Tensor::from_vector<double>({1.5}, {1});
    for (int i = 0; i < kDepth + 1; ++i) {
      u = ops::neg(u);
      keep.push_back(u.value().node());
    }
    EXPECT_EQ(u.item(), -1.5);
  }
  release_last_first(keep);
}

// Dropping the only handle to a long chain must not recurse once per node (~Node releases its
// inputs through a worklist); a recursive release overflows an 8 MiB stack near 150k nodes.
TEST(Graph, VeryDeepChainCanBeReleased) {
  constexpr int kDepth = 1000000;
  {
    Tensor t = Tensor::from_vector<float>({1}, {1});
    for (int i = 0; i < kDepth; ++i) t = ops::neg(t);
  }
  SUCCEED();
}

TEST(Verify, AcceptsWellFormedGraphs) {
  ir::Graph g =
      trace([](const std::vector<Tensor>& xs) { return std::vector<Tensor>{ops::sum(ops::relu(xs[0]) * xs[0], {0})}; },
            {{DType::f32, {3, 2}}});
  EXPECT_NO_THROW(ir::verify(g));
}

TEST(Verify, CatchesWrongRecordedOutputType) {
  ir::Value x = ir::make_input("x", {DType::f32, {2, 3}});
  ir::Value bad = raw_node("neg", {x}, {}, {{DType::f32, {3, 2}}});
  EXPECT_TESSERA_ERROR(ir::verify(ir::Graph::build({x}, {bad})), "neg", "f32[2, 3]",
                       "declared output types (f32[3, 2]) differ from the inferred (f32[2, 3])");
}

TEST(Verify, CatchesAttributeSchemaViolations) {
  ir::Value x = ir::make_input("x", {DType::f32, {2, 3}});
  const ir::Graph missing =
      ir::Graph::build({x}, {raw_node("sum", {x}, {{"axes", std::vector<int64_t>{0}}}, {{DType::f32, {3}}})});
  EXPECT_TESSERA_ERROR(ir::verify(missing), "sum", "missing required attribute 'keepdims'");
  const ir::Graph wrong_kind =
      ir::Graph::build({x}, {raw_node("sum", {x}, {{"axes", int64_t{0}}, {"keepdims", false}}, {{DType::f32, {3}}})});
  EXPECT_TESSERA_ERROR(ir::verify(wrong_kind), "sum", "attribute 'axes' is a int, expected a int list");
  const ir::Graph unknown = ir::Graph::build({x}, {raw_node("neg", {x}, {{"alpha", 1.0}}, {{DType::f32, {2, 3}}})});
  EXPECT_TESSERA_ERROR(ir::verify(unknown), "neg", "unknown attribute 'alpha'");
}

TEST(Verify, CatchesWrongInputCountAndShapes) {
  ir::Value x = ir::make_input("x", {DType::f32, {2, 3}});
  ir::Value y = ir::make_input("y", {DType::f32, {4}});
  const ir::Graph arity = ir::Graph::build({x}, {raw_node("add", {x}, {}, {{DType::f32, {2, 3}}})});
  EXPECT_TESSERA_ERROR(ir::verify(arity), "add", "expected 2 inputs, got 1");
  const ir::Graph shapes = ir::Graph::build({x, y}, {raw_node("add", {x, y}, {}, {{DType::f32, {2, 3}}})});
  EXPECT_TESSERA_ERROR(ir::verify(shapes), "add", "f32[2, 3]", "f32[4]");
}

TEST(Verify, CatchesProblemsBehindCorrectNodes) {
  // The broken node is in the middle; a later, well-formed node consumes it.
  ir::Value x = ir::make_input("x", {DType::f32, {2}});
  ir::Value bad = raw_node("exp", {x}, {}, {{DType::f64, {2}}});
  ir::Value later = ops::neg(Tensor(bad)).value();
  EXPECT_TESSERA_ERROR(ir::verify(ir::Graph::build({x}, {later})), "exp", "declared output types (f64[2])");
}

TEST(Dot, ContainsNodesEdgesAndOutputs) {
  register_ir_test_ops();
  ir::Value x = ir::make_input("x", {DType::f32, {2, 3}});
  const std::vector<ir::Value> parts = ir::make_node("test.split2", {x});
  Tensor c = Tensor::from_vector<float>({2}, {1}, "two");
  Tensor y = ops::mul(Tensor(parts[0]), c);
  const ir::Graph g = ir::Graph::build({x}, {y.value(), parts[1]}, "dotted");
  const std::string dot = ir::graph_to_dot(g);
  EXPECT_EQ(dot.rfind("digraph \"dotted\" {\n", 0), 0u) << dot;
  EXPECT_EQ(dot.substr(dot.size() - 2), "}\n");
  EXPECT_TRUE(contains(dot, "in0 [label=\"x\\nf32[2, 3]\", shape=ellipse];")) << dot;
  EXPECT_TRUE(contains(dot, "n0 [label=\"test.split2\\nf32[2, 3]\\ni64[2, 3]\"];")) << dot;
  EXPECT_TRUE(contains(dot, "in0 -> n0")) << dot;
  EXPECT_TRUE(contains(dot,
                       "label=\"constant\\nname=\\\"two\\\"\\nvalue=dense<f32[1], 0x00000040>\\nf32[1]\", "
                       "style=filled, fillcolor=lightgrey"))
      << dot;
  EXPECT_TRUE(contains(dot, "n0 -> n2 [label=\"#0\"];")) << dot;  // edges from multi-output nodes name the output
  EXPECT_TRUE(contains(dot, "n1 -> n2 [label=\"\"];")) << dot;
  EXPECT_TRUE(contains(dot, "n2 -> out0;")) << dot;
  EXPECT_TRUE(contains(dot, "n0 -> out1;")) << dot;
  // One node statement per node and input, one edge per node input plus one per output.
  int edges = 0;
  for (size_t pos = 0; (pos = dot.find(" -> ", pos)) != std::string::npos; ++pos) ++edges;
  EXPECT_EQ(edges, 3 + 2);
}

TEST(Dot, EscapesAndShortensLabels) {
  ir::Value x = ir::make_input("say \"hi\"", {DType::f32, {64}});
  Tensor big = Tensor::from_array(Array::zeros(DType::f32, {64}));
  const std::string dot = ir::graph_to_dot(ir::Graph::build({x}, {(Tensor(x) + big).value()}, "q\"g"));
  EXPECT_TRUE(contains(dot, "digraph \"q\\\"g\"")) << dot;
  EXPECT_TRUE(contains(dot, "label=\"say \\\"hi\\\"\\nf32[64]\"")) << dot;
  EXPECT_TRUE(contains(dot, "value=dense<f32[64], 0x" + std::string(20, '0') + "...\\nf32[64]"))
      << dot;  // long attributes are cut
  EXPECT_FALSE(contains(dot, std::string(64, '0')));
}

TEST(OpRegistry, EveryOpIsComplete) {
  const ir::OpRegistry& registry = ir::OpRegistry::instance();
  const std::vector<std::string> names = registry.names();
  ASSERT_GE(names.size(), 20u);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "duplicate op name";
  for (const std::string& name : names) {
    const ir::OpDef& op = registry.get(name);
    EXPECT_EQ(op.name, name);
    EXPECT_TRUE(static_cast<bool>(op.infer)) << name << " has no shape inference";
    EXPECT_TRUE(static_cast<bool>(op.reference)) << name << " has no reference implementation";
    EXPECT_GE(op.min_inputs, 0) << name;
    EXPECT_TRUE(op.max_inputs < 0 || op.max_inputs >= op.min_inputs) << name;
    for (size_t i = 0; i < op.attrs.size(); ++i) {
      for (size_t j = i + 1; j < op.attrs.size(); ++j) {
        EXPECT_NE(op.attrs[i].name, op.attrs[j].name) << name << " declares an attribute twice";
      }
    }
    if (op.has(ir::kLeaf)) {
      EXPECT_EQ(op.max_inputs, 0) << name << ": leaves take no inputs";
    }
    EXPECT_EQ(registry.find(name), &op);
  }
  for (const char* core : {"input", "constant", "add", "mul", "neg", "exp", "sum", "reshape", "cast"}) {
    EXPECT_NE(registry.find(core), nullptr) << core;
  }
}

TEST(OpRegistry, RejectsIncompleteOrDuplicateDefinitions) {
  ir::OpRegistry& registry = ir::OpRegistry::instance();
  EXPECT_TESSERA_ERROR(registry.get("no_such_op"), "unknown op 'no_such_op'");
  EXPECT_EQ(registry.find("no_such_op"), nullptr);
  const ir::OpDef& neg = registry.get("neg");
  EXPECT_TESSERA_ERROR(registry.add(ir::OpDef{.name = "neg", .infer = neg.infer, .reference = neg.reference}),
                       "'neg' registered twice");
  EXPECT_TESSERA_ERROR(registry.add(ir::OpDef{.name = "test.no_infer", .reference = neg.reference}),
                       "'test.no_infer' has no shape inference");
  EXPECT_TESSERA_ERROR(registry.add(ir::OpDef{.name = "test.no_reference", .infer = neg.infer}),
                       "'test.no_reference' has no reference implementation");
  EXPECT_TESSERA_ERROR(registry.add(ir::OpDef{.infer = neg.infer, .reference = neg.reference}), "empty name");
  EXPECT_EQ(registry.find("test.no_infer"), nullptr);
  EXPECT_TESSERA_ERROR(ir::make_node1("no_such_op", {}), "unknown op 'no_such_op'");
}

TEST(Node, MakeNodeChecksSchemaAndInputs) {
  ir::Value x = ir::make_input("x", {DType::f32, {2}});
  EXPECT_TESSERA_ERROR(ir::make_node1("neg", {x, x}), "op 'neg' with inputs (f32[2], f32[2])",
                       "expected 1 inputs, got 2");
  EXPECT_TESSERA_ERROR(ir::make_node1("neg", {ir::Value()}), "op 'neg'", "input 0 is undefined");
  EXPECT_TESSERA_ERROR(ir::make_node1("leaky_relu", {x}, {{"negative_slope", std::string("big")}}), "leaky_relu",
                       "attribute 'negative_slope' is a string, expected a float");
  // An int is accepted where a float is declared.
  EXPECT_NO_THROW(ir::make_node1("leaky_relu", {x}, {{"negative_slope", int64_t{2}}}));
  EXPECT_TESSERA_ERROR(ir::make_input("x", {DType::f32, {-1}}), "input 'x'", "negative dimension");
  EXPECT_TESSERA_ERROR(ir::make_constant(Array()), "make_constant", "undefined");
}
