#include "tessera/backends/cpu/executable.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tessera/backends/verify.h"
#include "tessera/runtime/thread_scratch.h"

namespace tessera::backends::cpu {
namespace {

std::string input_name(const ir::Value& v) {
  const ir::Node& n = *v.node();
  if (n.op_name() == "input") return fmt::format(" ('{}')", n.attrs().get_string("name"));
  return "";
}

// Conservative overlap test between two arrays' storage (they may be views of larger buffers).
bool storages_overlap(const Array& a, const Array& b) {
  if (a.nbytes() == 0 || b.nbytes() == 0) return false;
  const std::byte* a0 = a.storage()->data();
  const std::byte* b0 = b.storage()->data();
  return a0 < b0 + b.storage()->nbytes() && b0 < a0 + a.storage()->nbytes();
}

}  // namespace

void CpuExecutable::FreeDeleter::operator()(std::byte* p) const {
  std::free(p);
}

CpuExecutable::CpuExecutable(ir::Graph graph, std::shared_ptr<const common::Program> program,
                             std::vector<Array> constants, CompileInfo info, std::vector<Alias> aliases)
    : graph_(std::move(graph)), program_(std::move(program)), constants_(std::move(constants)), info_(std::move(info)) {
  aliases_ = std::move(aliases);
  addresses_.assign(program_->buffers.size(), nullptr);
  input_at_.assign(static_cast<size_t>(program_->num_inputs), nullptr);
  output_at_.assign(static_cast<size_t>(program_->num_outputs), nullptr);
  input_staging_.resize(input_at_.size());
  output_staging_.resize(output_at_.size());
  output_staged_.assign(output_at_.size(), false);
  writes_over_input_.assign(output_at_.size(), -1);
  for (const Alias& a : aliases_) {
    if (common::can_write_over_input(*program_, a.input, a.output)) {
      writes_over_input_[static_cast<size_t>(a.output)] = a.input;
    }
  }
  kernel_inputs_.assign(static_cast<size_t>(program_->max_kernel_args), nullptr);
  kernel_outputs_.assign(static_cast<size_t>(program_->max_kernel_args), nullptr);
  step_scratch_.resize(static_cast<size_t>(program_->step_scratch_bytes));
  find_views_of_leaves();
  profile_ = std::getenv("TESSERA_PROFILE_STEPS") != nullptr;
  step_seconds_.assign(program_->steps.size(), 0.0);
}

CpuExecutable::~CpuExecutable() {
  if (!profile_ || runs_ == 0) return;
  std::vector<size_t> order(step_seconds_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return step_seconds_[a] > step_seconds_[b]; });
  double total = 0;
  for (double t : step_seconds_) total += t;
  std::fprintf(stderr, "tessera cpu profile: graph '%s', %lld runs after the first, %.3f ms per run\n", graph_.name().c_str(),
               static_cast<long long>(runs_), 1e3 * total / static_cast<double>(runs_));
  // TESSERA_PROFILE_STEPS=all lists every step; any other value the 25 slowest.
  const char* env = std::getenv("TESSERA_PROFILE_STEPS");
  const size_t shown = env != nullptr && std::string(env) == "all" ? order.size() : 25;
  for (size_t i = 0; i < order.size() && i < shown; ++i) {
    const size_t k = order[i];
    std::fprintf(stderr, "  %7.3f ms  %5.1f%%  %3zu: %s\n", 1e3 * step_seconds_[k] / static_cast<double>(runs_),
                 100.0 * step_seconds_[k] / std::max(total, 1e-12), k, program_->steps[k]->describe().c_str());
  }
}

void CpuExecutable::find_views_of_leaves() {
  for (const ir::Value& out : graph_.outputs()) {
    ViewOfLeaf chain;
    ir::Value v = out;
    while (!graph_.is_input(v) && v.node()->op().has(ir::kView) && v.node()->inputs().size() == 1) {
      chain.views.push_back(v);
      v = v.node()->input(0);
    }
    std::reverse(chain.views.begin(), chain.views.end());
    const auto& inputs = graph_.inputs();
    if (auto it = std::find(inputs.begin(), inputs.end(), v); it != inputs.end()) {
      chain.input = static_cast<int>(it - inputs.begin());
    } else if (v.node()->op_name() == "constant") {
      chain.constant = v.node()->attrs().get_tensor("value");
    } else {
      views_of_leaves_.emplace_back();
      continue;
    }
    views_of_leaves_.emplace_back(std::move(chain));
  }
}

Array CpuExecutable::view_of_leaf(const ViewOfLeaf& v, const std::vector<Array>& inputs) const {
  Array a = v.input >= 0 ? inputs[static_cast<size_t>(v.input)] : v.constant;
  for (const ir::Value& step : v.views) {
    const ir::Node& n = *step.node();
    a = n.op().reference({a}, n.attrs(), n.output_types())[static_cast<size_t>(step.index())];
  }
  return a;
}

void CpuExecutable::check_inputs(const std::vector<Array>& inputs) const {
  const std::vector<ir::Value>& want = graph_.inputs();
  TESSERA_CHECK(inputs.size() == want.size(), "graph '{}' takes {} inputs, {} were given", graph_.name(), want.size(),
                inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::TensorType& t = want[i].type();
    TESSERA_CHECK(inputs[i].defined(), "graph '{}': input {}{} is undefined", graph_.name(), i, input_name(want[i]));
    if (inputs[i].dtype() != t.dtype || inputs[i].shape() != t.shape) {
      fail("graph '{}': input {}{} is {}{} but the graph expects {}", graph_.name(), i, input_name(want[i]),
           dtype_name(inputs[i].dtype()), shape_str(inputs[i].shape()), ir::type_str(t));
    }
  }
}

void CpuExecutable::check_outputs(const std::vector<Array>& outputs) const {
  const std::vector<ir::Value>& want = graph_.outputs();
  TESSERA_CHECK(outputs.size() == want.size(), "run_into: graph '{}' has {} outputs but {} arrays were given",
                graph_.name(), want.size(), outputs.size());
  for (size_t k = 0; k < outputs.size(); ++k) {
    const ir::TensorType& t = want[k].type();
    if (!outputs[k].defined() || outputs[k].dtype() != t.dtype || outputs[k].shape() != t.shape) {
      fail("run_into: output {} of graph '{}' must be {}, got {}", k, graph_.name(), ir::type_str(t),
           outputs[k].defined() ? dtype_name(outputs[k].dtype()) + shape_str(outputs[k].shape()) : "undefined");
    }
  }
}

std::vector<Array> CpuExecutable::run(const std::vector<Array>& inputs) {
  check_inputs(inputs);
  if (std::any_of(inputs.begin(), inputs.end(), [](const Array& a) { return !a.on_host(); })) {
    // Inputs on another device (a GPU segment's values): run on host copies, so outputs that view an
    // input view the copy (host memory), and write aliased results back to the device arrays.
    std::vector<Array> host;
    for (const Array& a : inputs) host.push_back(a.to(host_device()));
    std::vector<Array> outputs = run(host);
    for (const Alias& a : aliases_) {
      Array in = inputs[static_cast<size_t>(a.input)];
      if (in.on_host()) continue;
      in.copy_from(outputs[static_cast<size_t>(a.output)]);
      outputs[static_cast<size_t>(a.output)] = in;
    }
    return outputs;
  }
  std::vector<Array> outputs;
  outputs.reserve(graph_.outputs().size());
  for (const ir::Value& v : graph_.outputs()) outputs.push_back(Array::empty(v.dtype(), v.shape()));
  // An aliased output is written into its input (staged when that input is a strided view, since
  // outputs are written packed).
  std::vector<bool> aliased(outputs.size(), false);
  for (const Alias& a : aliases_) {
    const Array& in = inputs[static_cast<size_t>(a.input)];
    if (in.is_contiguous()) outputs[static_cast<size_t>(a.output)] = in;
    aliased[static_cast<size_t>(a.output)] = true;
  }
  run_into(inputs, outputs);
  for (const Alias& a : aliases_) {
    Array in = inputs[static_cast<size_t>(a.input)];
    if (!in.is_contiguous()) {
      in.copy_from(outputs[static_cast<size_t>(a.output)]);
      outputs[static_cast<size_t>(a.output)] = in;
    }
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (views_of_leaves_[k] && !aliased[k]) outputs[k] = view_of_leaf(*views_of_leaves_[k], inputs);
  }
  return outputs;
}

void CpuExecutable::run_into(const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  check_inputs(inputs);
  for (const Array& in : inputs) {
    if (in.on_host()) continue;
    // Inputs that live on another device are copied to the host first.
    std::vector<Array> host;
    for (const Array& a : inputs) host.push_back(a.to(host_device()));
    return run_into(host, outputs);
  }
  check_outputs(outputs);
  if (!verify_enabled()) {
    execute(inputs, outputs);
    return;
  }
  // The reference runs first: the caller's outputs may share memory with its inputs.
  const std::vector<Array> expected = reference_outputs(graph_, inputs);
  execute(inputs, outputs);
  record_verification("cpu", graph_, expected, outputs);
}

void CpuExecutable::execute(const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  const common::Program& p = *program_;
  if (!arena_) {
    const size_t bytes = static_cast<size_t>(std::max<int64_t>(64, (p.arena_bytes + 63) / 64 * 64));
    arena_.reset(static_cast<std::byte*>(std::aligned_alloc(64, bytes)));
    TESSERA_CHECK(arena_ != nullptr, "cpu backend: out of memory allocating a {}-byte arena", bytes);
  }
  // Inputs are read in place when packed; otherwise packed once into a staging array.
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].is_contiguous()) {
      input_at_[i] = static_cast<std::byte*>(inputs[i].raw_data());
      continue;
    }
    if (!input_staging_[i].defined()) input_staging_[i] = Array::empty(inputs[i].dtype(), inputs[i].shape());
    input_staging_[i].copy_from(inputs[i]);
    input_at_[i] = static_cast<std::byte*>(input_staging_[i].raw_data());
  }
  // Outputs are written in place unless they are not packed or share memory with an input — except an
  // aliased output given exactly its input's memory, when the program allows writing over it.
  for (size_t k = 0; k < outputs.size(); ++k) {
    bool staged = !outputs[k].is_contiguous();
    const int32_t over = writes_over_input_[k];
    for (size_t i = 0; i < inputs.size() && !staged; ++i) {
      const bool same = static_cast<int32_t>(i) == over && outputs[k].raw_data() == inputs[i].raw_data() &&
                        outputs[k].nbytes() == inputs[i].nbytes() && inputs[i].is_contiguous();
      staged = !same && storages_overlap(outputs[k], inputs[i]);
    }
    output_staged_[k] = staged;
    if (staged && !output_staging_[k].defined()) {
      output_staging_[k] = Array::empty(outputs[k].dtype(), outputs[k].shape());
    }
    output_at_[k] = static_cast<std::byte*>(staged ? output_staging_[k].raw_data() : outputs[k].raw_data());
  }
  common::resolve_buffers(p, arena_.get(), input_at_, output_at_, constants_, addresses_);
  common::RunContext ctx;
  ctx.buffers = addresses_.data();
  ctx.pool = &runtime::default_pool();
  ctx.kernel_inputs = kernel_inputs_.data();
  ctx.kernel_outputs = kernel_outputs_.data();
  ctx.step_scratch = step_scratch_.data();
  if (profile_) {
    // The first run also pays for one-time work (the arena's first touch, scratch growing): left out.
    const bool counted = profiled_first_run_;
    for (size_t i = 0; i < p.steps.size(); ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      p.steps[i]->run(ctx);
      if (counted) step_seconds_[i] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    if (counted) ++runs_;
    profiled_first_run_ = true;
  } else {
    for (const std::unique_ptr<common::Step>& step : p.steps) step->run(ctx);
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (output_staged_[k]) outputs[k].copy_from(output_staging_[k]);
  }
  // The first run measured the kernels' per-thread scratch; give every pool thread that much now, so
  // later runs allocate nothing whichever thread takes which chunk.
  if (!scratch_reserved_) {
    runtime::reserve_thread_scratch(*ctx.pool);
    scratch_reserved_ = true;
  }
}

}  // namespace tessera::backends::cpu
