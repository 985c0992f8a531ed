#include "tessera/backends/common/device_executable.h"

#include <algorithm>

#include "tessera/backends/verify.h"
#include "tessera/core/error.h"

namespace tessera::backends::common {

namespace {

bool storages_overlap(const Array& a, const Array& b) {
  if (a.nbytes() == 0 || b.nbytes() == 0 || &a.device() != &b.device()) return false;
  const std::byte* a0 = a.storage()->data();
  const std::byte* b0 = b.storage()->data();
  return a0 < b0 + b.storage()->nbytes() && b0 < a0 + a.storage()->nbytes();
}

std::vector<Array> on_host(const std::vector<Array>& arrays) {
  std::vector<Array> out;
  out.reserve(arrays.size());
  for (const Array& a : arrays) out.push_back(a.to(host_device()));
  return out;
}

}  // namespace

DeviceExecutable::DeviceExecutable(std::string backend, Device& device, ir::Graph graph,
                                   std::shared_ptr<const Program> program, std::vector<Array> constants,
                                   std::vector<Alias> aliases, size_t alignment)
    : backend_(std::move(backend)), device_(device), graph_(std::move(graph)), program_(std::move(program)),
      alignment_(alignment) {
  aliases_ = std::move(aliases);
  writes_over_input_.assign(static_cast<size_t>(program_->num_outputs), -1);
  for (const Alias& a : aliases_) {
    if (can_write_over_input(*program_, a.input, a.output)) writes_over_input_[static_cast<size_t>(a.output)] = a.input;
  }
  for (const Array& c : constants) constants_.push_back(c.contiguous().to(device_));
  addresses_.assign(program_->buffers.size(), nullptr);
  input_staging_.resize(static_cast<size_t>(program_->num_inputs));
  output_staging_.resize(static_cast<size_t>(program_->num_outputs));
}

bool DeviceExecutable::usable_in_place(const Array& a) const {
  const size_t align = alignment_ != 0 ? alignment_ : std::max<size_t>(dtype_size(a.dtype()), 1);
  return &a.device() == &device_ && a.is_contiguous() && reinterpret_cast<uintptr_t>(a.device_data()) % align == 0;
}

std::vector<Array> DeviceExecutable::run(const std::vector<Array>& inputs) {
  check_inputs(graph_, inputs);
  std::vector<Array> outputs;
  outputs.reserve(graph_.outputs().size());
  for (const ir::Value& v : graph_.outputs()) outputs.push_back(Array::empty(v.dtype(), v.shape(), device_));
  for (const Alias& a : aliases_) {
    const Array& in = inputs[static_cast<size_t>(a.input)];
    if (usable_in_place(in)) outputs[static_cast<size_t>(a.output)] = in;
  }
  run_into(inputs, outputs);
  for (const Alias& a : aliases_) {
    Array in = inputs[static_cast<size_t>(a.input)];
    if (!usable_in_place(in)) {
      in.copy_from(outputs[static_cast<size_t>(a.output)]);
      outputs[static_cast<size_t>(a.output)] = in;
    }
  }
  return outputs;
}

void DeviceExecutable::run_into(const std::vector<Array>& inputs, std::vector<Array>& outputs) {
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
  record_verification(backend_, graph_, expected, on_host(outputs));
}

void DeviceExecutable::execute(const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  prepare();
  const Program& p = *program_;
  if (!arena_.defined()) arena_ = Array::empty(DType::u8, {std::max<int64_t>(p.arena_bytes, 256)}, device_);
  std::vector<std::byte*> input_at(inputs.size()), output_at(outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (usable_in_place(inputs[i])) {
      input_at[i] = static_cast<std::byte*>(inputs[i].device_data());
      continue;
    }
    // Host arrays and unusual views are copied into a packed device array first (ordered before the
    // steps: the same stream or queue).
    if (!input_staging_[i].defined()) input_staging_[i] = Array::empty(inputs[i].dtype(), inputs[i].shape(), device_);
    input_staging_[i].copy_from(inputs[i].on_host() ? inputs[i].contiguous() : inputs[i].to(host_device()));
    input_at[i] = static_cast<std::byte*>(input_staging_[i].device_data());
  }
  // An output that overlaps an input is computed into staging and copied after the run, except an
  // aliased output given exactly its input's memory when the program allows writing over it (a KV cache
  // updated in place).
  std::vector<bool> staged(outputs.size(), false);
  for (size_t k = 0; k < outputs.size(); ++k) {
    bool s = !usable_in_place(outputs[k]);
    const int32_t over = writes_over_input_[k];
    for (size_t i = 0; i < inputs.size() && !s; ++i) {
      const bool same = static_cast<int32_t>(i) == over && input_at[i] == outputs[k].device_data() &&
                        outputs[k].nbytes() == inputs[i].nbytes();
      s = !same && storages_overlap(outputs[k], inputs[i]);
    }
    staged[k] = s;
    if (s && !output_staging_[k].defined()) {
      output_staging_[k] = Array::empty(outputs[k].dtype(), outputs[k].shape(), device_);
    }
    output_at[k] = static_cast<std::byte*>(s ? output_staging_[k].device_data() : outputs[k].device_data());
  }
  resolve_buffers(p, static_cast<std::byte*>(arena_.device_data()), input_at, output_at, constants_, addresses_);
  RunContext ctx;
  ctx.buffers = addresses_.data();
  launch(ctx);
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (staged[k]) outputs[k].copy_from(output_staging_[k]);
  }
  finish();
}

}  // namespace tessera::backends::common
