// cumsum on the Vulkan backend: running sums along one axis (from the end with `reverse`). The lanes
// are laid out as softmax's (n elements `inner` apart in the packed input, a power of two of
// invocations each); each invocation sums a contiguous chunk of its lane, an exclusive prefix sum of
// the chunk sums in shared memory gives every chunk its starting total, and the chunks are then summed
// again, writing as they go. Sums are in f32 (f16 values too); the reference adds in f64.
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
constexpr int kCumsumPushWords = 4;

std::string cumsum_glsl(bool reverse, DType dtype) {
  const FloatStorage st = float_storage(dtype);
  return fmt::format(R"(#version 450
{ext}// cumsum{direction} over lanes of n elements `inner` apart; `lanes` invocations (a power of two) share a lane.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer TsrX {{ {type} x[]; }};
layout(std430, binding = 1) writeonly buffer TsrY {{ {type} y[]; }};
layout(push_constant) uniform TsrLanes {{ int rows; int n; int inner; int lanes; int shift[2]; }};
shared float total[256];
// The offset of the k-th element of the lane in summing order.
int at(int base, int k) {{ return base + ({position}) * inner; }}
void main() {{
  const int tid = int(gl_LocalInvocationID.x), lane = tid & (lanes - 1), per_group = 256 / lanes;
  const int groups = (rows + per_group - 1) / per_group;
  const int chunk = (n + lanes - 1) / lanes, first = lane * chunk, last = min(n, first + chunk);
  for (int g = int(gl_WorkGroupID.x); g < groups; g += int(gl_NumWorkGroups.x)) {{
    const int row = g * per_group + tid / lanes;
    const bool live = row < rows;
    const int base = (row / inner) * n * inner + row % inner;
    float own = 0.0;
    if (live) {{
      for (int k = first; k < last; ++k) own += {load};
    }}
    // Inclusive prefix sums of the chunk totals within each lane's slots.
    total[tid] = own;
    for (int d = 1; d < lanes; d <<= 1) {{
      barrier();
      const float before = lane >= d ? total[tid - d] : 0.0;
      barrier();
      total[tid] += before;
    }}
    barrier();
    float running = total[tid] - own;
    barrier();
    if (live) {{
      for (int k = first; k < last; ++k) {{
        running += {load};
        y[shift[1] + at(base, k)] = {store};
      }}
    }}
  }}
}}
)",
                     fmt::arg("ext", storage_extensions(dtype_size(dtype))),
                     fmt::arg("direction", reverse ? " from the end" : ""), fmt::arg("type", st.type),
                     fmt::arg("position", reverse ? "n - 1 - k" : "k"), fmt::arg("load", st.load("x[shift[0] + at(base, k)]")),
                     fmt::arg("store", st.store("running")));
}

bool claim_cumsum(const ir::Node& node) {
  return node.inputs().size() == 1 && node.num_outputs() == 1 && library_float(node.input(0).dtype()) &&
         node.output_types()[0].dtype == node.input(0).dtype() && node.input(0).rank() > 0 && fits_int_indexing(node);
}

bool lower_cumsum(Lowering& L, const ir::NodePtr& node) {
  if (!claim_cumsum(*node)) return false;
  const ir::Value& in = node->input(0);
  const int64_t axis = normalize_axis(node->attrs().get_int("axis"), in.rank(), "cumsum");
  const bool reverse = node->attrs().get_bool_or("reverse", false);
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
  const uint64_t bytes = static_cast<uint64_t>(in.type().numel()) * es;
  // Lanes up to 256 long get an invocation per element; longer ones a workgroup of contiguous chunks.
  const auto width = static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(std::clamp<int64_t>(n, 1, 256))));
  ShaderDispatch d;
  d.pipeline = lowering_context().pipelines().pipeline(
      cumsum_glsl(reverse, dt), 2, fmt::format("cumsum{}_{}", reverse ? "_reverse" : "", dtype_name(dt)));
  d.bindings = {{L.operand(x), bytes, false, es}, {L.operand(y), bytes, true, es}};
  d.push = {static_cast<uint32_t>(rows), static_cast<uint32_t>(n), static_cast<uint32_t>(inner),
            static_cast<uint32_t>(width)};
  d.shift_word = kCumsumPushWords;
  d.groups = {in.type().numel() == 0 ? 0 : library_groups(rows, 256 / width), 1, 1};
  L.emit(std::make_unique<ShaderStep>(std::vector<ShaderDispatch>{std::move(d)},
                                      fmt::format("cumsum {} ({} lanes of {})", ir::type_str(in.type()), rows, n)),
         {x}, {y});
  return true;
}

}  // namespace

void register_cumsum_lowerings(common::LoweringTable& table) { table["cumsum"] = {lower_cumsum, claim_cumsum, true}; }

}  // namespace tessera::backends::vulkan
