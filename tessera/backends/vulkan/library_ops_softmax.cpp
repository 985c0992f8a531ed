// softmax, log_softmax and logsumexp on the Vulkan backend: one shader per op and dtype over "lanes"
// (the elements one result depends on: n of them, `inner` apart in the packed input). A power of two
// of invocations shares each lane (up to 256: one lane a workgroup; short lanes pack many into one),
// reducing the maximum and then the sum of exponentials in shared memory, so the input is read three
// times and nothing is written between. logsumexp takes any run of consecutive axes as its lane.
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
constexpr int kLanePushWords = 4;

// What each lane writes once its maximum m and sum s are known (k: the lane's element, i: its offset).
std::string lane_result(const std::string& op, const FloatStorage& st) {
  if (op == "softmax") {
    return fmt::format(
        "for (int k = lane; k < n; k += lanes) {{ const int i = base + k * inner; y[shift[1] + i] = {}; }}",
        st.store("exp(load_x(i) - m) / s"));
  }
  if (op == "log_softmax") {
    return fmt::format(
        "for (int k = lane; k < n; k += lanes) {{ const int i = base + k * inner; y[shift[1] + i] = {}; }}",
        st.store("load_x(i) - m - log(s)"));
  }
  // logsumexp: a NaN anywhere gives NaN (m is NaN then), an infinite maximum itself (all -inf: -inf).
  return fmt::format("if (lane == 0) y[shift[1] + row] = {};", st.store("isnan(m) || isinf(m) ? m : m + log(s)"));
}

std::string lane_glsl(const std::string& op, DType dtype) {
  const FloatStorage st = float_storage(dtype);
  return fmt::format(R"(#version 450
{ext}// {op} over lanes of n elements `inner` apart; `lanes` invocations (a power of two) share a lane.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer TsrX {{ {type} x[]; }};
layout(std430, binding = 1) writeonly buffer TsrY {{ {type} y[]; }};
layout(push_constant) uniform TsrLanes {{ int rows; int n; int inner; int lanes; int shift[2]; }};
shared float partial[256];
float load_x(int i) {{ return {load}; }}
// The larger of a and b where a NaN wins (a lane with a NaN is NaN throughout, as its sum makes it).
float nan_max(float a, float b) {{ return !isnan(a) && (isnan(b) || b > a) ? b : a; }}
// Folds each lane's slots of `partial` into its first slot (every invocation of the group calls these).
void fold_max(int tid, int lane) {{
  for (int s = lanes >> 1; s > 0; s >>= 1) {{
    barrier();
    if (lane < s) partial[tid] = nan_max(partial[tid], partial[tid + s]);
  }}
  barrier();
}}
void fold_sum(int tid, int lane) {{
  for (int s = lanes >> 1; s > 0; s >>= 1) {{
    barrier();
    if (lane < s) partial[tid] += partial[tid + s];
  }}
  barrier();
}}
void main() {{
  const int tid = int(gl_LocalInvocationID.x), lane = tid & (lanes - 1), per_group = 256 / lanes;
  const int groups = (rows + per_group - 1) / per_group;
  for (int g = int(gl_WorkGroupID.x); g < groups; g += int(gl_NumWorkGroups.x)) {{
    const int row = g * per_group + tid / lanes;
    const bool live = row < rows;
    const int base = (row / inner) * n * inner + row % inner;
    float m = uintBitsToFloat(0xff800000u);
    if (live) {{
      for (int k = lane; k < n; k += lanes) m = nan_max(m, load_x(base + k * inner));
    }}
    partial[tid] = m;
    fold_max(tid, lane);
    m = partial[tid - lane];
    barrier();
    float s = 0.0;
    if (live) {{
      for (int k = lane; k < n; k += lanes) s += exp(load_x(base + k * inner) - m);
    }}
    partial[tid] = s;
    fold_sum(tid, lane);
    s = partial[tid - lane];
    barrier();
    if (live) {{
      {result}
    }}
  }}
}}
)",
                     fmt::arg("ext", storage_extensions(dtype_size(dtype))), fmt::arg("op", op),
                     fmt::arg("type", st.type), fmt::arg("load", st.load("x[shift[0] + i]")),
                     fmt::arg("result", lane_result(op, st)));
}

// The lanes of a packed tensor of `shape` along axes [first, last]: rows = outer * inner lanes of n.
struct Lanes {
  int64_t rows = 1, n = 1, inner = 1;
};

Lanes lanes_of(const Shape& shape, int64_t first, int64_t last) {
  Lanes l;
  int64_t outer = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    const int64_t e = shape[static_cast<size_t>(d)];
    (d < first ? outer : d > last ? l.inner : l.n) *= e;
  }
  l.rows = outer * l.inner;
  return l;
}

// The axis run [first, last] of the node's lanes; false when logsumexp's axes are not consecutive.
bool lane_axes(const ir::Node& node, int64_t& first, int64_t& last) {
  const int64_t rank = node.input(0).rank();
  if (node.op_name() == "logsumexp") {
    const std::vector<int64_t> axes = normalize_axes(node.attrs().get_ints("axes"), rank, "logsumexp");
    if (axes.empty()) {  // a scalar: one lane of one element
      first = 0;
      last = -1;
      return true;
    }
    first = axes.front();
    last = axes.back();
    return last - first + 1 == static_cast<int64_t>(axes.size());
  }
  if (rank == 0) {
    first = 0;
    last = -1;
    return true;
  }
  first = last = normalize_axis(node.attrs().get_int("axis"), rank, node.op_name().c_str());
  return true;
}

bool claim_lanes(const ir::Node& node) {
  int64_t first = 0, last = 0;
  // Results over an empty input (logsumexp over a zero-length axis) stay on the CPU: nothing to bind.
  return node.inputs().size() == 1 && node.num_outputs() == 1 && library_float(node.input(0).dtype()) &&
         node.output_types()[0].dtype == node.input(0).dtype() && fits_int_indexing(node) &&
         (node.input(0).type().numel() > 0 || node.output_types()[0].numel() == 0) && lane_axes(node, first, last);
}

bool lower_lanes(Lowering& L, const ir::NodePtr& node) {
  if (!claim_lanes(*node)) return false;
  int64_t first = 0, last = 0;
  lane_axes(*node, first, last);
  const DType dt = node->input(0).dtype();
  const Lanes lanes = lanes_of(node->input(0).shape(), first, last);
  const int32_t x = L.packed(L.value(node->input(0)));
  const ir::Value out(node, 0);
  const int32_t y = L.produce(out);
  const auto es = static_cast<uint32_t>(dtype_size(dt));
  // Lanes up to 256 long get the power of two at or above their length; longer ones a workgroup each.
  const auto width = static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(std::clamp<int64_t>(lanes.n, 1, 256))));
  ShaderDispatch d;
  d.pipeline = lowering_context().pipelines().pipeline(lane_glsl(node->op_name(), dt), 2,
                                                       fmt::format("{}_{}", node->op_name(), dtype_name(dt)));
  d.bindings = {{L.operand(x), static_cast<uint64_t>(node->input(0).type().numel()) * es, false, es},
                {L.operand(y), static_cast<uint64_t>(out.type().numel()) * es, true, es}};
  d.push = {static_cast<uint32_t>(lanes.rows), static_cast<uint32_t>(lanes.n), static_cast<uint32_t>(lanes.inner),
            static_cast<uint32_t>(width)};
  d.shift_word = kLanePushWords;
  d.groups = {out.type().numel() == 0 ? 0 : library_groups(lanes.rows, 256 / width), 1, 1};
  L.emit(std::make_unique<ShaderStep>(std::vector<ShaderDispatch>{std::move(d)},
                                      fmt::format("{} {} ({} lanes of {}, {} invocations each)", node->op_name(),
                                                  ir::type_str(out.type()), lanes.rows, lanes.n, width)),
         {x}, {y});
  return true;
}

}  // namespace

void register_softmax_lowerings(common::LoweringTable& table) {
  for (const char* op : {"softmax", "log_softmax", "logsumexp"}) table[op] = {lower_lanes, claim_lanes, true};
}

}  // namespace tessera::backends::vulkan
