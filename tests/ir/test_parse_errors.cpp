// Parser diagnostics: every malformed text raises tessera::Error naming the line and column and what
// was wrong (unknown op, undefined or redefined value, wrong attribute kind, type mismatch, ...).
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {
const std::string kHeader = "graph @g(%0: f32[2, 3] {name = \"x\"}) {\n";
std::string body(const std::string& statements) {
  return kHeader + statements + "}\n";
}
}  // namespace

TEST(ParseErrors, ReportLineAndColumn) {
  // The unknown op starts at line 3, column 8 (after "  %2 = ").
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %1 = neg(%0) : f32[2, 3]\n  %2 = frobnicate(%1) : f32[2, 3]\n"
                                            "  return %2\n")),
                       "IR text line 3, column", "unknown op 'frobnicate'");
  try {
    ir::parse_graph("graph @g() {\n  return\n}\n  junk");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "IR text line 4, column 3: unexpected text after the graph");
  }
  try {
    ir::parse_graph("graph @g(%0: f32[2] {name = \"x\"}) {\n  %1 = neg(%0) : f32[2]\n  return %1 %0\n}\n");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "IR text line 3, column 13: expected '}'");
  }
}

TEST(ParseErrors, UnknownOp) {
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %1 = no_such_op(%0) : f32[2, 3]\n  return %1\n")), "line 2, column",
                       "unknown op 'no_such_op'");
}

TEST(ParseErrors, UndefinedValue) {
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %1 = neg(%7) : f32[2, 3]\n  return %1\n")), "line 2",
                       "value %7 used before it is defined");
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  return %4\n")), "line 2", "value %4 used before it is defined");
  // A value may not be used before the statement that defines it, even if defined later.
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %1 = neg(%2) : f32[2, 3]\n  %2 = neg(%0) : f32[2, 3]\n"
                                            "  return %1\n")),
                       "line 2", "value %2 used before it is defined");
}

TEST(ParseErrors, RedefinedValue) {
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %1 = neg(%0) : f32[2, 3]\n  %1 = abs(%0) : f32[2, 3]\n"
                                            "  return %1\n")),
                       "IR text line", "value %1 defined twice");
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %0 = neg(%0) : f32[2, 3]\n  return %0\n")), "value %0 defined twice");
  EXPECT_TESSERA_ERROR(
      ir::parse_graph("graph @g(%0: f32[2] {name = \"a\"}, %0: f32[2] {name = \"b\"}) {\n  return %0\n}\n"), "line 1",
      "value %0 defined twice");
}

TEST(ParseErrors, WrongAttributeKind) {
  // sum's axes is an int list, keepdims a bool; leaky_relu's slope a float; cast's dtype a dtype.
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %1 = sum(%0) {axes = 1, keepdims = false} : f32[2]\n  return %1\n")),
                       "line 2", "expected '['");
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %1 = sum(%0) {axes = [1], keepdims = \"no\"} : f32[2]\n  return %1\n")),
                       "line 2", "expected a name");
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %1 = sum(%0) {axes = [1], keepdims = 1} : f32[2]\n  return %1\n")),
                       "line 2", "expected true or false");
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %1 = sum(%0) {axes = [1], keepdims = yes} : f32[2]\n  return %1\n")),
                       "line 2", "expected true or false");
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %1 = sum(%0) {axes = [1.5], keepdims = false} : f32[2]\n  return %1\n")),
                       "line 2", "expected ','");
  EXPECT_TESSERA_ERROR(
      ir::parse_graph(body("  %1 = leaky_relu(%0) {negative_slope = \"x\"} : f32[2, 3]\n  return %1\n")), "line 2",
      "expected a number");
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %1 = cast(%0) {dtype = f33} : f32[2, 3]\n  return %1\n")), "line 2",
                       "unknown dtype 'f33'");
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %1 = neg(%0) {alpha = 1.0} : f32[2, 3]\n  return %1\n")), "line 2",
                       "op 'neg' has no attribute 'alpha'");
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %1 = sum(%0) : f32[]\n  return %1\n")), "IR text line", "sum",
                       "missing required attribute 'axes'");
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %1 = reshape(%0) {shape = [9999999999999999999999]} : f32[6]\n"
                                            "  return %1\n")),
                       "line 2", "integer out of range");
}

TEST(ParseErrors, TypeMismatchAgainstInference) {
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %1 = neg(%0) : f32[3, 2]\n  return %1\n")), "IR text line", "neg",
                       "f32[2, 3]", "declared output types (f32[3, 2]) differ from the inferred (f32[2, 3])");
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %1 = isnan(%0) : f32[2, 3]\n  return %1\n")),
                       "declared output types (f32[2, 3]) differ from the inferred (bool[2, 3])");
  // Shape errors of the op itself are reported with the line.
  EXPECT_TESSERA_ERROR(ir::parse_graph("graph @g(%0: f32[2] {name = \"a\"}, %1: f32[3] {name = \"b\"}) {\n"
                                       "  %2 = add(%0, %1) : f32[3]\n  return %2\n}\n"),
                       "IR text line", "op 'add' with inputs (f32[2], f32[3])", "broadcast");
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %1 = add(%0) : f32[2, 3]\n  return %1\n")), "IR text line",
                       "expected 2 inputs, got 1");
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %1, %2 = neg(%0) : f32[2, 3]\n  return %1\n")),
                       "2 results named but 1 types given");
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %1, %2 = neg(%0) : f32[2, 3], f32[2, 3]\n  return %1\n")),
                       "IR text line", "declared output types");
}

TEST(ParseErrors, MalformedStructure) {
  EXPECT_TESSERA_ERROR(ir::parse_graph(""), "line 1, column 1", "expected 'graph'");
  EXPECT_TESSERA_ERROR(ir::parse_graph("graph g() {}"), "expected '@'");
  EXPECT_TESSERA_ERROR(ir::parse_graph("graph @g(%0 f32[2]) {}"), "line 1, column 13", "expected ':'");
  EXPECT_TESSERA_ERROR(ir::parse_graph(kHeader + "  %1 = neg(%0) : f32[2, 3]\n"), "expected '%'");
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %1 = neg(%0 : f32[2, 3]\n  return %1\n")), "expected ','");
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %-1 = neg(%0) : f32[2, 3]\n  return %0\n")), "bad value number");
  EXPECT_TESSERA_ERROR(ir::parse_graph("graph @g(%0: f32[2] {name = \"x}) {\n  return %0\n}\n"), "unterminated string");
  EXPECT_TESSERA_ERROR(
      ir::parse_graph("graph @g() {\n  %0 = constant() {value = dense<f32[2], 0x0000>} : f32[2]\n  return %0\n}\n"),
      "line 2", "dense literal");
  EXPECT_TESSERA_ERROR(
      ir::parse_graph("graph @g() {\n  %0 = constant() {value = dense<i8[2], 0x0g>} : i8[2]\n  return %0\n}\n"),
      "line 2", "bad hex digit");
  EXPECT_TESSERA_ERROR(
      ir::parse_graph("graph @g() {\n  %0 = constant() {value = dense<i8[2], 0x0102ff>} : i8[2]\n  return %0\n}\n"),
      "line 2", "expected '>'");
}

// Errors found while building a node (type mismatch, schema, shape rules) and redefinitions point at
// the offending statement, not at the text after it.
TEST(ParseErrors, SemanticErrorsPointAtTheStatement) {
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %1 = neg(%0) : f32[3, 2]\n  return %1\n")), "line 2, column 3");
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %1 = sum(%0) : f32[]\n  return %1\n")), "line 2, column 3");
  EXPECT_TESSERA_ERROR(ir::parse_graph(body("  %1 = neg(%0) : f32[2, 3]\n  %1 = abs(%0) : f32[2, 3]\n"
                                            "  return %1\n")),
                       "line 3, column 3", "value %1 defined twice");
}

TEST(ParseErrors, CommentsAndWhitespaceAreAccepted) {
  const ir::Graph g = ir::parse_graph(
      "# leading comment\ngraph @g ( %0 : f32 [ 2 , 3 ] { name = \"x\" } ) {  # trailing\n"
      "\t%1=neg(%0):f32[2,3]   # comment after a statement\n\n  return %1 }");
  EXPECT_EQ(ir::print_graph(g),
            "graph @g(%0: f32[2, 3] {name = \"x\"}) {\n  %1 = neg(%0) : f32[2, 3]\n  return %1\n}\n");
}

TEST(ParseErrors, DenseLiteralsAreCheckedBeforeAllocating) {
  // A literal declaring 2^47 bytes used to allocate them (128 TiB; ASan aborts) before finding that
  // the text holds one byte.
  const auto graph_with = [](const std::string& type) {
    return "graph @g() {\n  %0 = constant() {value = dense<" + type + ", 0x00>} : " + type + "\n  return %0\n}\n";
  };
  EXPECT_TESSERA_ERROR(ir::parse_graph(graph_with("u8[140737488355328]")), "dense literal has 1 bytes",
                       "needs 140737488355328");
  EXPECT_TESSERA_ERROR(ir::parse_graph(graph_with("f64[4611686018427387904, 4]")), "dense literal type", "too large");
  EXPECT_TESSERA_ERROR(ir::parse_graph(graph_with("u8[-1]")), "negative dimension");
  EXPECT_TESSERA_ERROR(ir::parse_graph(graph_with("u8[0, 4611686018427387904, 4]")), "too large");
  EXPECT_NO_THROW(ir::parse_graph(graph_with("u8[1]")));
}
