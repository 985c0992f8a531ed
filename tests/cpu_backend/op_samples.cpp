#include "op_samples.h"

#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>

namespace tessera::test {

Array sample_array(const ir::TensorType& type, uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(static_cast<size_t>(type.numel()));
  if (is_floating(type.dtype)) {
    std::uniform_real_distribution<double> dist(lo, hi);
    for (double& x : v) x = dist(rng);
  } else if (type.dtype == DType::boolean) {
    for (double& x : v) x = static_cast<double>(rng() % 2);
  } else {
    const int64_t low = type.dtype == DType::u8 ? 0 : -5;
    for (double& x : v) x = static_cast<double>(low + static_cast<int64_t>(rng() % 11));
  }
  return Array::from_vector(v, type.shape).astype(type.dtype);
}

MultiFn one_output(std::function<Tensor(const std::vector<Tensor>&)> f) {
  return [f](const std::vector<Tensor>& a) -> std::vector<Tensor> { return {f(a)}; };
}

Array strided_copy_of(const Array& a) {
  if (a.rank() == 0 || a.numel() == 0) return a;
  Shape big = a.shape();
  big.back() *= 2;
  Array storage = Array::zeros(a.dtype(), big);
  Array view = storage.slice(a.rank() - 1, 0, big.back(), 2);
  view.copy_from(a);
  return view;
}

std::vector<std::string> check_sample(const Sample& s, bool strided_inputs) {
  if (std::getenv("TESSERA_TEST_VERBOSE") != nullptr) fprintf(stderr, "sample: %s\n", s.name.c_str());
  ir::Graph g;
  try {
    g = trace(s.fn, s.inputs);
  } catch (const Error& e) {
    if (!s.optional) ADD_FAILURE() << s.name << ": tracing failed: " << e.what();
    return {};
  }
  std::vector<Array> inputs;
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    const uint64_t seed = 1000 + 17 * i + std::hash<std::string>()(s.name) % 1000;
    Array a = s.data ? s.data(i, s.inputs[i], seed) : sample_array(s.inputs[i], seed, s.lo, s.hi);
    inputs.push_back(strided_inputs ? strided_copy_of(a) : a);
  }
  expect_matches_reference(g, inputs, s.name + (strided_inputs ? " (strided inputs)" : ""), s.tol);
  std::set<std::string> ops;
  for (const ir::NodePtr& n : g.nodes()) ops.insert(n->op_name());
  for (const ir::Value& v : g.inputs()) ops.insert(v.node()->op_name());
  return {ops.begin(), ops.end()};
}

namespace {

using backends::cpu::JitMode;

std::vector<Sample> all_samples() {
  std::vector<Sample> all = elementwise_samples();
  for (auto& s : structural_samples()) all.push_back(std::move(s));
  for (auto& s : nn_samples()) all.push_back(std::move(s));
  return all;
}

// Every registered op appears in at least one sample graph.
TEST(Differential, SamplesCoverEveryRegisteredOp) {
  ScopedJit jit(JitMode::off);
  std::set<std::string> covered;
  for (const Sample& s : all_samples()) {
    for (const std::string& op : check_sample(s, false)) covered.insert(op);
  }
  std::string missing;
  for (const std::string& op : ir::OpRegistry::instance().names()) {
    if (covered.count(op) == 0) missing += " " + op;
  }
  EXPECT_EQ(missing, "") << "ops without a differential sample";
}

// With generated kernels, all samples run as one graph: one compiler run instead of hundreds.
void check_all_in_one_graph(const std::vector<Sample>& samples) {
  std::vector<const Sample*> used;
  std::vector<ir::TensorType> types;
  std::vector<size_t> first_input, first_output;
  for (const Sample& s : samples) {
    try {
      trace(s.fn, s.inputs);
    } catch (const Error&) {
      continue;  // input types the op rejects (optional samples; check_sample reports the others)
    }
    used.push_back(&s);
    first_input.push_back(types.size());
    types.insert(types.end(), s.inputs.begin(), s.inputs.end());
  }
  MultiFn all = [&](const std::vector<Tensor>& a) -> std::vector<Tensor> {
    std::vector<Tensor> out;
    first_output.clear();
    for (size_t k = 0; k < used.size(); ++k) {
      const auto begin = a.begin() + static_cast<std::ptrdiff_t>(first_input[k]);
      first_output.push_back(out.size());
      for (const Tensor& t : used[k]->fn({begin, begin + static_cast<std::ptrdiff_t>(used[k]->inputs.size())})) {
        out.push_back(t);
      }
    }
    first_output.push_back(out.size());
    return out;
  };
  const ir::Graph g = trace(all, types);
  for (bool strided : {false, true}) {
    std::vector<Array> inputs;
    for (size_t k = 0; k < used.size(); ++k) {
      const Sample& s = *used[k];
      for (size_t i = 0; i < s.inputs.size(); ++i) {
        const uint64_t seed = 1000 + 17 * i + std::hash<std::string>()(s.name) % 1000;
        Array a = s.data ? s.data(i, s.inputs[i], seed) : sample_array(s.inputs[i], seed, s.lo, s.hi);
        inputs.push_back(strided && s.strided ? strided_copy_of(a) : a);
      }
    }
    const std::vector<Array> expected = backends::reference_backend().compile(g)->run(inputs);
    auto exe = backend_under_test().compile(g);
    if (testing_cpu()) {
      EXPECT_TRUE(backends::cpu::compile_info(*exe).jit_used);
    }
    std::vector<Array> got = exe->run(inputs);
    for (Array& a : got) a = a.to(host_device());
    for (size_t k = 0; k < used.size(); ++k) {
      for (size_t o = first_output[k]; o < first_output[k + 1]; ++o) {
        const double t = used[k]->tol >= 0 ? used[k]->tol : default_tolerance(expected[o].dtype());
        EXPECT_EQ(compare_arrays(expected[o], got[o], t, t), "")
            << used[k]->name << (strided ? " (strided inputs)" : "") << ": output " << o - first_output[k];
      }
    }
  }
}

TEST(Differential, EveryOpWithGeneratedKernels) {
  ScopedJit jit(JitMode::always);
  check_all_in_one_graph(all_samples());
}

TEST(Differential, EveryOpWithStridedInputs) {
  ScopedJit jit(JitMode::off);
  for (const Sample& s : all_samples()) {
    if (s.strided) check_sample(s, true);
  }
}

}  // namespace
}  // namespace tessera::test
