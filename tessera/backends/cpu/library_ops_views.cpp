// View ops cost nothing at run time: each becomes a new layout over its input's buffer. reshape of a
// non-packed input is the one exception (it is packed first, as Array::reshape would copy). concat is
// the one structural op that moves data: one strided copy per input into its slab of the result, through
// the backend's copy steps, so it serves every backend.
#include "tessera/backends/cpu/library_ops.h"
#include "tessera/core/slice_range.h"

namespace tessera::backends::cpu {
namespace {

bool claim_always(const ir::Node&) {
  return true;
}

bool lower_reshape(Lowering& L, const ir::NodePtr& node) {
  const int32_t src = L.packed(L.value(node->input(0)));
  L.alias(ir::Value(node, 0), src, Layout::packed(node->output_types()[0].shape, L.info(src).layout.offset));
  return true;
}

bool lower_identity_view(Lowering& L, const ir::NodePtr& node) {  // stop_gradient
  const int32_t src = L.value(node->input(0));
  L.alias(ir::Value(node, 0), src, L.info(src).layout);
  return true;
}

bool lower_permute(Lowering& L, const ir::NodePtr& node) {
  const int32_t src = L.value(node->input(0));
  const Layout& in = L.info(src).layout;
  Layout out;
  out.offset = in.offset;
  for (int64_t axis : node->attrs().get_ints("axes")) {
    const auto d = static_cast<size_t>(normalize_axis(axis, static_cast<int64_t>(in.shape.size()), "permute"));
    out.shape.push_back(in.shape[d]);
    out.strides.push_back(in.strides[d]);
  }
  L.alias(ir::Value(node, 0), src, std::move(out));
  return true;
}

bool lower_broadcast_to(Lowering& L, const ir::NodePtr& node) {
  const int32_t src = L.value(node->input(0));
  const Layout& in = L.info(src).layout;
  Layout out;
  out.offset = in.offset;
  out.shape = node->output_types()[0].shape;
  out.strides.assign(out.shape.size(), 0);
  const size_t lead = out.shape.size() - in.shape.size();
  for (size_t d = 0; d < in.shape.size(); ++d) {
    out.strides[lead + d] = in.shape[d] == out.shape[lead + d] ? in.strides[d] : 0;
  }
  L.alias(ir::Value(node, 0), src, std::move(out));
  return true;
}

bool lower_slice(Lowering& L, const ir::NodePtr& node) {
  const int32_t src = L.value(node->input(0));
  Layout out = L.info(src).layout;
  const auto axis = static_cast<size_t>(
      normalize_axis(node->attrs().get_int("axis"), static_cast<int64_t>(out.shape.size()), "slice"));
  const SliceRange r = resolve_slice(out.shape[axis], node->attrs().get_int("start"), node->attrs().get_int("stop"),
                                     node->attrs().get_int("step"));
  out.offset += r.start * out.strides[axis];
  out.strides[axis] *= r.step;
  out.shape[axis] = r.count;
  L.alias(ir::Value(node, 0), src, std::move(out));
  return true;
}

bool lower_split(Lowering& L, const ir::NodePtr& node) {
  const int32_t src = L.value(node->input(0));
  const Layout in = L.info(src).layout;  // a copy: alias() below grows the value table
  const auto axis = static_cast<size_t>(
      normalize_axis(node->attrs().get_int("axis"), static_cast<int64_t>(in.shape.size()), "split"));
  int64_t pos = 0;
  const std::vector<int64_t>& sizes = node->attrs().get_ints("sizes");
  for (size_t i = 0; i < sizes.size(); ++i) {
    Layout piece = in;
    piece.offset += pos * in.strides[axis];
    piece.shape[axis] = sizes[i];
    pos += sizes[i];
    L.alias(ir::Value(node, static_cast<int>(i)), src, std::move(piece));
  }
  return true;
}

bool lower_flip(Lowering& L, const ir::NodePtr& node) {
  const int32_t src = L.value(node->input(0));
  Layout out = L.info(src).layout;
  for (int64_t axis : node->attrs().get_ints("axes")) {
    const auto d = static_cast<size_t>(normalize_axis(axis, static_cast<int64_t>(out.shape.size()), "flip"));
    if (out.shape[d] == 0) continue;
    out.offset += (out.shape[d] - 1) * out.strides[d];
    out.strides[d] = -out.strides[d];
  }
  L.alias(ir::Value(node, 0), src, std::move(out));
  return true;
}

// Inputs of other dtypes (concat promotes) need a conversion, which generated code or the reference does.
bool claim_concat(const ir::Node& node) {
  if (node.num_outputs() != 1 || node.output_types()[0].numel() == 0) return false;
  for (const ir::Value& in : node.inputs()) {
    if (in.dtype() != node.output_types()[0].dtype) return false;
  }
  return true;
}


bool lower_concat(Lowering& L, const ir::NodePtr& node) {
  if (!claim_concat(*node)) return false;
  const ir::Value out(node, 0);
  const auto axis = static_cast<size_t>(normalize_axis(node->attrs().get_int("axis"), out.rank(), "concat"));
  const int32_t y = L.produce(out);
  const size_t element = dtype_size(out.dtype());
  int64_t at = 0;
  for (const ir::Value& in : node->inputs()) {
    const int32_t x = L.value(in);
    const Layout src = L.info(x).layout;  // a copy: emit() may grow the value table
    Layout slab = L.info(y).layout;
    slab.offset += at * slab.strides[axis];
    slab.shape[axis] = src.shape[axis];
    at += src.shape[axis];
    if (slab.numel() == 0) continue;
    L.emit(L.steps().copy(common::CopyPlan::make(src, slab, element), Operand{L.info(x).buffer, 0},
                          Operand{L.info(y).buffer, 0}, "concat"),
           {x}, {y});
  }
  return true;
}

}  // namespace

void register_view_lowerings(LoweringTable& table) {
  // over_jit = false: a view whose consumers are all generated kernels is better fused into them.
  table["reshape"] = {lower_reshape, claim_always, false};
  table["stop_gradient"] = {lower_identity_view, claim_always, false};
  table["permute"] = {lower_permute, claim_always, false};
  table["broadcast_to"] = {lower_broadcast_to, claim_always, false};
  table["slice"] = {lower_slice, claim_always, false};
  table["split"] = {lower_split, claim_always, false};
  table["flip"] = {lower_flip, claim_always, false};
  table["concat"] = {lower_concat, claim_concat, true};
}

}  // namespace tessera::backends::cpu
