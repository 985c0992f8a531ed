// The Lowering builder: value and buffer bookkeeping while steps are emitted, then output binding,
// liveness and memory planning when the schedule is complete.
#include "tessera/backends/common/lowering.h"

#include <fmt/format.h>

#include <algorithm>

#include "tessera/backends/common/program_verifier.h"

namespace tessera::backends::common {

Lowering::Lowering(const ir::Graph& graph, FusionSet fusion, const StepFactory& steps)
    : graph_(graph), fusion_(fusion), steps_(steps), program_(std::make_unique<Program>()) {
  program_->num_inputs = static_cast<int32_t>(graph.inputs().size());
  program_->num_outputs = static_cast<int32_t>(graph.outputs().size());
  for (const ir::NodePtr& node : graph.nodes()) {
    for (const ir::Value& in : node->inputs()) ++uses_[in];
  }
  for (const ir::Value& out : graph.outputs()) ++uses_[out];
}

int32_t Lowering::value(const ir::Value& v) const {
  auto it = ids_.find(v);
  if (it == ids_.end()) {
    const auto numbers = ir::value_numbers(graph_);
    auto n = numbers.find(v);
    throw LoweringFault(current_, fmt::format("value {} ('{}' {}) is read before the step that computes it",
                                              n == numbers.end() ? std::string("%?") : fmt::format("%{}", n->second),
                                              v.node()->op_name(), ir::type_str(v.type())));
  }
  return it->second;
}

int64_t Lowering::uses(const ir::Value& v) const {
  auto it = uses_.find(v);
  return it == uses_.end() ? 0 : it->second;
}

int32_t Lowering::new_buffer(BufferKind kind, int32_t slot, int64_t bytes) {
  BufferInfo b;
  b.kind = kind;
  b.slot = slot;
  b.bytes = bytes;
  program_->buffers.push_back(b);
  return static_cast<int32_t>(program_->buffers.size() - 1);
}

int32_t Lowering::temporary(DType dtype, const Shape& shape) {
  const int32_t buffer = new_buffer(BufferKind::arena, 0, shape_numel(shape) * static_cast<int64_t>(dtype_size(dtype)));
  values_.push_back(ValueInfo{dtype, buffer, Layout::packed(shape)});
  return static_cast<int32_t>(values_.size() - 1);
}

int32_t Lowering::produce(const ir::Value& v) {
  const int32_t id = temporary(v.dtype(), v.shape());
  ids_[v] = id;
  return id;
}

int32_t Lowering::alias(const ir::Value& v, int32_t source, Layout layout) {
  values_.push_back(ValueInfo{v.dtype(), info(source).buffer, std::move(layout)});
  const auto id = static_cast<int32_t>(values_.size() - 1);
  ids_[v] = id;
  ++program_->stats.views;
  return id;
}

int32_t Lowering::bind(const ir::Value& v, int32_t buffer, DType dtype) {
  values_.push_back(ValueInfo{dtype, buffer, Layout::packed(v.shape())});
  const auto id = static_cast<int32_t>(values_.size() - 1);
  ids_[v] = id;
  return id;
}

int32_t Lowering::derived_constant(int32_t source, const std::string& tag, DType dtype, const Shape& shape,
                                   std::function<Array(const Array&)> derive) {
  if (!fusion_.has(Fusion::relayout)) return -1;
  const ValueInfo& src = info(source);
  const BufferInfo& buffer = program_->buffers[static_cast<size_t>(src.buffer)];
  if (buffer.kind != BufferKind::constant || src.layout.offset != 0 || !src.layout.contiguous() ||
      src.layout.numel() * static_cast<int64_t>(dtype_size(src.dtype)) != buffer.bytes) {
    return -1;
  }
  const auto key = std::make_pair(source, tag);
  if (auto it = derived_constants_.find(key); it != derived_constants_.end()) return it->second;
  ConstantSource c;
  c.derived_from = buffer.slot;
  c.derive = std::move(derive);
  c.tag = tag;
  const auto slot = static_cast<int32_t>(program_->constants.size());
  program_->constants.push_back(std::move(c));
  const int32_t b =
      new_buffer(BufferKind::constant, slot, shape_numel(shape) * static_cast<int64_t>(dtype_size(dtype)));
  values_.push_back(ValueInfo{dtype, b, Layout::packed(shape)});
  const auto id = static_cast<int32_t>(values_.size() - 1);
  derived_constants_.emplace(key, id);
  return id;
}

Operand Lowering::operand(int32_t id) const {
  const ValueInfo& vi = info(id);
  return Operand{vi.buffer, vi.layout.offset * static_cast<int64_t>(dtype_size(vi.dtype))};
}

int32_t Lowering::packed(int32_t id) {
  if (info(id).layout.contiguous()) return id;
  if (auto it = packed_copies_.find(id); it != packed_copies_.end()) return it->second;
  const ValueInfo src = info(id);
  const int32_t copy = temporary(src.dtype, src.layout.shape);
  const CopyPlan plan = CopyPlan::make(src.layout, info(copy).layout, dtype_size(src.dtype));
  emit(steps_.copy(plan, Operand{src.buffer, 0}, Operand{info(copy).buffer, 0},
                   fmt::format("materialise {}{}", dtype_name(src.dtype), shape_str(src.layout.shape))),
       {id}, {copy});
  packed_copies_[id] = copy;
  return copy;
}

int32_t Lowering::scratch(int64_t bytes) {
  return new_buffer(BufferKind::arena, 0, bytes);
}

void Lowering::emit(std::unique_ptr<Step> step, const std::vector<int32_t>& read_values,
                    const std::vector<int32_t>& written_values, const std::vector<int32_t>& scratch_buffers) {
  runtime::StepAccess access;
  for (int32_t id : read_values) access.reads.push_back(info(id).buffer);
  for (int32_t id : written_values) access.writes.push_back(info(id).buffer);
  for (int32_t b : scratch_buffers) access.writes.push_back(b);
  access_.push_back(std::move(access));
  program_->same_memory_ok.push_back(std::move(pending_same_memory_));
  pending_same_memory_.clear();
  step_nodes_.push_back(current_);
  ProgramStats& stats = program_->stats;
  switch (step->kind()) {
    case StepKind::library:
      ++stats.library_steps;
      break;
    case StepKind::kernel:
      ++stats.kernel_steps;
      break;
    case StepKind::fallback:
      ++stats.fallback_steps;
      break;
    case StepKind::copy:
      ++stats.copy_steps;
      break;
  }
  program_->steps.push_back(std::move(step));
}

void Lowering::allow_in_place(int32_t written, int32_t read, const std::vector<int32_t>& reads) {
  if (!fusion_.has(Fusion::in_place)) return;
  const ValueInfo& w = info(written);
  const ValueInfo& r = info(read);
  // A second reader of that memory in the step (another view, or the same value read twice) forbids
  // the hand-over.
  int readers = 0;
  for (int32_t other : reads) readers += info(other).buffer == r.buffer ? 1 : 0;
  if (readers > 1) return;
  pending_same_memory_.push_back({w.buffer, r.buffer});
  BufferInfo& wb = program_->buffers[static_cast<size_t>(w.buffer)];
  const BufferInfo& rb = program_->buffers[static_cast<size_t>(r.buffer)];
  const int64_t read_bytes = r.layout.numel() * static_cast<int64_t>(dtype_size(r.dtype));
  // Only a whole packed arena buffer can be handed over; the planner checks that it dies here.
  if (wb.kind != BufferKind::arena || rb.kind != BufferKind::arena || !r.layout.contiguous() || r.layout.offset != 0 ||
      read_bytes != rb.bytes || wb.bytes > rb.bytes || w.buffer == r.buffer) {
    return;
  }
  wb.reuse_from = r.buffer;
}

void Lowering::need_step_scratch(int64_t bytes) {
  program_->step_scratch_bytes = std::max(program_->step_scratch_bytes, bytes);
}

const Epilogue* Lowering::epilogue(const ir::Node& head) const {
  auto it = epilogues_.find(&head);
  return it == epilogues_.end() ? nullptr : &it->second;
}

const CacheAppend* Lowering::cache_append(const ir::Node& attention) const {
  auto it = cache_appends_.find(&attention);
  return it == cache_appends_.end() ? nullptr : &it->second;
}

std::unique_ptr<Program> Lowering::finish() {
  Program& p = *program_;
  const std::vector<ir::Value>& outs = graph_.outputs();
  current_ = nullptr;
  // Write results straight into the caller's arrays where a result owns a whole arena buffer;
  // everything else (inputs, constants, partial views, repeated outputs) is copied at the end.
  std::vector<bool> direct(outs.size(), false);
  for (size_t k = 0; k < outs.size(); ++k) {
    if (std::count(outs.begin(), outs.end(), outs[k]) != 1) continue;
    const ValueInfo& vi = info(value(outs[k]));
    BufferInfo& b = p.buffers[static_cast<size_t>(vi.buffer)];
    const int64_t bytes = vi.layout.numel() * static_cast<int64_t>(dtype_size(vi.dtype));
    if (b.kind == BufferKind::arena && vi.layout.contiguous() && vi.layout.offset == 0 && bytes == b.bytes) {
      b.kind = BufferKind::output;
      b.slot = static_cast<int32_t>(k);
      b.reuse_from = -1;
      direct[k] = true;
    }
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    if (direct[k]) continue;
    const int32_t src = value(outs[k]);
    const ValueInfo vi = info(src);
    const int32_t buffer = new_buffer(BufferKind::output, static_cast<int32_t>(k),
                                      vi.layout.numel() * static_cast<int64_t>(dtype_size(vi.dtype)));
    values_.push_back(ValueInfo{vi.dtype, buffer, Layout::packed(vi.layout.shape)});
    const auto dst = static_cast<int32_t>(values_.size() - 1);
    emit(steps_.copy(CopyPlan::make(vi.layout, info(dst).layout, dtype_size(vi.dtype)), Operand{vi.buffer, 0},
                     Operand{buffer, 0}, fmt::format("output {}", k)),
         {src}, {dst});
  }

  // Liveness and placement of the arena buffers.
  const auto num_buffers = static_cast<int32_t>(p.buffers.size());
  const std::vector<runtime::LiveRange> live = runtime::compute_liveness(num_buffers, access_, {});
  std::vector<runtime::BufferRequest> requests;
  std::vector<int32_t> request_of(p.buffers.size(), -1);
  for (int32_t b = 0; b < num_buffers; ++b) {
    const BufferInfo& info_b = p.buffers[static_cast<size_t>(b)];
    const runtime::LiveRange& r = live[static_cast<size_t>(b)];
    if (info_b.kind != BufferKind::arena || r.first < 0) continue;
    runtime::BufferRequest req;
    req.bytes = info_b.bytes;
    req.first = r.first;
    req.last = r.last;
    if (info_b.reuse_from >= 0) req.reuse_from = request_of[static_cast<size_t>(info_b.reuse_from)];
    request_of[static_cast<size_t>(b)] = static_cast<int32_t>(requests.size());
    requests.push_back(req);
  }
  const runtime::MemoryPlan plan = runtime::plan_memory(requests);
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    if (request_of[b] < 0) continue;
    const auto r = static_cast<size_t>(request_of[b]);
    p.buffers[b].arena_offset = plan.offsets[r];
    if (plan.in_place[r]) ++p.stats.in_place;
  }
  p.arena_bytes = plan.peak_bytes;
  p.access = access_;
  p.arena_requests = std::move(requests);
  p.memory = plan;
  if (auto fault = verify_program(p, access_, thorough_program_checks(p.arena_requests.size()))) {
    const ir::Node* node = fault->step >= 0 ? step_nodes_[static_cast<size_t>(fault->step)] : nullptr;
    throw LoweringFault(node, "the lowered program is unsound: " + fault->what);
  }
  return std::move(program_);
}

}  // namespace tessera::backends::common
