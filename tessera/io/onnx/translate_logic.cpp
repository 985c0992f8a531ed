// Comparisons (bool results), logical operators on bools, Not and Where. Versions before 7 had the
// explicit `broadcast` flag and are refused.
#include "tessera/io/onnx/translate_util.h"
#include "tessera/io/onnx/translation_table.h"
#include "tessera/ops/binary.h"
#include "tessera/ops/unary.h"

namespace tessera::io::onnx {

namespace {

using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);

void add_compare(TranslationTable& t, const char* op, std::vector<int64_t> versions, int64_t oldest, BinaryFn fn) {
  t.add(op, std::move(versions), oldest, [fn](NodeContext& c) -> std::vector<Tensor> {
    return {fn(c.input(0), c.input(1))};
  });
}

void add_logical(TranslationTable& t, const char* op, BinaryFn fn) {
  t.add(op, {1, 7}, 7, [fn](NodeContext& c) -> std::vector<Tensor> {
    const Tensor a = c.input(0), b = c.input(1);
    if (a.dtype() != DType::boolean || b.dtype() != DType::boolean) {
      c.fail("inputs are {} and {}, expected bool", dtype_name(a.dtype()), dtype_name(b.dtype()));
    }
    return {fn(a, b)};
  });
}

}  // namespace

void add_logic_translations(TranslationTable& t) {
  add_compare(t, "Equal", {1, 7, 11, 13}, 7, ops::eq);
  add_compare(t, "Greater", {1, 7, 9, 13}, 7, ops::gt);
  add_compare(t, "Less", {1, 7, 9, 13}, 7, ops::lt);
  add_compare(t, "GreaterOrEqual", {12, 16}, 12, ops::ge);
  add_compare(t, "LessOrEqual", {12, 16}, 12, ops::le);
  add_logical(t, "And", ops::logical_and);
  add_logical(t, "Or", ops::logical_or);
  add_logical(t, "Xor", ops::ne);
  t.add("Not", {1}, [](NodeContext& c) -> std::vector<Tensor> { return {ops::logical_not(c.input(0))}; });
  t.add("Where", {9, 16}, [](NodeContext& c) -> std::vector<Tensor> {
    return {ops::where(c.input(0), c.input(1), c.input(2))};
  });
}

}  // namespace tessera::io::onnx
