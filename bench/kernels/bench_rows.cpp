// Row kernels (a reduction and its result's use over the row in one generated kernel) against the
// same graphs compiled without them (as TESSERA_FUSION=-row_kernels): steps per graph and, on the CPU, median
// milliseconds of RMSNorm, LayerNorm, softmax and log_softmax (as generated kernels see them) taken
// in turns; step counts of the MLP training step and, given a GGUF model, its decode graph on the
// CPU and (where a device runs) on Vulkan.
// Usage: bench_rows [--reps N] [--model FILE.gguf] [--steps]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/kernels/bench_util.h"
#include "tessera/backends/backend.h"
#include "tessera/backends/common/compile_options.h"
#include "tessera/backends/common/device_executable.h"
#include "tessera/backends/cpu/executable.h"
#include "tessera/models/llm/kv_cache.h"
#include "tessera/models/llm/llm_model.h"
#include "tessera/ops/nn.h"
#include "tessera/tessera.h"

using namespace tessera;

namespace {

struct Workload {
  const char* name;
  Shape shape;
  std::function<Tensor(const std::vector<Tensor>&)> fn;
};

Tensor shifted(const Tensor& x) {
  return x - ops::max(x, {-1}, true);
}

std::vector<Workload> workloads() {
  std::vector<Workload> w;
  auto rms = [](const std::vector<Tensor>& a) { return ops::rms_norm(a[0], {a[0].shape().back()}, a[1]); };
  auto ln = [](const std::vector<Tensor>& a) {
    return ops::layer_norm(a[0], {a[0].shape().back()}, a[1], a[1], 1e-5);
  };
  auto sm = [](const std::vector<Tensor>& a) {
    const Tensor e = ops::exp(shifted(a[0]));
    return e / ops::sum(e, {-1}, true);
  };
  auto lsm = [](const std::vector<Tensor>& a) {
    const Tensor s = shifted(a[0]);
    return s - ops::log(ops::sum(ops::exp(s), {-1}, true));
  };
  for (const Shape& s : {Shape{512, 2048}, Shape{1, 4096}, Shape{4096, 128}}) {
    w.push_back({"rms_norm", s, rms});
    w.push_back({"layer_norm", s, ln});
    w.push_back({"softmax", s, sm});
    w.push_back({"log_softmax", s, lsm});
  }
  return w;
}

bool print_steps = false;  // --steps: the decode graphs' steps, one a line

// The steps of an executable's program (kernels, library calls, copies; not views).
size_t step_count(const backends::Executable& exe) {
  const backends::common::Program* p = nullptr;
  if (const auto* c = dynamic_cast<const backends::cpu::CpuExecutable*>(&exe)) p = &c->program();
  if (const auto* d = dynamic_cast<const backends::common::DeviceExecutable*>(&exe)) p = &d->program();
  if (p == nullptr) return 0;
  if (print_steps) {
    for (const auto& step : p->steps) std::printf("    %s\n", step->describe().c_str());
  }
  return p->steps.size();
}

size_t steps_of(backends::Backend& backend, const ir::Graph& g, const std::vector<backends::Alias>& aliases = {}) {
  return step_count(*backend.compile(g, backends::CompileSpec{aliases}));
}

void with_row_kernels(bool on) {
  namespace common = backends::common;
  const common::FusionSet all = common::FusionSet::all();
  common::set_compile_options({on ? all : all.without(common::Fusion::row_kernels), {}});
}

// Forward + backward of a 784-1024-512-256-10 MLP with relu and cross-entropy, batch 64.
ir::Graph mlp_training_step() {
  const std::vector<int64_t> sizes = {784, 1024, 512, 256, 10};
  std::vector<ir::TensorType> types = {{DType::f32, {64, 784}}, {DType::i64, {64}}};
  std::vector<size_t> params;
  for (size_t l = 0; l + 1 < sizes.size(); ++l) {
    params.push_back(types.size());
    types.push_back({DType::f32, {sizes[l], sizes[l + 1]}});
    params.push_back(types.size());
    types.push_back({DType::f32, {sizes[l + 1]}});
  }
  auto loss = [](const std::vector<Tensor>& a) {
    Tensor h = a[0];
    for (size_t l = 0; l < 4; ++l) {
      h = ops::matmul(h, a[2 + 2 * l]) + a[3 + 2 * l];
      if (l < 3) h = ops::relu(h);
    }
    return ops::cross_entropy(h, a[1]);
  };
  return trace([=](const std::vector<Tensor>& a) { return value_and_grad(loss, params)(a); }, types);
}

void count_steps(const char* what, const std::function<size_t()>& count) {
  with_row_kernels(false);
  const size_t before = count();
  with_row_kernels(true);
  const size_t after = count();
  std::printf("%-44s steps %4zu -> %4zu\n", what, before, after);
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 15;
  std::string model_path;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = std::atoi(argv[++i]);
    if (std::strcmp(argv[i], "--model") == 0 && i + 1 < argc) model_path = argv[++i];
    if (std::strcmp(argv[i], "--steps") == 0) print_steps = true;
  }
  setenv("TESSERA_JIT", "1", 0);  // small graphs would otherwise skip the compiler (and these kernels)
  backends::Backend& cpu = backends::backend_by_name("cpu");
  std::printf("%-12s %-12s %6s %6s %10s %10s %7s\n", "graph", "shape", "steps", "rows", "ms before", "ms after",
              "speedup");
  for (const Workload& w : workloads()) {
    const Shape weight = {w.shape.back()};
    const ir::Graph g = trace([&](const std::vector<Tensor>& a) { return std::vector<Tensor>{w.fn(a)}; },
                              {{DType::f32, w.shape}, {DType::f32, weight}});
    const std::vector<float> xv = bench::random_vector(static_cast<size_t>(shape_numel(w.shape)), 1);
    const std::vector<float> wv = bench::random_vector(static_cast<size_t>(w.shape.back()), 2);
    const std::vector<Array> in = {Array::from_vector<float>(xv, w.shape), Array::from_vector<float>(wv, weight)};
    with_row_kernels(false);
    const auto before = cpu.compile(g);
    with_row_kernels(true);
    const auto after = cpu.compile(g);
    auto run_before = [&] { before->run(in); };
    auto run_after = [&] { after->run(in); };
    const int inner = bench::calibrate_inner(run_before);
    const std::vector<double> t = bench::interleaved_seconds(reps, {{run_before, inner}, {run_after, inner}});
    const size_t steps_before = step_count(*before), steps_after = step_count(*after);
    std::printf("%-12s %-12s %6zu %6zu %10.4f %10.4f %7.2f\n", w.name, shape_str(w.shape).c_str(), steps_before,
                steps_after, t[0] * 1e3, t[1] * 1e3, t[0] / t[1]);
  }
  const ir::Graph mlp = mlp_training_step();
  count_steps("mlp training step b64 (cpu)", [&] { return steps_of(cpu, mlp); });
  if (!model_path.empty()) {
    for (const char* name : {"cpu", "vulkan"}) {
      backends::Backend* backend = nullptr;
      try {
        backend = &backends::backend_by_name(name);
      } catch (const std::exception& e) {
        std::printf("%s: %s\n", name, e.what());
        continue;
      }
      const auto model = models::llm::LlmModel::load(model_path, models::llm::LoadOptions::for_device(backend->device()));
      const auto d = models::llm::decode_graph(model, 1, 64, true, DType::f16);
      count_steps((std::string("decode graph, one token (") + name + ")").c_str(),
                  [&] { return steps_of(*backend, d.graph, d.aliases); });
    }
  }
  return 0;
}
