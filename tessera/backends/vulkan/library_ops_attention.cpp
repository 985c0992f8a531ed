// kv_cache_attention on the Vulkan backend: one workgroup per (query, query head) reads cache rows
// 0..position in chunks of a workgroup's width with an online softmax (the CPU kernel's scheme,
// kernels/cpu/kv_attention.h), so a decode step touches only the rows written so far and one compiled
// graph serves every position. Scores run one cache row per invocation; the weighted sum of values
// runs with the invocations over channels (a row read contiguously). The queries are read where they
// lie (no packed copy of a slice). f32 or f16 queries and caches
// (an f16 cache beside f32 queries too). A position outside the cache sets the run's status word and
// leaves that query's output 0.
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "tessera/backends/vulkan/library_ops.h"
#include "tessera/backends/vulkan/shader_step.h"
#include "tessera/backends/vulkan/shader_text.h"
#include "tessera/backends/vulkan/steps.h"

namespace tessera::backends::vulkan {

namespace {

using common::Lowering;

constexpr int kThreads = 128;
constexpr int kMaxHeadDim = 256;
// The push words before the binding shifts: m, hq, hk, rows, scale (f32 bits).
constexpr int kAttentionPushWords = 5;

// The queries are read where they lie (a slice of the stacked q/k/v projection): element (i, h, c) of
// q is at `offset + i * strides[0] + h * strides[1] + c * strides[2]` in its buffer.
std::string attention_glsl(DType q_dtype, DType kv_dtype, DType pos_dtype, int64_t d, int64_t dv,
                           const common::Layout& q) {
  const FloatStorage qs = float_storage(q_dtype), kvs = float_storage(kv_dtype);
  const bool half = q_dtype == DType::f16 || kv_dtype == DType::f16;
  return fmt::format(R"(#version 450
{ext}// kv_cache_attention: one workgroup per (query, head), cache rows in chunks of {wg}, online softmax.
layout(local_size_x = {wg}) in;
layout(std430, binding = 0) readonly buffer TsrQ {{ {qt} q[]; }};
layout(std430, binding = 1) readonly buffer TsrK {{ {kvt} kc[]; }};
layout(std430, binding = 2) readonly buffer TsrV {{ {kvt} vc[]; }};
layout(std430, binding = 3) readonly buffer TsrPos {{ int pos[]; }};
layout(std430, binding = 4) writeonly buffer TsrOut {{ {qt} o[]; }};
{status}layout(push_constant) uniform TsrShape {{ int m; int hq; int hk; int rows; float scale; int shift[6]; }};
#define WG {wg}
#define D {d}
#define DV {dv}
#define PER ((DV + WG - 1) / WG)
shared float qv[D];
shared float ps[WG];
shared float red[WG];
{reader}// The maximum or the sum of every invocation's value (all of them get it).
float workgroup_reduce(int tid, float value, bool take_max) {{
  red[tid] = value;
  for (int s = WG / 2; s > 0; s >>= 1) {{
    barrier();
    if (tid < s) red[tid] = take_max ? max(red[tid], red[tid + s]) : red[tid] + red[tid + s];
  }}
  barrier();
  const float r = red[0];
  barrier();
  return r;
}}
void main() {{
  const int tid = int(gl_LocalInvocationID.x);
  const float neg_inf = uintBitsToFloat(0xff800000u);
  for (int pair = int(gl_WorkGroupID.x); pair < m * hq; pair += int(gl_NumWorkGroups.x)) {{
    const int i = pair / hq, h = pair - i * hq, g = h / (hq / hk);
    int p = read_position(i);
    if (p < 0 || p >= rows) {{
      if (tid == 0) report({bit}u);
      p = -1;  // no rows: the output is 0
    }}
    for (int c = tid; c < D; c += WG) qv[c] = {load_q} * scale;
    barrier();
    float acc[PER];
    for (int u = 0; u < PER; ++u) acc[u] = 0.0;
    float run_max = neg_inf, run_sum = 0.0;
    for (int c0 = 0; c0 <= p; c0 += WG) {{
      const int len = min(WG, p + 1 - c0);
      float s = neg_inf;
      if (tid < len) {{
        const int kb = shift[1] + ((c0 + tid) * hk + g) * D;
        float dot = 0.0;
        for (int c = 0; c < D; ++c) dot += qv[c] * {load_k};
        s = dot;
      }}
      const float mx = max(run_max, workgroup_reduce(tid, s, true));
      const float correction = run_max == neg_inf ? 0.0 : exp(run_max - mx);
      const float e = tid < len ? exp(s - mx) : 0.0;
      ps[tid] = e;
      run_sum = run_sum * correction + workgroup_reduce(tid, e, false);  // its barriers publish ps
      run_max = mx;
      for (int u = 0; u < PER; ++u) acc[u] *= correction;
      for (int t = 0; t < len; ++t) {{
        const float weight = ps[t];
        const int vb = shift[2] + ((c0 + t) * hk + g) * DV;
        for (int u = 0; u < PER; ++u) {{
          const int c = tid + u * WG;
          if (c < DV) acc[u] += weight * {load_v};
        }}
      }}
      barrier();  // ps is rewritten by the next chunk
    }}
    for (int u = 0; u < PER; ++u) {{
      const int c = tid + u * WG;
      if (c < DV) o[shift[4] + (i * hq + h) * DV + c] = {store};
    }}
    barrier();  // qv is rewritten for the next pair
  }}
}}
)",
                     fmt::arg("ext", half ? storage_extensions(2) : ""), fmt::arg("wg", kThreads),
                     fmt::arg("qt", qs.type), fmt::arg("kvt", kvs.type), fmt::arg("status", status_glsl(5)),
                     fmt::arg("d", d), fmt::arg("dv", dv),
                     fmt::arg("reader", index_reader_glsl(pos_dtype, "read_position", "pos", "shift[3]")),
                     fmt::arg("bit", static_cast<uint32_t>(kStatusPositionOutOfRange)),
                     fmt::arg("load_q", qs.load(fmt::format("q[shift[0] + {} + i * {} + h * {} + c * {}]", q.offset,
                                                            q.strides[0], q.strides[1], q.strides[2]))),
                     fmt::arg("load_k", kvs.load("kc[kb + c]")), fmt::arg("load_v", kvs.load("vc[vb + c]")),
                     fmt::arg("store", qs.store("p >= 0 ? acc[u] / run_sum : 0.0")));
}

bool claim_kv_attention(const ir::Node& node) {
  if (node.inputs().size() != 4 || node.num_outputs() != 1) return false;
  const DType kv = node.input(1).dtype();
  if (!library_float(node.input(0).dtype()) || !library_float(kv) || node.input(2).dtype() != kv) return false;
  if (!library_index(node.input(3).dtype())) return false;
  const int64_t d = node.input(0).shape()[2], dv = node.input(2).shape()[2];
  return d > 0 && dv > 0 && d <= kMaxHeadDim && dv <= kMaxHeadDim && node.input(0).shape()[0] > 0 &&
         fits_int_indexing(node);
}

bool lower_kv_attention(Lowering& L, const ir::NodePtr& node) {
  if (!claim_kv_attention(*node)) return false;
  const Shape &qs = node->input(0).shape(), &ks = node->input(1).shape(), &vs = node->input(2).shape();
  std::vector<int32_t> ids = {L.value(node->input(0))};
  for (size_t i = 1; i < 4; ++i) ids.push_back(L.packed(L.value(node->input(i))));
  const common::Layout q_layout = L.info(ids[0]).layout;  // a copy: produce() below may move the table
  const ir::Value out(node, 0);
  const int32_t o = L.produce(out);
  const double attr = node->attrs().get_float("scale");
  const auto scale = static_cast<float>(attr > 0 ? attr : 1.0 / std::sqrt(static_cast<double>(qs[2])));
  const DType qt = node->input(0).dtype(), kvt = node->input(1).dtype(), pt = node->input(3).dtype();
  ShaderDispatch d;
  d.pipeline = lowering_context().pipelines().pipeline(
      attention_glsl(qt, kvt, pt, qs[2], vs[2], q_layout), 6,
      fmt::format("kv_cache_attention_{}_{}_d{}_{}", dtype_name(qt), dtype_name(kvt), qs[2], vs[2]));
  d.bindings.push_back(buffer_binding(L, ids[0], false, static_cast<uint32_t>(dtype_size(qt))));
  for (size_t i = 1; i < 4; ++i) {
    const DType dt = node->input(i).dtype();
    const uint32_t es = i == 3 ? 4 : static_cast<uint32_t>(dtype_size(dt));  // indices are read as int words
    d.bindings.push_back({L.operand(ids[i]), static_cast<uint64_t>(node->input(i).type().numel()) * dtype_size(dt),
                          false, es});
  }
  d.bindings.push_back({L.operand(o), static_cast<uint64_t>(out.type().numel()) * dtype_size(qt), true,
                        static_cast<uint32_t>(dtype_size(qt))});
  uint32_t scale_bits = 0;
  std::memcpy(&scale_bits, &scale, 4);
  d.push = {static_cast<uint32_t>(qs[0]), static_cast<uint32_t>(qs[1]), static_cast<uint32_t>(ks[1]),
            static_cast<uint32_t>(ks[0]), scale_bits};
  d.shift_word = kAttentionPushWords;
  d.groups = {library_groups(qs[0] * qs[1], 1), 1, 1};
  d.reports_status = true;
  L.emit(std::make_unique<ShaderStep>(std::vector<ShaderDispatch>{std::move(d)},
                                      fmt::format("kv_cache_attention {} over {}", ir::type_str(node->input(0).type()),
                                                  ir::type_str(node->input(1).type()))),
         ids, {o});
  return true;
}

}  // namespace

void register_attention_lowerings(common::LoweringTable& table) {
  table["kv_cache_attention"] = {lower_kv_attention, claim_kv_attention, true};
}

}  // namespace tessera::backends::vulkan
