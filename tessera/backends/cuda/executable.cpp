#include "tessera/backends/cuda/executable.h"

#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "tessera/backends/cuda/cuda_check.h"
#include "tessera/backends/verify.h"
#include "tessera/core/error.h"

namespace tessera::backends::cuda {

namespace {

constexpr size_t kMaxCapturedGraphs = 8;  // address sets kept per executable (double buffering uses 2)

bool storages_overlap(const Array& a, const Array& b) {
  if (a.nbytes() == 0 || b.nbytes() == 0 || &a.device() != &b.device()) return false;
  const std::byte* a0 = a.storage()->data();
  const std::byte* b0 = b.storage()->data();
  return a0 < b0 + b.storage()->nbytes() && b0 < a0 + a.storage()->nbytes();
}

// Packed device memory whose address suits every kernel (16-byte aligned) is used in place.
bool usable_in_place(const Array& a, const Device& device) {
  return &a.device() == &device && a.is_contiguous() && reinterpret_cast<uintptr_t>(a.device_data()) % 16 == 0;
}

std::vector<Array> on_host(const std::vector<Array>& arrays) {
  std::vector<Array> out;
  out.reserve(arrays.size());
  for (const Array& a : arrays) out.push_back(a.to(host_device()));
  return out;
}

}  // namespace

CudaExecutable::CudaExecutable(Context& context, ir::Graph graph, std::shared_ptr<const common::Program> program,
                               std::vector<Array> constants, std::vector<Alias> aliases)
    : context_(context), graph_(std::move(graph)), program_(std::move(program)) {
  aliases_ = std::move(aliases);
  writes_over_input_.assign(static_cast<size_t>(program_->num_outputs), -1);
  for (const Alias& a : aliases_) {
    if (common::can_write_over_input(*program_, a.input, a.output)) {
      writes_over_input_[static_cast<size_t>(a.output)] = a.input;
    }
  }
  for (const Array& c : constants) constants_.push_back(c.contiguous().to(context_.device()));
  addresses_.assign(program_->buffers.size(), nullptr);
  input_staging_.resize(static_cast<size_t>(program_->num_inputs));
  output_staging_.resize(static_cast<size_t>(program_->num_outputs));
  const char* env = std::getenv("TESSERA_CUDA_GRAPHS");
  use_graphs_ = env == nullptr || std::strcmp(env, "0") != 0;
  if (StepProfiler::enabled()) profiler_ = std::make_unique<StepProfiler>(graph_.name());
  status_ = Array::zeros(DType::i32, {1}).to(context_.device());
  check(cudaMallocHost(reinterpret_cast<void**>(&status_host_), sizeof(int32_t)), "cudaMallocHost (status word)");
  *status_host_ = 0;
  check(cudaEventCreateWithFlags(&status_ready_, cudaEventDisableTiming), "cudaEventCreate");
}

CudaExecutable::~CudaExecutable() {
  if (status_ready_ != nullptr) cudaEventDestroy(status_ready_);
  if (status_host_ != nullptr) cudaFreeHost(status_host_);
  for (auto& [key, g] : graphs_) {
    if (g.exec != nullptr) cudaGraphExecDestroy(g.exec);
  }
}

std::vector<Array> CudaExecutable::run(const std::vector<Array>& inputs) {
  check_inputs(graph_, inputs);
  Device& dev = context_.device();
  std::vector<Array> outputs;
  outputs.reserve(graph_.outputs().size());
  for (const ir::Value& v : graph_.outputs()) outputs.push_back(Array::empty(v.dtype(), v.shape(), dev));
  for (const Alias& a : aliases_) {
    const Array& in = inputs[static_cast<size_t>(a.input)];
    if (usable_in_place(in, dev)) outputs[static_cast<size_t>(a.output)] = in;
  }
  run_into(inputs, outputs);
  for (const Alias& a : aliases_) {
    Array in = inputs[static_cast<size_t>(a.input)];
    if (!usable_in_place(in, dev)) {
      in.copy_from(outputs[static_cast<size_t>(a.output)]);
      outputs[static_cast<size_t>(a.output)] = in;
    }
  }
  return outputs;
}

void CudaExecutable::run_into(const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  check_inputs(graph_, inputs);
  TESSERA_CHECK(outputs.size() == graph_.outputs().size(), "run_into: graph '{}' has {} outputs, {} given",
                graph_.name(), graph_.outputs().size(), outputs.size());
  for (size_t k = 0; k < outputs.size(); ++k) {
    const ir::TensorType& t = graph_.outputs()[k].type();
    if (!outputs[k].defined() || outputs[k].dtype() != t.dtype || outputs[k].shape() != t.shape) {
      fail("run_into: output {} of graph '{}' must be {}", k, graph_.name(), ir::type_str(t));
    }
  }
  if (!verify_enabled()) {
    execute(inputs, outputs);
    return;
  }
  const std::vector<Array> expected = reference_outputs(graph_, on_host(inputs));
  execute(inputs, outputs);
  record_verification("cuda", graph_, expected, on_host(outputs));
}

void CudaExecutable::check_previous_run() {
  if (!status_pending_) return;
  // Never waits: while the previous run is still going its word is read at a later run (the device
  // flag stays raised until it is reported).
  const cudaError_t state = cudaEventQuery(status_ready_);
  if (state == cudaErrorNotReady) {
    cudaGetLastError();
    return;
  }
  check(state, "cudaEventQuery (status word)");
  status_pending_ = false;
  if (*status_host_ == 0) return;
  *status_host_ = 0;
  check(cudaMemsetAsync(status_.device_data(), 0, sizeof(int32_t), context_.device().stream()), "cudaMemsetAsync");
  fail("cuda: in an earlier run of graph '{}', an index was out of range (a gather, scatter_add or index_copy index "
       "must lie in 0..size-1 of its axis, an index_copy index may appear once, a kv_cache_attention position must "
       "lie inside the cache); the elements it would have read were set to 0",
       graph_.name());
}

void CudaExecutable::execute(const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  CudaDevice& dev = context_.device();
  dev.make_current();
  check_previous_run();
  const common::Program& p = *program_;
  if (!arena_.defined()) arena_ = Array::empty(DType::u8, {std::max<int64_t>(p.arena_bytes, 256)}, dev);
  std::vector<std::byte*> input_at(inputs.size()), output_at(outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (usable_in_place(inputs[i], dev)) {
      input_at[i] = static_cast<std::byte*>(inputs[i].device_data());
      continue;
    }
    // Host arrays and unusual views are copied into a packed device array (the copy is ordered
    // before the steps on the same stream).
    if (!input_staging_[i].defined()) input_staging_[i] = Array::empty(inputs[i].dtype(), inputs[i].shape(), dev);
    input_staging_[i].copy_from(inputs[i].on_host() ? inputs[i].contiguous() : inputs[i].to(host_device()));
    input_at[i] = static_cast<std::byte*>(input_staging_[i].device_data());
  }
  // An output that overlaps an input is computed into staging and copied after the run, except an
  // aliased output given exactly its input's memory when the program allows writing over it (a KV cache
  // updated in place).
  std::vector<bool> staged(outputs.size(), false);
  for (size_t k = 0; k < outputs.size(); ++k) {
    bool s = !usable_in_place(outputs[k], dev);
    const int32_t over = writes_over_input_[k];
    for (size_t i = 0; i < inputs.size() && !s; ++i) {
      const bool same = static_cast<int32_t>(i) == over && input_at[i] == outputs[k].device_data() &&
                        outputs[k].nbytes() == inputs[i].nbytes();
      s = !same && storages_overlap(outputs[k], inputs[i]);
    }
    staged[k] = s;
    if (s && !output_staging_[k].defined()) {
      output_staging_[k] = Array::empty(outputs[k].dtype(), outputs[k].shape(), dev);
    }
    output_at[k] = static_cast<std::byte*>(s ? output_staging_[k].device_data() : outputs[k].device_data());
  }
  common::resolve_buffers(p, static_cast<std::byte*>(arena_.device_data()), input_at, output_at, constants_, addresses_);
  common::RunContext ctx;
  ctx.buffers = addresses_.data();
  ctx.stream = dev.stream();
  ctx.status = status_.device_data();
  launch_steps(ctx);
  // The flag comes back with the run; the next run (or its outputs' reader) does not wait for it.
  check(cudaMemcpyAsync(status_host_, status_.device_data(), sizeof(int32_t), cudaMemcpyDeviceToHost, dev.stream()),
        "cudaMemcpyAsync (status word)");
  check(cudaEventRecord(status_ready_, dev.stream()), "cudaEventRecord (status word)");
  status_pending_ = true;
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (staged[k]) outputs[k].copy_from(output_staging_[k]);
  }
}

void CudaExecutable::launch_steps(const common::RunContext& ctx) {
  const common::Program& p = *program_;
  const cudaStream_t stream = static_cast<cudaStream_t>(ctx.stream);
  if (profiler_) {
    profiler_->run(p.steps, ctx, stream);
    return;
  }
  if (!use_graphs_ || p.steps.empty()) {
    for (const auto& step : p.steps) step->run(ctx);
    return;
  }
  auto it = graphs_.find(addresses_);
  if (it == graphs_.end()) {
    if (graphs_.size() >= kMaxCapturedGraphs) {
      for (auto& [key, g] : graphs_) {
        if (g.exec != nullptr) cudaGraphExecDestroy(g.exec);
      }
      graphs_.clear();
    }
    it = graphs_.emplace(addresses_, Captured{}).first;
  }
  Captured& g = it->second;
  g.runs += 1;
  if (g.exec == nullptr && g.runs < 2) {
    for (const auto& step : p.steps) step->run(ctx);
    return;
  }
  if (g.exec == nullptr) {
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    try {
      for (const auto& step : p.steps) step->run(ctx);
    } catch (...) {
      cudaGraph_t broken = nullptr;
      cudaStreamEndCapture(stream, &broken);
      if (broken != nullptr) cudaGraphDestroy(broken);
      throw;
    }
    cudaGraph_t graph = nullptr;
    check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
    const cudaError_t status = cudaGraphInstantiate(&g.exec, graph, 0);
    cudaGraphDestroy(graph);
    check(status, "cudaGraphInstantiate");
    captures_ += 1;
  }
  check(cudaGraphLaunch(g.exec, stream), "cudaGraphLaunch");
  replays_ += 1;
}

}  // namespace tessera::backends::cuda
