// argmax and argmin on the Vulkan backend: the index of the first extremum along one axis, i64,
// where the first NaN wins (as NumPy and the reference). The lanes are laid out as softmax's: n
// elements `inner` apart in the packed input, a power of two of invocations each, each invocation
// keeping the best of its elements and shared memory folding those, lower positions winning ties.
// The i64 result is written as two 32-bit words, so no 64-bit shader arithmetic is needed.
#include <algorithm>
#include <bit>

#include <fmt/format.h>

#include "tessera/backends/vulkan/library_ops.h"
#include "tessera/backends/vulkan/shader_step.h"
#include "tessera/backends/vulkan/shader_text.h"
#include "tessera/backends/vulkan/steps.h"

namespace tessera::backends::vulkan {

namespace {

using common::Lowering;

// The push words before the binding shifts: rows, n, inner, lanes.
constexpr int kArgPushWords = 4;

std::string arg_glsl(bool is_max, DType dtype) {
  const FloatStorage st = float_storage(dtype);
  return fmt::format(R"(#version 450
{ext}// {op} over lanes of n elements `inner` apart; `lanes` invocations (a power of two) share a lane.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer TsrX {{ {type} x[]; }};
layout(std430, binding = 1) writeonly buffer TsrOut {{ uint y[]; }};
layout(push_constant) uniform TsrLanes {{ int rows; int n; int inner; int lanes; int shift[2]; }};
shared float best_value[256];
shared int best_index[256];
// Whether (v, i) beats (bv, bi): an earlier NaN wins, then the {better} value, then the lower position
// (bi < 0: nothing yet).
bool beats(float v, int i, float bv, int bi) {{
  if (i < 0) return false;
  if (bi < 0) return true;
  if (isnan(bv)) return isnan(v) && i < bi;
  if (isnan(v)) return true;
  return v {cmp} bv || (v == bv && i < bi);
}}
void main() {{
  const int tid = int(gl_LocalInvocationID.x), lane = tid & (lanes - 1), per_group = 256 / lanes;
  const int groups = (rows + per_group - 1) / per_group;
  for (int g = int(gl_WorkGroupID.x); g < groups; g += int(gl_NumWorkGroups.x)) {{
    const int row = g * per_group + tid / lanes;
    const int base = (row / inner) * n * inner + row % inner;
    float bv = 0.0;
    int bi = -1;
    if (row < rows) {{
      for (int k = lane; k < n; k += lanes) {{
        const float v = {load};
        if (beats(v, k, bv, bi)) {{
          bv = v;
          bi = k;
        }}
      }}
    }}
    best_value[tid] = bv;
    best_index[tid] = bi;
    for (int s = lanes >> 1; s > 0; s >>= 1) {{
      barrier();
      if (lane < s && beats(best_value[tid + s], best_index[tid + s], best_value[tid], best_index[tid])) {{
        best_value[tid] = best_value[tid + s];
        best_index[tid] = best_index[tid + s];
      }}
    }}
    barrier();
    if (row < rows && lane == 0) {{
      y[shift[1] + 2 * row] = uint(best_index[tid]);
      y[shift[1] + 2 * row + 1] = 0u;
    }}
    barrier();
  }}
}}
)",
                     fmt::arg("ext", storage_extensions(dtype_size(dtype))), fmt::arg("op", is_max ? "argmax" : "argmin"),
                     fmt::arg("type", st.type), fmt::arg("better", is_max ? "greater" : "smaller"),
                     fmt::arg("cmp", is_max ? ">" : "<"), fmt::arg("load", st.load("x[shift[0] + base + k * inner]")));
}

bool claim_arg(const ir::Node& node) {
  return node.inputs().size() == 1 && node.num_outputs() == 1 && library_float(node.input(0).dtype()) &&
         node.input(0).rank() > 0 && node.output_types()[0].dtype == DType::i64 && fits_int_indexing(node);
}

bool lower_arg(Lowering& L, const ir::NodePtr& node) {
  if (!claim_arg(*node)) return false;
  const ir::Value& in = node->input(0);
  const int64_t axis = normalize_axis(node->attrs().get_int("axis"), in.rank(), node->op_name().c_str());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (d != axis) (d < axis ? outer : inner) *= in.shape()[static_cast<size_t>(d)];
  }
  const int64_t n = in.shape()[static_cast<size_t>(axis)], rows = outer * inner;
  const int32_t x = L.packed(L.value(in));
  const ir::Value out(node, 0);
  const int32_t y = L.produce(out);
  const DType dt = in.dtype();
  const auto es = static_cast<uint32_t>(dtype_size(dt));
  const auto width = static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(std::clamp<int64_t>(n, 1, 256))));
  const bool is_max = node->op_name() == "argmax";
  ShaderDispatch d;
  d.pipeline = lowering_context().pipelines().pipeline(arg_glsl(is_max, dt), 2,
                                                       fmt::format("{}_{}", node->op_name(), dtype_name(dt)));
  d.bindings = {{L.operand(x), static_cast<uint64_t>(in.type().numel()) * es, false, es},
                {L.operand(y), static_cast<uint64_t>(rows) * 8, true, 4}};
  d.push = {static_cast<uint32_t>(rows), static_cast<uint32_t>(n), static_cast<uint32_t>(inner),
            static_cast<uint32_t>(width)};
  d.shift_word = kArgPushWords;
  d.groups = {library_groups(rows, 256 / width), 1, 1};
  L.emit(std::make_unique<ShaderStep>(std::vector<ShaderDispatch>{std::move(d)},
                                      fmt::format("{} {} ({} lanes of {})", node->op_name(), ir::type_str(in.type()),
                                                  rows, n)),
         {x}, {y});
  return true;
}

}  // namespace

void register_arg_lowerings(common::LoweringTable& table) {
  table["argmax"] = {lower_arg, claim_arg, true};
  table["argmin"] = {lower_arg, claim_arg, true};
}

}  // namespace tessera::backends::vulkan
