#include "codegen_test_util.h"

#include <unistd.h>

#include <filesystem>
#include <random>

namespace tessera::test {

const std::string& test_cache_dir() {
  static const std::string dir = [] {
    // Child processes of the concurrency test share the directory their parent gives them.
    const char* given = std::getenv("TESSERA_CACHE_DIR");
    if (std::getenv("TESSERA_CODEGEN_CHILD") && given) return std::string(given);
    char tmpl[] = "/tmp/tessera-codegen-test-XXXXXX";
    const char* made = ::mkdtemp(tmpl);
    if (!made) throw Error("cannot create a temporary cache directory");
    ::setenv("TESSERA_CACHE_DIR", made, 1);
    return std::string(made);
  }();
  return dir;
}

namespace {
// Points the JIT at the temporary cache before any test runs.
class CacheEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { test_cache_dir(); }
  void TearDown() override {
    if (!std::getenv("TESSERA_CODEGEN_CHILD") && !std::getenv("TESSERA_KEEP_TEST_CACHE")) {
      std::filesystem::remove_all(test_cache_dir());
    }
  }
};
[[maybe_unused]] ::testing::Environment* const cache_env = ::testing::AddGlobalTestEnvironment(new CacheEnvironment);
}  // namespace

std::vector<Array> run_reference(const ir::Graph& g, const std::vector<Array>& inputs) {
  return backends::reference_backend().compile(g)->run(inputs);
}

JitRun run_with_jit(const ir::Graph& g, const std::vector<Array>& inputs, int threads, bool half_types,
                    lower::RowKernelRules rules) {
  JitRun r;
  r.clusters = cluster_all(g, half_types, rules);
  auto kernels = backends::cpu::compile_clusters(r.clusters, &r.stats);
  runtime::ThreadPool pool(threads);
  std::unordered_map<ir::Value, Array, ir::ValueHash> values;
  for (size_t i = 0; i < inputs.size(); ++i) values[g.inputs()[i]] = inputs[i].contiguous();
  std::unordered_map<const ir::Node*, size_t> cluster_of;
  for (size_t c = 0; c < r.clusters.size(); ++c) {
    for (const auto& n : r.clusters[c].nodes) cluster_of[n.get()] = c;
  }
  auto ready = [&](const std::vector<ir::Value>& needed) {
    for (const ir::Value& v : needed) {
      if (!values.count(v)) return false;
    }
    return true;
  };
  std::vector<bool> cluster_done(r.clusters.size(), false);
  std::set<const ir::Node*> node_done;
  size_t remaining = r.clusters.size() + g.nodes().size();
  for (const auto& n : g.nodes()) {
    if (cluster_of.count(n.get())) --remaining;
  }
  while (remaining > 0) {
    bool progressed = false;
    for (size_t c = 0; c < r.clusters.size(); ++c) {
      if (cluster_done[c] || !ready(r.clusters[c].inputs)) continue;
      std::vector<Array> ins, outs;
      std::vector<const void*> in_ptrs;
      std::vector<void*> out_ptrs;
      for (const ir::Value& v : r.clusters[c].inputs) {
        ins.push_back(values.at(v).contiguous());
        in_ptrs.push_back(ins.back().numel() ? ins.back().raw_data() : nullptr);
      }
      for (const ir::Value& v : r.clusters[c].outputs) {
        outs.push_back(Array::empty(v.dtype(), v.shape()));
        out_ptrs.push_back(outs.back().numel() ? outs.back().raw_data() : nullptr);
      }
      kernels[c]->run(in_ptrs.data(), out_ptrs.data(), pool);
      for (size_t i = 0; i < outs.size(); ++i) values[r.clusters[c].outputs[i]] = outs[i];
      cluster_done[c] = true;
      --remaining;
      progressed = true;
    }
    for (const auto& n : g.nodes()) {
      if (cluster_of.count(n.get()) || node_done.count(n.get()) || !ready(n->inputs())) continue;
      std::vector<Array> ins;
      for (const ir::Value& v : n->inputs()) ins.push_back(values.at(v));
      const std::vector<Array> outs = n->op().reference(ins, n->attrs(), n->output_types());
      for (size_t i = 0; i < outs.size(); ++i) values[ir::Value(n, static_cast<int>(i))] = outs[i].contiguous();
      node_done.insert(n.get());
      --remaining;
      progressed = true;
    }
    if (!progressed) throw Error("run_with_jit: no unit is ready (a cycle between clusters?)");
  }
  for (const ir::Value& v : g.outputs()) r.outputs.push_back(values.at(v));
  return r;
}

void expect_arrays_match(const std::vector<Array>& got, const std::vector<Array>& expected, double rtol, double atol,
                         const std::string& what) {
  ASSERT_EQ(got.size(), expected.size()) << what;
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(dtype_name(got[k].dtype()), std::string(dtype_name(expected[k].dtype()))) << what << " output " << k;
    ASSERT_EQ(shape_str(got[k].shape()), shape_str(expected[k].shape())) << what << " output " << k;
    if (is_floating(expected[k].dtype())) {
      const auto g = got[k].to_f64(), e = expected[k].to_f64();
      int reported = 0;
      for (size_t i = 0; i < g.size() && reported < 5; ++i) {
        const bool ok = std::isnan(e[i])   ? std::isnan(g[i])
                        : std::isinf(e[i]) ? g[i] == e[i]
                                           : std::abs(g[i] - e[i]) <= atol + rtol * std::abs(e[i]);
        if (!ok) {
          ++reported;
          ADD_FAILURE() << what << " output " << k << " element " << i << ": got " << g[i] << ", expected " << e[i];
        }
      }
    } else {
      const auto g = got[k].to_i64(), e = expected[k].to_i64();
      int reported = 0;
      for (size_t i = 0; i < g.size() && reported < 5; ++i) {
        if (g[i] != e[i]) {
          ++reported;
          ADD_FAILURE() << what << " output " << k << " element " << i << ": got " << g[i] << ", expected " << e[i];
        }
      }
    }
  }
}

Array random_of(DType dt, const Shape& shape, uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
  if (dt == DType::boolean) {
    for (double& x : v) x = static_cast<double>(rng() & 1);
  } else if (is_floating(dt)) {
    std::uniform_real_distribution<double> dist(lo, hi);
    for (double& x : v) x = dist(rng);
  } else {
    std::uniform_int_distribution<int64_t> dist(static_cast<int64_t>(lo), static_cast<int64_t>(hi));
    for (double& x : v) x = static_cast<double>(dist(rng));
  }
  return Array::from_vector(v, shape).astype(dt);
}

std::vector<lower::Cluster> check_against_reference(const MultiFn& fn, const std::vector<Array>& inputs, double rtol,
                                                    double atol) {
  std::vector<ir::TensorType> types;
  for (const Array& a : inputs) types.push_back({a.dtype(), a.shape()});
  const ir::Graph g = trace(fn, types);
  const JitRun jit = run_with_jit(g, inputs);
  expect_arrays_match(jit.outputs, run_reference(g, inputs), rtol, atol);
  return jit.clusters;
}

}  // namespace tessera::test
