#include "tessera/testing/graph_fuzz/differential.h"

#include <cmath>
#include <random>
#include <unordered_set>

#include "tessera/backends/common/compile_options.h"
#include "tessera/backends/cpu/cpu_backend.h"
#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/quant.h"
#include "tessera/passes/pass.h"

namespace tessera::testing::fuzz {
namespace {

bool same_exactly(double a, double e) {
  if (std::isnan(e)) return std::isnan(a);
  return a == e;  // -0 equals +0
}

template <class Guard>
std::shared_ptr<void> guard(Guard* g) {
  return std::shared_ptr<void>(g, [](void* p) { delete static_cast<Guard*>(p); });
}

struct CpuScope {
  backends::common::ScopedCompileOptions options;
  backends::cpu::JitMode saved_jit;
  CpuScope(const backends::common::CompileOptions& o, backends::cpu::JitMode jit)
      : options(o), saved_jit(backends::cpu::jit_mode()) {
    backends::cpu::set_jit_mode(jit);
  }
  ~CpuScope() { backends::cpu::set_jit_mode(saved_jit); }
};

Variant cpu_variant(const std::string& name, backends::common::CompileOptions options, backends::cpu::JitMode jit) {
  return Variant{name, [options, jit] { return guard(new CpuScope(options, jit)); }};
}

BackendUnderTest cpu_under_test() {
  using backends::common::CompileOptions;
  using backends::common::FusionSet;
  using backends::cpu::JitMode;
  BackendUnderTest b{"cpu", &backends::cpu_backend(), {}, 2};
  b.variants.push_back(cpu_variant("jit=off", {}, JitMode::off));
  b.variants.push_back(cpu_variant("jit=on", {}, JitMode::always));
  b.variants.push_back(cpu_variant("jit=auto", {}, JitMode::automatic));
  b.variants.push_back(cpu_variant("jit=on fusion=none", CompileOptions{FusionSet::none(), {}}, JitMode::always));
  b.variants.push_back(cpu_variant("jit=off fusion=none", CompileOptions{FusionSet::none(), {}}, JitMode::off));
  CompileOptions no_passes;
  no_passes.passes.all_off = true;
  b.variants.push_back(cpu_variant("jit=on passes=off", no_passes, JitMode::always));
  b.variants.push_back(cpu_variant("jit=off passes=off", no_passes, JitMode::off));
  for (const passes::Pass& p : passes::default_pipeline().passes()) {
    CompileOptions o;
    o.passes.disabled = {p.name};
    b.variants.push_back(cpu_variant("jit=on passes=-" + p.name, o, JitMode::always));
  }
  for (const auto& [name, f] : backends::common::fusion_names()) {
    b.variants.push_back(
        cpu_variant("jit=on fusion=-" + name, CompileOptions{FusionSet::all().without(f), {}}, JitMode::always));
  }
  return b;
}

}  // namespace

BackendUnderTest backend_under_test(const std::string& name) {
  if (name == "cpu") return cpu_under_test();
  backends::Backend& backend = backends::backend_by_name(name);
  return BackendUnderTest{name, &backend, {Variant{"default", [] { return std::shared_ptr<void>(); }}}, 1};
}

std::vector<const Variant*> choose_variants(const BackendUnderTest& backend, size_t extra, uint64_t seed) {
  std::vector<const Variant*> out;
  const size_t always = std::min(backend.always, backend.variants.size());
  for (size_t i = 0; i < always; ++i) out.push_back(&backend.variants[i]);
  std::mt19937_64 rng(seed);
  const size_t rest = backend.variants.size() - always;
  for (size_t i = 0; i < extra && rest > 0; ++i) {
    const Variant* v = &backend.variants[always + rng() % rest];
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

namespace {

// The unit roundoff of a float dtype.
double roundoff(DType dt) {
  switch (dt) {
    case DType::f64:
      return 0x1p-53;
    case DType::f32:
      return 0x1p-24;
    case DType::f16:
      return 0x1p-11;
    case DType::bf16:
      return 0x1p-8;
    default:
      return 0;
  }
}

bool all_integers(const Array& a) {
  for (double x : a.to_f64()) {
    if (x != std::floor(x)) return false;
  }
  return true;
}

// How many terms an op adds up per output element (1 for ops that add nothing up).
double accumulation_length(const ir::Node& n) {
  static const std::unordered_set<std::string> reductions = {
      "sum", "mean", "prod", "logsumexp", "conv", "conv_input_grad", "conv_weight_grad", "avg_pool",
      "avg_pool_grad", "adaptive_avg_pool", "adaptive_avg_pool_grad", "upsample_grad", "embedding_grad",
      "scatter_add"};
  const std::string& op = n.op_name();
  if (op == "matmul") return static_cast<double>(n.input(0).shape().empty() ? 1 : n.input(0).shape().back());
  if (op == "softmax" || op == "log_softmax" || op == "cumsum") {
    const int64_t rank = n.input(0).rank();
    if (rank == 0) return 1;
    int64_t axis = n.attrs().get_int("axis");
    if (axis < 0) axis += rank;
    return static_cast<double>(n.input(0).shape()[static_cast<size_t>(axis)]);
  }
  if (!reductions.count(op)) return 1;
  int64_t in = 0;
  for (const ir::Value& v : n.inputs()) in = std::max(in, v.type().numel());
  const int64_t out = std::max<int64_t>(n.output_types()[0].numel(), 1);
  return std::max(1.0, static_cast<double>(in) / static_cast<double>(out)) *
         (op == "conv" || op == "conv_input_grad" || op == "conv_weight_grad" ? 4.0 : 1.0);
}

// The graph again with every float value that is not integer-valued multiplied by 1 + delta, delta
// of 2u to 4u either way for its dtype's unit roundoff u: each op's result perturbed by a few roundings,
// which is what two correct backends may legitimately differ by.
// How a quantized product's own error is probed: at the bound or at the typical size, with one sign
// for every element (a coherent error, which sums of several products add up) or random signs (which
// x - mean(x) does not cancel), in one direction or the other.
struct QuantizedProbe {
  bool worst_case = true;
  bool coherent = false;
  double direction = 1;
};

// Quantized products get an error of their own (below), chosen by `probe`. That error is large enough
// for the outputs to respond non-linearly
// (a square has its minimum there, tanh saturates), so it is probed both ways and at two sizes.
ir::Graph perturbed(const ir::Graph& graph, const std::unordered_map<ir::Value, Array, ir::ValueHash>& values,
                    uint64_t seed, const QuantizedProbe& probe) {
  std::mt19937_64 rng(seed);
  // The factor 1 + delta for a value, or an undefined tensor where the value takes no noise.
  // Random signs and magnitudes in [lo, hi]: never zero, so no element escapes the perturbation.
  auto noise = [&](const Shape& shape, double lo, double hi) {
    std::uniform_real_distribution<double> dist(lo, hi);
    std::vector<double> f(static_cast<size_t>(shape_numel(shape)));
    for (double& x : f) x = (rng() & 1 ? 1 : -1) * dist(rng);
    return f;
  };
  auto factor = [&](const ir::Value& v) -> Tensor {
    const DType dt = v.dtype();
    auto it = values.find(v);
    if (!is_floating(dt) || it == values.end() || all_integers(it->second)) return Tensor();
    const double u = roundoff(dt);
    std::vector<double> f = noise(v.shape(), 2 * u, 4 * u);
    for (double& x : f) x += 1;
    return Tensor::from_array(Array::from_vector(f, v.shape()).astype(dt));
  };
  uint64_t quantized_seen = 0;  // numbers the quantized products in graph order
  auto with_noise = [&](const ir::Value& original, const ir::Value& computed) {
    if (!graph.is_input(original) && original.node()->op_name() == "quantized_matmul") {
      // The CPU kernels round the activations to 8 bits per block (as llama.cpp does) where the
      // reference computes the exact product. Each rounding is at most half a step of its block's scale
      // (max |x| / 127); block scales and sums stored in f16 add errors that depend on the block
      // format. Two sizes are probed: a bound that covers every format, K max|x| max|w| / 127, and the
      // typical error of the roundings alone, sigma = sqrt(sum_k w_jk^2 step_ik^2 / 12) plus
      // |sum_k w_jk x_ik| 2^-11 for the scales (a large probe saturates what a small error still moves).
      const ir::Node& n = *original.node();
      const std::string type = n.attrs().get_string("type");
      const std::vector<double> w = ops::dequantize_array(values.at(n.input(1)), type).to_f64();
      const std::vector<double> x = values.at(n.input(0)).to_f64();
      const int64_t k = n.input(0).shape().back();
      const int64_t cols = original.shape().back();
      const int64_t rows = k == 0 ? 0 : static_cast<int64_t>(x.size()) / k;
      const int64_t block = type.find("_k") != std::string::npos || type.find("_K") != std::string::npos ? 256 : 32;
      double x_max = 0, w_max = 0;
      for (double v : x) x_max = std::max(x_max, std::abs(v));
      for (double v : w) w_max = std::max(w_max, std::abs(v));
      const double worst = x_max * w_max * static_cast<double>(k) / 127;
      std::vector<double> step(x.size(), 0.0);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t b0 = 0; b0 < k; b0 += block) {
          double m = 0;
          for (int64_t c = b0; c < std::min(k, b0 + block); ++c) m = std::max(m, std::abs(x[static_cast<size_t>(r * k + c)]));
          for (int64_t c = b0; c < std::min(k, b0 + block); ++c) step[static_cast<size_t>(r * k + c)] = m / 127;
        }
      }
      // Sizes of half to all of the bound, or 2 to 3 sigma; signs random or all alike (probe). The same
      // draws in the runs of either direction.
      std::mt19937_64 signs(0x51ED + quantized_seen++);
      std::uniform_real_distribution<double> size(probe.worst_case ? 0.5 : 2.0, probe.worst_case ? 1.0 : 3.0);
      std::vector<double> d(static_cast<size_t>(rows * cols));
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < cols; ++j) {
          double var = 0, dot = 0;
          for (int64_t c = 0; c < k; ++c) {
            const double wj = w[static_cast<size_t>(j * k + c)], st = step[static_cast<size_t>(r * k + c)];
            var += wj * wj * st * st / 12;
            dot += wj * x[static_cast<size_t>(r * k + c)];
          }
          const double scale = probe.worst_case ? worst : std::sqrt(var) + std::abs(dot) * 0x1p-11;
          const double sign = probe.coherent ? 1.0 : (signs() & 1 ? 1.0 : -1.0);
          d[static_cast<size_t>(r * cols + j)] = sign * probe.direction * size(signs) * scale;
        }
      }
      return ops::add(Tensor(computed),
                      Tensor::from_array(Array::from_vector(d, original.shape()).astype(original.dtype())))
          .value();
    }
    const Tensor f = factor(original);
    if (!f.defined()) return computed;
    ir::Value noisy = ops::mul(Tensor(computed), f).value();
    // A sum of k terms computed in another order differs by about sqrt(k) roundings of the sum of its
    // terms' magnitudes (at most k of them): such ops get that much absolute noise too, as their
    // output's own roundings do not cover it.
    if (!graph.is_input(original)) {
      const ir::Node& n = *original.node();
      const double k = accumulation_length(n);
      if (k > 1) {
        double m = 0;
        for (const ir::Value& in : n.inputs()) {
          if (!is_floating(in.dtype()) || !values.count(in)) continue;
          for (double x : values.at(in).to_f64()) {
            if (std::isfinite(x)) m = std::max(m, std::abs(x));
          }
        }
        const double bound = roundoff(original.dtype()) * std::sqrt(k) * k * m;
        if (bound > 0) {
          const std::vector<double> d = noise(original.shape(), bound / 2, bound);
          noisy = ops::add(Tensor(noisy), Tensor::from_array(Array::from_vector(d, original.shape()).astype(original.dtype())))
                      .value();
        }
      }
    }
    return noisy;
  };
  std::unordered_map<ir::Value, ir::Value, ir::ValueHash> map;
  for (const ir::Value& in : graph.inputs()) map.emplace(in, with_noise(in, in));
  for (const ir::NodePtr& n : graph.nodes()) {
    std::vector<ir::Value> args;
    bool touched = false;
    for (const ir::Value& in : n->inputs()) {
      auto it = map.find(in);
      touched = touched || (it != map.end() && it->second != in);
      args.push_back(it != map.end() ? it->second : in);
    }
    const std::vector<ir::Value> outs =
        touched ? ir::make_node_typed(n->op(), std::move(args), n->attrs(), n->output_types())
                : std::vector<ir::Value>{};
    for (int i = 0; i < n->num_outputs(); ++i) {
      const ir::Value original(n, i);
      map.emplace(original, with_noise(original, touched ? outs[static_cast<size_t>(i)] : original));
    }
  }
  std::vector<ir::Value> outs;
  for (const ir::Value& v : graph.outputs()) outs.push_back(map.at(v));
  return ir::Graph::build(graph.inputs(), outs, graph.name());
}

// The same values, each in a non-contiguous view (every other element of a larger array's last axis).
std::vector<Array> strided_views(const std::vector<Array>& inputs) {
  std::vector<Array> out;
  for (const Array& a : inputs) {
    if (a.rank() == 0 || a.numel() == 0) {
      out.push_back(a);
      continue;
    }
    Shape big = a.shape();
    big.back() *= 2;
    Array view = Array::zeros(a.dtype(), big).slice(a.rank() - 1, 0, big.back(), 2);
    view.copy_from(a);
    out.push_back(view);
  }
  return out;
}

}  // namespace

ReferenceRun reference_run(const ir::Graph& graph, const std::vector<Array>& inputs) {
  ReferenceRun r;
  std::vector<ir::Value> every;
  for (const ir::NodePtr& n : graph.nodes()) {
    for (int i = 0; i < n->num_outputs(); ++i) every.emplace_back(n, i);
  }
  backends::Backend& ref = backends::reference_backend();
  const std::vector<Array> all = ref.compile(ir::Graph::build(graph.inputs(), every, graph.name()))->run(inputs);
  std::unordered_map<ir::Value, Array, ir::ValueHash> values;
  for (size_t i = 0; i < every.size(); ++i) values.emplace(every[i], all[i]);
  for (size_t i = 0; i < inputs.size(); ++i) values.emplace(graph.inputs()[i], inputs[i]);
  for (const ir::Value& v : graph.outputs()) r.outputs.push_back(values.at(v));
  for (const auto& [v, a] : values) {
    if (!is_floating(a.dtype()) || !r.finite) continue;
    for (double x : a.to_f64()) {
      if (!std::isfinite(x)) {
        r.finite = false;
        break;
      }
    }
  }
  // Sensitivity to rounding, measured: the largest deviation over two perturbed runs (four with
  // quantized products: six probes of their error, below), per element.
  bool quantized = false;
  for (const ir::NodePtr& n : graph.nodes()) quantized = quantized || n->op_name() == "quantized_matmul";
  std::vector<std::vector<double>> deviation(r.outputs.size());
  for (size_t k = 0; k < r.outputs.size(); ++k) deviation[k].assign(static_cast<size_t>(r.outputs[k].numel()), 0.0);
  // Quantized products: the bound coherently both ways, the bound and the typical size with random
  // signs both ways (without them the probe is the same in every run and stays at the bound).
  static const QuantizedProbe probes[] = {{true, true, 1},   {true, true, -1}, {true, false, 1},
                                          {true, false, -1}, {false, false, 1}, {false, false, -1}};
  for (uint64_t sample = 0; sample < (quantized ? 6u : 2u); ++sample) {
    const std::vector<Array> noisy =
        ref.compile(perturbed(graph, values, 77 + sample, probes[quantized ? sample : 2 + sample]))->run(inputs);
    for (size_t k = 0; k < noisy.size(); ++k) {
      const std::vector<double> a = noisy[k].to_f64(), e = r.outputs[k].to_f64();
      for (size_t i = 0; i < a.size(); ++i) {
        const double d = std::isnan(a[i]) != std::isnan(e[i]) ? HUGE_VAL : std::abs(a[i] - e[i]);
        if (!std::isnan(d)) deviation[k][i] = std::max(deviation[k][i], d);
      }
    }
  }
  // The scale of what each value's computing op read: an op that cancels inside itself (x - mean(x),
  // log_softmax) is off by roundings of its operands, not of its result. Ops that only move or copy
  // values (views, gathers, negation, casts, concatenation, ...) pass their operands' scale on.
  static const std::unordered_set<std::string> moves = {"gather", "index_select", "embedding", "neg",  "abs",
                                                        "cast",   "concat",       "pad",       "where", "stop_gradient"};
  auto max_abs = [](const Array& a) {
    double m = 0;
    for (double x : a.to_f64()) {
      if (std::isfinite(x)) m = std::max(m, std::abs(x));
    }
    return m;
  };
  std::unordered_map<ir::Value, double, ir::ValueHash> operand_scale;
  for (const ir::NodePtr& n : graph.nodes()) {
    const bool moving = n->op().has(ir::kView) || moves.count(n->op_name()) != 0;
    double scale = 0;
    for (const ir::Value& in : n->inputs()) {
      if (!is_floating(in.dtype())) continue;
      auto known = operand_scale.find(in);
      if (moving) {
        if (known != operand_scale.end()) scale = std::max(scale, known->second);
      } else if (auto it = values.find(in); it != values.end()) {
        scale = std::max(scale, max_abs(it->second));
      }
    }
    for (int i = 0; i < n->num_outputs(); ++i) operand_scale[ir::Value(n, i)] = scale;
  }
  // The coarsest unit roundoff along each value's inputs: an f64 output computed from f32 values is
  // only f32-accurate. (The perturbed runs cannot always show this: f32 factors are 1 +- a few ulps,
  // so an input's factor and a later one cancel exactly often enough to matter.)
  std::unordered_map<ir::Value, double, ir::ValueHash> path_roundoff;
  auto roundoff_of = [&](const ir::Value& v) {
    auto it = path_roundoff.find(v);
    return it != path_roundoff.end() ? it->second : (is_floating(v.dtype()) ? roundoff(v.dtype()) : 0.0);
  };
  for (const ir::NodePtr& n : graph.nodes()) {
    double u = 0;
    for (const ir::Value& in : n->inputs()) u = std::max(u, roundoff_of(in));
    for (int i = 0; i < n->num_outputs(); ++i) {
      const ir::Value v(n, i);
      path_roundoff[v] = std::max(u, is_floating(v.dtype()) ? roundoff(v.dtype()) : 0.0);
    }
  }
  for (size_t k = 0; k < r.outputs.size(); ++k) {
    const Array& e = r.outputs[k];
    const std::vector<double> ev = e.to_f64();
    const double operands = operand_scale.count(graph.outputs()[k]) ? operand_scale.at(graph.outputs()[k]) : 0.0;
    const double u = std::max(std::max(roundoff(e.dtype()), roundoff_of(graph.outputs()[k])), 1e-300);
    std::vector<double> tol(ev.size());
    for (size_t i = 0; i < ev.size(); ++i) {
      tol[i] = 3 * deviation[k][i] + 8 * u * (std::abs(ev[i]) + operands) + 1e-300;
    }
    r.tolerances.push_back(std::move(tol));
  }
  return r;
}

std::string compare_output(const Array& expected, const Array& got, bool exact, const std::vector<double>& tol) {
  if (expected.dtype() != got.dtype() || expected.shape() != got.shape()) {
    return fmt::format("is {}{}, expected {}{}", dtype_name(got.dtype()), shape_str(got.shape()),
                       dtype_name(expected.dtype()), shape_str(expected.shape()));
  }
  const std::vector<double> e = expected.to_f64(), a = got.to_f64();
  const bool floating = is_floating(expected.dtype());
  for (size_t i = 0; i < e.size(); ++i) {
    const bool close = !floating || exact || !std::isfinite(e[i]) || i >= tol.size() ? same_exactly(a[i], e[i])
                                                                                     : std::abs(a[i] - e[i]) <= tol[i];
    if (!close) {
      return fmt::format("element {} is {}, expected {} ({})", i, a[i], e[i],
                         exact || i >= tol.size() ? std::string("exact") : fmt::format("tolerance {:.3g}", tol[i]));
    }
  }
  return "";
}

Verdict check_graph(const ir::Graph& graph, const std::vector<Array>& inputs, const std::vector<bool>& exact,
                    const BackendUnderTest& backend, const std::vector<const Variant*>& variants,
                    bool finite_only) {
  Verdict v;
  ReferenceRun ref;
  try {
    ref = reference_run(graph, inputs);
  } catch (const std::exception& e) {
    v.reference_failed = true;
    v.reference_error = e.what();
    return v;
  }
  if (finite_only && !ref.finite) {
    v.reference_failed = true;
    v.reference_error = "the reference computes a NaN or an infinity";
    return v;
  }
  const std::vector<Array>& expected = ref.outputs;
  for (const Variant* variant : variants) {
    const std::shared_ptr<void> scope = variant->enter();
    std::unique_ptr<backends::Executable> exe;
    try {
      exe = backend.backend->compile(graph);
    } catch (const std::exception& e) {
      v.mismatches.push_back({variant->name, fmt::format("compile failed: {}", e.what()), true});
      continue;
    }
    for (int pass = 0; pass < 2; ++pass) {
      std::vector<Array> got;
      try {
        ++v.executions;
        if (pass == 0) {
          got = exe->run(inputs);
        } else {  // again, into fresh outputs on its device, from non-contiguous views of the same data
          for (const Array& e : expected) got.push_back(Array::empty(e.dtype(), e.shape(), exe->device()));
          exe->run_into(strided_views(inputs), got);
        }
        for (Array& a : got) a = a.to(host_device());  // a GPU backend's outputs live on the GPU
      } catch (const std::exception& e) {
        v.mismatches.push_back(
            {variant->name, fmt::format("{} failed: {}", pass == 0 ? "run" : "run_into", e.what()), true});
        break;
      }
      if (got.size() != expected.size()) {
        v.mismatches.push_back({variant->name, fmt::format("{} outputs, expected {}", got.size(), expected.size())});
        break;
      }
      bool failed = false;
      for (size_t k = 0; k < got.size() && !failed; ++k) {
        const std::string diff = compare_output(expected[k], got[k], k < exact.size() && exact[k], ref.tolerances[k]);
        if (!diff.empty()) {
          v.mismatches.push_back(
              {variant->name, fmt::format("{} output {}: {}", pass == 0 ? "run" : "run_into", k, diff)});
          failed = true;
        }
      }
      if (failed) break;
    }
  }
  return v;
}

}  // namespace tessera::testing::fuzz
