// Times an ONNX model on a Tessera backend: imports it for a batch size, compiles it once, runs it
// `--warmup` times and then `--repeat` timed runs, and prints one JSON line with the median (wall
// time, and the process's CPU time: with TESSERA_NUM_THREADS=1 the steadier figure on a shared machine). The
// Tessera side of bench/onnx/compare_onnxruntime.py (whose peer is bench/onnx/ort_bench.mjs).
//
//   bench_onnx_model --model M.onnx --batch 16 [--backend cpu] [--repeat 10] [--warmup 2]
//                    [--input x.npy --output y.npy]   (the input to run and where to write the output)
// Without --input, the input is a deterministic f32 array of the declared shape with 'batch' bound.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tessera/backends/backend.h"
#include "tessera/core/error.h"
#include "tessera/io/npy.h"
#include "tessera/io/onnx/onnx_import.h"
#include "tessera/io/onnx/onnx_model.h"

using namespace tessera;

namespace {

struct Options {
  std::string model, input, output, backend = "cpu";
  int64_t batch = 1;
  int repeat = 10, warmup = 2;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    TESSERA_CHECK(i + 1 < argc, "{} needs a value (see the comment at the top of bench_onnx_model.cpp)", a);
    const std::string v = argv[++i];
    if (a == "--model") o.model = v;
    else if (a == "--batch") o.batch = std::stoll(v);
    else if (a == "--backend") o.backend = v;
    else if (a == "--repeat") o.repeat = std::stoi(v);
    else if (a == "--warmup") o.warmup = std::stoi(v);
    else if (a == "--input") o.input = v;
    else if (a == "--output") o.output = v;
    else fail("unknown argument {}; see the comment at the top of bench/onnx/bench_onnx_model.cpp", a);
  }
  TESSERA_CHECK(!o.model.empty(), "--model FILE is required");
  TESSERA_CHECK(o.repeat >= 1, "--repeat must be at least 1, got {}", o.repeat);
  return o;
}

// The process's CPU time in milliseconds (all threads): with one thread, the run's time less what other
// processes took from it on a shared machine.
double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return 1e3 * static_cast<double>(ts.tv_sec) + 1e-6 * static_cast<double>(ts.tv_nsec);
}

// The same values as ort_bench.mjs's default input: sin(i / 1000).
Array synthetic_input(const ir::TensorType& type) {
  Array a = Array::empty(type.dtype, type.shape);
  float* p = a.data<float>();
  for (int64_t i = 0; i < a.numel(); ++i) p[i] = std::sin(static_cast<float>(i) * 0.001f);
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    const io::onnx::OnnxModel model = io::onnx::load_onnx_model(o.model);
    Array input;
    if (!o.input.empty()) {
      input = io::load_npy(o.input);
    } else {
      const auto types = io::onnx::declared_input_types(model, {{"batch", o.batch}});
      TESSERA_CHECK(types.size() == 1 && types[0].dtype == DType::f32, "{}: expected one f32 input", o.model);
      input = synthetic_input(types[0]);
    }
    const auto t0 = std::chrono::steady_clock::now();
    const io::onnx::ImportedGraph imported = io::onnx::import_onnx_for(model, {input});
    auto exe = backends::backend_by_name(o.backend).compile(imported.graph);
    const double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::vector<Array> inputs = io::onnx::graph_inputs(imported, {input});
    std::vector<Array> out;
    for (int i = 0; i < o.warmup; ++i) out = exe->run(inputs);
    std::vector<double> runs, cpu_runs;
    for (int i = 0; i < o.repeat; ++i) {
      const auto s = std::chrono::steady_clock::now();
      const double c = cpu_ms();
      out = exe->run(inputs);
      cpu_runs.push_back(cpu_ms() - c);
      runs.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
    }
    if (!o.output.empty()) io::save_npy(o.output, out.at(0));
    std::vector<double> sorted = runs;
    std::sort(sorted.begin(), sorted.end());
    std::sort(cpu_runs.begin(), cpu_runs.end());
    fmt::print("{{\"median_ms\": {:.3f}, \"median_cpu_ms\": {:.3f}, \"import_compile_s\": {:.3f}, \"runs_ms\": [{:.3f}]}}\n",
               sorted[sorted.size() / 2], cpu_runs[cpu_runs.size() / 2], compile_s, fmt::join(runs, ", "));
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_onnx_model: " << e.what() << "\n";
    return 1;
  }
}
