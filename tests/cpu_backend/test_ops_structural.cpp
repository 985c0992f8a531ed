// Differential samples for shape, index, reduction, creation and random ops.
#include "op_samples.h"

namespace tessera::test {
namespace {

// Integer inputs (listed in `index_inputs`) hold valid indices below `n`; the rest are random.
std::function<Array(size_t, const ir::TensorType&, uint64_t)> indices_below(int64_t n,
                                                                            std::vector<size_t> index_inputs) {
  return [n, index_inputs](size_t i, const ir::TensorType& t, uint64_t seed) {
    if (std::find(index_inputs.begin(), index_inputs.end(), i) == index_inputs.end()) {
      return sample_array(t, seed, -2, 2);
    }
    std::vector<double> v = sample_array({DType::i64, t.shape}, seed, 0, 0).to_f64();
    for (double& x : v) x = static_cast<double>((static_cast<int64_t>(x) + 5) % n);
    return Array::from_vector(v, t.shape).astype(t.dtype);
  };
}

void add_shape_samples(std::vector<Sample>& s) {
  for (DType dt : {DType::f32, DType::i64, DType::boolean, DType::f16}) {
    const std::string t = dtype_name(dt);
    s.push_back({"reshape " + t, {{dt, {2, 3, 4}}}, [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                   return {ops::reshape(a[0], {6, 4}), ops::reshape(a[0], {24}), ops::reshape(a[0], {4, -1})};
                 }});
    s.push_back({"permute " + t, {{dt, {2, 3, 4}}}, one_output([](auto& a) { return ops::permute(a[0], {2, 0, 1}); })});
    s.push_back({"broadcast_to " + t, {{dt, {3, 1}}}, one_output([](auto& a) {
                   return ops::broadcast_to(a[0], {2, 3, 5});
                 })});
    s.push_back({"slice " + t, {{dt, {7, 5}}}, [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                   return {ops::slice(a[0], 0, 1, 6, 2), ops::slice(a[0], 1, -1, -6, -2), ops::slice(a[0], 0, 3, 3)};
                 }});
    s.push_back({"split " + t, {{dt, {6, 4}}}, [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                   std::vector<Tensor> p = ops::split(a[0], {1, 3, 2}, 0);
                   std::vector<Tensor> q = ops::split(a[0], {3, 1}, 1);
                   return {p[0], p[1], p[2], q[0], q[1]};
                 }});
    s.push_back({"flip " + t, {{dt, {3, 4}}}, [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                   return {ops::flip(a[0], {0}), ops::flip(a[0], {0, 1}), ops::flip(a[0], {})};
                 }});
    s.push_back({"concat " + t, {{dt, {2, 3}}, {dt, {4, 3}}}, [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                   return {ops::concat({a[0], a[1], a[0]}, 0),
                           ops::concat({ops::transpose(a[1], 0, 1), ops::transpose(a[0], 0, 1)}, 1)};
                 }});
  }
  s.push_back({"views of views into a fallback", {{DType::f32, {4, 6}}}, one_output([](auto& a) {
                 const Tensor v = ops::slice(ops::transpose(a[0], 0, 1), 0, 1, 5, 2);  // strided view
                 return ops::cumsum(ops::reshape(ops::flip(v, {1}), {2, 4}), 1);
               })});
  s.push_back({"squeeze/unsqueeze/rank 0",
               {{DType::f32, {1, 3, 1}}, {DType::f32, {}}},
               [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                 return {ops::squeeze(a[0]), ops::unsqueeze(a[1], 0), ops::reshape(a[1], {1, 1})};
               }});
  s.push_back({"empty views", {{DType::f32, {0, 3}}}, [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                 return {ops::transpose(a[0], 0, 1), ops::reshape(a[0], {3, 0}), ops::slice(a[0], 1, 0, 2)};
               }});
  s.push_back({"pad", {{DType::f32, {3, 4}}}, [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                 return {ops::pad(a[0], {{1, 2}, {0, 3}}, ops::PadMode::Constant, 1.5),
                         ops::pad(a[0], {{2, 1}, {1, 2}}, ops::PadMode::Reflect)};
               }});
  s.push_back({"pad i32", {{DType::i32, {3, 4}}}, one_output([](auto& a) {
                 return ops::pad(a[0], {{0, 1}, {2, 0}});
               })});
  s.push_back({"slice_backward", {{DType::f32, {3, 4}}}, [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                 return {ops::slice_backward(a[0], 0, 1, 2, 8), ops::slice_backward(a[0], 1, 5, -1, 7)};
               }});
}

void add_index_samples(std::vector<Sample>& s) {
  for (DType dt : {DType::f32, DType::f64, DType::i32}) {
    const std::string t = dtype_name(dt);
    Sample g{"gather " + t,
             {{dt, {4, 5}}, {DType::i64, {3, 5}}, {DType::i64, {4, 2}}},
             [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
               return {ops::gather(a[0], 0, a[1]), ops::gather(a[0], 1, a[2])};
             },
             indices_below(4, {1, 2})};
    s.push_back(g);
    s.push_back({"index_select " + t,
                 {{dt, {6, 3}}, {DType::i64, {4}}},
                 one_output([](auto& a) { return ops::index_select(a[0], 0, a[1]); }),
                 indices_below(6, {1})});
    s.push_back({"scatter_add " + t,
                 {{dt, {5, 3}}, {DType::i64, {4, 3}}, {dt, {4, 3}}},
                 one_output([](auto& a) { return ops::scatter_add(a[0], 0, a[1], a[2]); }),
                 indices_below(5, {1})});
  }
  for (DType dt : {DType::f32, DType::i32, DType::boolean}) {
    Sample copy{std::string("index_copy ") + dtype_name(dt),
                {{dt, {6, 3}}, {DType::i64, {2}}, {dt, {2, 3}}, {dt, {6, 2}}},
                [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                  return {ops::index_copy(a[0], 0, a[1], a[2]),
                          ops::index_copy(ops::transpose(a[0], 0, 1), 1, a[1], ops::transpose(a[2], 0, 1)),
                          ops::index_copy(a[0], 1, Tensor::from_vector<int64_t>({2}, {1}), ops::slice(a[3], 1, 0, 1))};
                }};
    copy.data = [](size_t i, const ir::TensorType& t, uint64_t seed) {
      if (i != 1) return sample_array(t, seed, -2, 2);
      return Array::from_vector<int64_t>({static_cast<int64_t>(seed % 3) + 3, static_cast<int64_t>(seed % 2)}, t.shape);
    };
    s.push_back(copy);
  }
  s.push_back({"one_hot",
               {{DType::i64, {2, 3}}},
               [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                 return {ops::one_hot(a[0], 7), ops::one_hot(a[0], 5, DType::i32)};
               },
               indices_below(5, {0})});
  s.push_back({"embedding and its gradient",
               {{DType::f32, {6, 4}}, {DType::i64, {2, 3}}, {DType::f32, {2, 3, 4}}},
               [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                 return {ops::embedding(a[0], a[1]),
                         node1("embedding_grad", {a[2], a[1]}, ir::Attrs{{"num_embeddings", int64_t{6}}})};
               },
               indices_below(6, {1})});
}

void add_reduce_samples(std::vector<Sample>& s) {
  using ReduceFn = Tensor (*)(const Tensor&, const ops::Axes&, bool);
  const std::vector<std::pair<const char*, ReduceFn>> reductions = {{"sum", ops::sum},   {"mean", ops::mean},
                                                                    {"max", ops::max},   {"min", ops::min},
                                                                    {"prod", ops::prod}, {"logsumexp", ops::logsumexp}};
  for (auto [name, f] : reductions) {
    for (DType dt : {DType::f32, DType::f64, DType::i32, DType::boolean, DType::bf16}) {
      Sample r{std::string(name) + " " + dtype_name(dt),
               {{dt, {3, 4, 5}}},
               [f = f](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                 return {f(a[0], {}, false),     f(a[0], {0}, false), f(a[0], {2}, true),
                         f(a[0], {0, 2}, false), f(a[0], {-2}, true), f(a[0], {1, 2}, false)};
               }};
      r.lo = -1.5;
      r.hi = 1.5;
      r.optional = dt != DType::f32 && dt != DType::f64;
      s.push_back(std::move(r));
    }
    Sample r0{std::string(name) + " rank 0 and wide rows",
              {{DType::f32, {}}, {DType::f32, {3, 1000}}},
              [f = f](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                return {f(a[0], {}, false), f(a[1], {1}, false), f(a[1], {0}, true)};
              }};
    r0.lo = -1;
    r0.hi = 1;
    s.push_back(std::move(r0));
  }
  s.push_back(
      {"sum/mean/prod of empty", {{DType::f32, {0, 3}}}, [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
         return {ops::sum(a[0]), ops::sum(a[0], {0}), ops::mean(a[0], {1}), ops::prod(a[0], {0})};
       }});
  for (DType dt : {DType::f32, DType::i32, DType::f64}) {
    s.push_back({std::string("argmax/argmin ") + dtype_name(dt),
                 {{dt, {4, 6}}},
                 [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                   return {ops::argmax(a[0], 1), ops::argmin(a[0], 0, true), ops::argmax(a[0], -2, false)};
                 }});
    s.push_back({std::string("cumsum ") + dtype_name(dt),
                 {{dt, {4, 6}}},
                 [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                   return {ops::cumsum(a[0], 1), ops::cumsum(a[0], 0, true)};
                 }});
  }
}

void add_creation_samples(std::vector<Sample>& s) {
  s.push_back({"creation", {{DType::f32, {2, 3}}}, [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                 return {ops::arange(0.5, 4.0, 0.75), ops::arange(5),
                         ops::eye(3, 4, 1),           ops::full({2, 2}, 3.5, DType::i32),
                         a[0] + ops::full({3}, 2.0),  ops::zeros({0, 2})};
               }});
  s.push_back({"random", {{DType::f32, {3, 4}}}, [](const std::vector<Tensor>& a) -> std::vector<Tensor> {
                 ops::Generator gen(7);
                 return {ops::uniform({5, 3}, -1, 2, gen), ops::normal({4}, 1, 2, gen, DType::f64),
                         ops::bernoulli(ops::sigmoid(a[0]), gen), ops::randint(0, 9, {6}, gen),
                         ops::permutation(8, gen)};
               }});
}

}  // namespace

std::vector<Sample> structural_samples() {
  std::vector<Sample> s;
  add_shape_samples(s);
  add_index_samples(s);
  add_reduce_samples(s);
  add_creation_samples(s);
  return s;
}

}  // namespace tessera::test
