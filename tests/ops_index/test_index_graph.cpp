// The index ops inside graphs: traced, verified, printed and parsed back, and run compiled.
#include "ops_shape/helpers.h"

using namespace tessera;
using namespace tessera::test;

namespace {
std::vector<Tensor> index_ops(const std::vector<Tensor>& xs) {
  const Tensor &x = xs[0], &index = xs[1], &rows = xs[2];
  return {ops::gather(x, 1, index), ops::index_select(x, 0, rows),
          ops::scatter_add(x, 1, index, ops::gather(x, 1, index) * 2.0), ops::one_hot(index, 4, DType::f64)};
}
}  // namespace

TEST(IndexGraph, TextRoundTripAndCompiledRun) {
  const std::vector<ir::TensorType> types = {{DType::f32, {3, 4}}, {DType::i64, {3, 2}}, {DType::i32, {5}}};
  ir::Graph g = trace(index_ops, types, {"x", "index", "rows"});
  ir::verify(g);
  const std::string text = ir::print_graph(g);
  ir::Graph back = ir::parse_graph(text);
  ir::verify(back);
  EXPECT_EQ(ir::print_graph(back), text) << text;

  const std::vector<Tensor> args = {iota_tensor({3, 4}), Tensor::from_vector<int64_t>({3, 0, 1, 1, 2, 0}, {3, 2}),
                                    Tensor::from_vector<int32_t>({2, 2, 0, 1, 0}, {5})};
  const std::vector<Tensor> eager = index_ops(args);
  auto compiled = compile(index_ops);
  const std::vector<Tensor> run = compiled(args);
  ASSERT_EQ(run.size(), eager.size());
  for (size_t i = 0; i < run.size(); ++i) expect_close(run[i], eager[i].array().to_f64());
  // A bad index raises the same error through the compiled path.
  const std::vector<Tensor> bad = {args[0], Tensor::from_vector<int64_t>({3, 0, 1, 4, 2, 0}, {3, 2}), args[2]};
  EXPECT_TESSERA_ERROR(compiled(bad), "gather", "index 4", "axis 1", "size 4");
}
