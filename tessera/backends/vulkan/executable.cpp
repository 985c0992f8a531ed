#include "tessera/backends/vulkan/executable.h"

#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "tessera/backends/verify.h"
#include "tessera/backends/vulkan/shader_step.h"
#include "tessera/backends/vulkan/vulkan_device.h"
#include "tessera/core/error.h"

namespace tessera::backends::vulkan {

namespace {

bool storages_overlap(const Array& a, const Array& b) {
  if (a.nbytes() == 0 || b.nbytes() == 0 || &a.device() != &b.device()) return false;
  const std::byte* a0 = a.storage()->data();
  const std::byte* b0 = b.storage()->data();
  return a0 < b0 + b.storage()->nbytes() && b0 < a0 + a.storage()->nbytes();
}

// Packed device memory at an element boundary is bound in place (descriptors take any 16-byte start;
// the shaders' shifts take the rest).
bool usable_in_place(const Array& a, const Device& device) {
  return &a.device() == &device && a.is_contiguous() &&
         reinterpret_cast<uintptr_t>(a.device_data()) % std::max<size_t>(dtype_size(a.dtype()), 1) == 0;
}

std::vector<Array> on_host(const std::vector<Array>& arrays) {
  std::vector<Array> out;
  out.reserve(arrays.size());
  for (const Array& a : arrays) out.push_back(a.to(host_device()));
  return out;
}

bool profiling() {
  const char* env = std::getenv("TESSERA_VULKAN_PROFILE");
  return env != nullptr && std::strcmp(env, "1") == 0;
}

}  // namespace

VulkanExecutable::VulkanExecutable(Context& context, ir::Graph graph, std::shared_ptr<const common::Program> program,
                                   std::vector<Array> constants, std::vector<Alias> aliases)
    : context_(context), graph_(std::move(graph)), program_(std::move(program)) {
  aliases_ = std::move(aliases);
  writes_over_input_.assign(static_cast<size_t>(program_->num_outputs), -1);
  for (const Alias& a : aliases_) {
    if (common::can_write_over_input(*program_, a.input, a.output)) {
      writes_over_input_[static_cast<size_t>(a.output)] = a.input;
    }
  }
  for (const Array& c : constants) constants_.push_back(c.contiguous().to(context_.memory()));
  addresses_.assign(program_->buffers.size(), nullptr);
  input_staging_.resize(static_cast<size_t>(program_->num_inputs));
  output_staging_.resize(static_cast<size_t>(program_->num_outputs));
  recorder_ = std::make_unique<Recorder>(context_, profiling());
  for (const auto& step : program_->steps) {
    const auto* shader = dynamic_cast<const ShaderStep*>(step.get());
    if (shader != nullptr && shader->reports_status()) {
      status_ = Array::zeros(DType::i32, {1}).to(context_.memory());
      break;
    }
  }
}

Device& VulkanExecutable::device() const { return context_.memory(); }

RecordStats VulkanExecutable::last_run() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return recorder_->stats();
}

std::vector<Array> VulkanExecutable::run(const std::vector<Array>& inputs) {
  check_inputs(graph_, inputs);
  Device& dev = context_.memory();
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

void VulkanExecutable::run_into(const std::vector<Array>& inputs, std::vector<Array>& outputs) {
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
  record_verification("vulkan", graph_, expected, on_host(outputs));
}

void VulkanExecutable::execute(const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  Device& dev = context_.memory();
  const common::Program& p = *program_;
  if (!arena_.defined()) arena_ = Array::empty(DType::u8, {std::max<int64_t>(p.arena_bytes, 256)}, dev);
  std::vector<std::byte*> input_at(inputs.size()), output_at(outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (usable_in_place(inputs[i], dev)) {
      input_at[i] = static_cast<std::byte*>(inputs[i].device_data());
      continue;
    }
    // Host arrays and unusual views are copied into a packed device array first.
    if (!input_staging_[i].defined()) input_staging_[i] = Array::empty(inputs[i].dtype(), inputs[i].shape(), dev);
    input_staging_[i].copy_from(inputs[i].on_host() ? inputs[i].contiguous() : inputs[i].to(host_device()));
    input_at[i] = static_cast<std::byte*>(input_staging_[i].device_data());
  }
  // An output that overlaps an input is computed into staging and copied after the run, except an
  // aliased output given exactly its input's memory when the program allows writing over it.
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
  uint32_t status_word = 0;
  common::RunContext ctx;
  ctx.buffers = addresses_.data();
  ctx.stream = recorder_.get();
  if (status_.defined()) ctx.status = status_.device_data();
  {
    std::lock_guard<std::recursive_mutex> queue(context_.queue_mutex());
    recorder_->begin();
    try {
      for (const auto& step : p.steps) step->run(ctx);
      if (status_.defined()) recorder_->read_back(status_.device_data(), &status_word, sizeof status_word);
    } catch (...) {
      context_.reset_commands();  // the half-recorded buffer is dropped, never submitted
      throw;
    }
    recorder_->finish(graph_.name().c_str());
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (staged[k]) outputs[k].copy_from(output_staging_[k]);
  }
  if (status_word != 0) {
    const uint32_t zero = 0;
    dev.copy_from_host(status_.device_data(), &zero, sizeof zero);
    throw Error(fmt::format("vulkan: graph '{}': {}", graph_.name(), status_message(status_word)));
  }
}

}  // namespace tessera::backends::vulkan
