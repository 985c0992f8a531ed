// kv_cache_attention on the Vulkan backend: one workgroup per (query, query head) reads cache rows
// 0..position in chunks of a workgroup's width with an online softmax (the CPU kernel's scheme,
// kernels/cpu/kv_attention.h), so a decode step touches only the rows written so far and one compiled
// graph serves every position. Scores run one cache row per invocation; the weighted sum of values
// runs with the invocations over channels (a row read contiguously). The queries are read where they
// lie (no packed copy of a slice). f32 or f16 queries and caches
// (an f16 cache beside f32 queries too). A position outside the cache sets the run's status word and
// leaves that query's output 0. A decode step's cache writes may be folded in (common/cache_appends.h):
// the shader then reads the new key and value rows from the step's f32 rows, rounded as the cache
// holds them, and the group's first head writes them into the caches.
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "tessera/backends/vulkan/library_ops.h"
#include "tessera/backends/vulkan/shader_step.h"
#include "tessera/backends/vulkan/shader_text.h"
#include "tessera/backends/vulkan/steps.h"
#include "tessera/codegen/dialect.h"

namespace tessera::backends::vulkan {

namespace {

using common::Lowering;

constexpr int kThreads = 128;
constexpr int kMaxHeadDim = 256;
// The push words before the binding shifts: m, hq, hk, rows, scale (f32 bits).
constexpr int kAttentionPushWords = 5;

// The queries are read where they lie (a slice of the stacked q/k/v projection): element (i, h, c) of
// q is at `offset + i * strides[0] + h * strides[1] + c * strides[2]` in its buffer.
// With `append` (one query), bindings 5 and 6 are the new key and value rows, f32 [hk, d] and [hk, dv]
// (the status word follows the bindings: 5, or 7).
std::string attention_glsl(DType q_dtype, DType kv_dtype, DType pos_dtype, int64_t d, int64_t dv,
                           const common::Layout& q, bool append) {
  const FloatStorage qs = float_storage(q_dtype), kvs = float_storage(kv_dtype);
  const bool half = q_dtype == DType::f16 || kv_dtype == DType::f16;
  std::string ext = half ? storage_extensions(2) : "", append_decl, append_load, key_row = "", value_row = "";
  if (append) {
    // The stored form of a new value: rounded to nearest even as index_copy's conversion rounds.
    std::string to_cached = "v";
    if (kv_dtype == DType::f16) {
      for (const std::string& r : codegen::glsl_dialect().type_requirements[static_cast<size_t>(lower::ScalarType::f16)]) {
        ext += r;
      }
      to_cached = "tsr_f32_to_f16(v)";
    }
    append_decl = fmt::format(
        "layout(std430, binding = 5) readonly buffer TsrNewK {{ float nk[]; }};\n"
        "layout(std430, binding = 6) readonly buffer TsrNewV {{ float nv[]; }};\n"
        "shared float k_new[D];\nshared float v_new[DV];\n"
        "{kvt} to_cached(float v) {{ return {to}; }}\n",
        fmt::arg("kvt", kvs.type), fmt::arg("to", to_cached));
    // The new rows as the cache holds them; the first head of the KV group stores them (no workgroup
    // reads row p of the caches during this dispatch).
    append_load = fmt::format(
        "    if (p >= 0) {{\n"
        "      const bool writer = h % (hq / hk) == 0;\n"
        "      for (int c = tid; c < D; c += WG) {{\n"
        "        const {kvt} bits = to_cached(nk[shift[5] + g * D + c]);\n"
        "        k_new[c] = {load_k};\n"
        "        if (writer) kc[shift[1] + (p * hk + g) * D + c] = bits;\n"
        "      }}\n"
        "      for (int c = tid; c < DV; c += WG) {{\n"
        "        const {kvt} bits = to_cached(nv[shift[6] + g * DV + c]);\n"
        "        v_new[c] = {load_k};\n"
        "        if (writer) vc[shift[2] + (p * hk + g) * DV + c] = bits;\n"
        "      }}\n"
        "    }}\n",
        fmt::arg("kvt", kvs.type), fmt::arg("load_k", kvs.load("bits")));
    key_row = "c0 + tid == p ? k_new[c] : ";
    value_row = "c0 + t == p ? v_new[c] : ";
  }
  const int bindings = append ? 8 : 6;
  return fmt::format(R"(#version 450
{ext}// kv_cache_attention: one workgroup per (query, head), cache rows in chunks of {wg}, online softmax.
layout(local_size_x = {wg}) in;
#define WG {wg}
#define D {d}
#define DV {dv}
layout(std430, binding = 0) readonly buffer TsrQ {{ {qt} q[]; }};
layout(std430, binding = 1) {cache_access}buffer TsrK {{ {kvt} kc[]; }};
layout(std430, binding = 2) {cache_access}buffer TsrV {{ {kvt} vc[]; }};
layout(std430, binding = 3) readonly buffer TsrPos {{ int pos[]; }};
layout(std430, binding = 4) writeonly buffer TsrOut {{ {qt} o[]; }};
{status}layout(push_constant) uniform TsrShape {{ int m; int hq; int hk; int rows; float scale; int shift[{bindings}]; }};
{append_decl}
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
{append_load}    barrier();
    float acc[PER];
    for (int u = 0; u < PER; ++u) acc[u] = 0.0;
    float run_max = neg_inf, run_sum = 0.0;
    for (int c0 = 0; c0 <= p; c0 += WG) {{
      const int len = min(WG, p + 1 - c0);
      float s = neg_inf;
      if (tid < len) {{
        const int kb = shift[1] + ((c0 + tid) * hk + g) * D;
        float dot = 0.0;
        for (int c = 0; c < D; ++c) dot += qv[c] * ({key_row}{load_k});
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
          if (c < DV) acc[u] += weight * ({value_row}{load_v});
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
                     fmt::arg("ext", ext), fmt::arg("wg", kThreads), fmt::arg("bindings", bindings),
                     fmt::arg("cache_access", append ? "" : "readonly "), fmt::arg("append_decl", append_decl),
                     fmt::arg("append_load", append_load), fmt::arg("key_row", key_row),
                     fmt::arg("value_row", value_row),
                     fmt::arg("qt", qs.type), fmt::arg("kvt", kvs.type), fmt::arg("status", status_glsl(append ? 7 : 5)),
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
  // The cache writes this step takes over (common/cache_appends.h), unless they were lowered alone.
  const bool append = L.cache_append(*node) != nullptr && !L.has(node->input(1));
  const Shape &qs = node->input(0).shape(), &ks = node->input(1).shape(), &vs = node->input(2).shape();
  const DType qt = node->input(0).dtype(), kvt = node->input(1).dtype(), pt = node->input(3).dtype();
  std::vector<int32_t> reads = {L.value(node->input(0))}, writes;
  std::vector<ShaderDispatch> dispatches;
  int32_t k = -1, v = -1, new_k = -1, new_v = -1;
  if (append) {
    // The updated caches start as the old ones (copies skipped where they are the same memory), then the
    // attention writes the new rows into them.
    const ir::Node &keys = *node->input(1).node(), &values = *node->input(2).node();
    const int32_t old_k = L.packed(L.value(keys.input(0))), old_v = L.packed(L.value(values.input(0)));
    new_k = L.packed(L.value(keys.input(2)));
    new_v = L.packed(L.value(values.input(2)));
    const int32_t pos = L.packed(L.value(node->input(3)));
    k = L.produce(node->input(1));
    v = L.produce(node->input(2));
    reads.insert(reads.end(), {old_k, old_v, pos, new_k, new_v});
    L.allow_in_place(k, old_k, reads);
    L.allow_in_place(v, old_v, reads);
    dispatches.push_back(cache_copy_dispatch(L, old_k, k, kvt, ks[0] * ks[1] * ks[2]));
    dispatches.push_back(cache_copy_dispatch(L, old_v, v, kvt, vs[0] * vs[1] * vs[2]));
    writes = {k, v};
  } else {
    k = L.packed(L.value(node->input(1)));
    v = L.packed(L.value(node->input(2)));
    reads.insert(reads.end(), {k, v, L.packed(L.value(node->input(3)))});
  }
  const int32_t pos = reads[3];  // after q and the two caches either way
  const common::Layout q_layout = L.info(reads[0]).layout;  // a copy: produce() below may move the table
  const ir::Value out(node, 0);
  const int32_t o = L.produce(out);
  writes.insert(writes.begin(), o);
  const double attr = node->attrs().get_float("scale");
  const auto scale = static_cast<float>(attr > 0 ? attr : 1.0 / std::sqrt(static_cast<double>(qs[2])));
  ShaderDispatch d;
  d.pipeline = lowering_context().pipelines().pipeline(
      attention_glsl(qt, kvt, pt, qs[2], vs[2], q_layout, append), append ? 8 : 6,
      fmt::format("kv_cache_attention_{}_{}_d{}_{}{}", dtype_name(qt), dtype_name(kvt), qs[2], vs[2],
                  append ? "_append" : ""));
  const auto kv_unit = static_cast<uint32_t>(dtype_size(kvt));
  d.bindings.push_back(buffer_binding(L, reads[0], false, static_cast<uint32_t>(dtype_size(qt))));
  d.bindings.push_back({L.operand(k), static_cast<uint64_t>(ks[0] * ks[1] * ks[2]) * kv_unit, append, kv_unit});
  d.bindings.push_back({L.operand(v), static_cast<uint64_t>(vs[0] * vs[1] * vs[2]) * kv_unit, append, kv_unit});
  d.bindings.push_back({L.operand(pos), static_cast<uint64_t>(qs[0]) * dtype_size(pt), false, 4});  // int words
  d.bindings.push_back({L.operand(o), static_cast<uint64_t>(out.type().numel()) * dtype_size(qt), true,
                        static_cast<uint32_t>(dtype_size(qt))});
  if (append) {
    d.bindings.push_back({L.operand(new_k), static_cast<uint64_t>(ks[1] * ks[2]) * 4, false, 4});
    d.bindings.push_back({L.operand(new_v), static_cast<uint64_t>(vs[1] * vs[2]) * 4, false, 4});
  }
  uint32_t scale_bits = 0;
  std::memcpy(&scale_bits, &scale, 4);
  d.push = {static_cast<uint32_t>(qs[0]), static_cast<uint32_t>(qs[1]), static_cast<uint32_t>(ks[1]),
            static_cast<uint32_t>(ks[0]), scale_bits};
  d.shift_word = kAttentionPushWords;
  d.groups = {library_groups(qs[0] * qs[1], 1), 1, 1};
  d.reports_status = true;
  dispatches.push_back(std::move(d));
  L.emit(std::make_unique<ShaderStep>(std::move(dispatches),
                                      fmt::format("kv_cache_attention {} over {}{}", ir::type_str(node->input(0).type()),
                                                  ir::type_str(node->input(1).type()),
                                                  append ? " writing the new cache rows" : "")),
         reads, writes);
  return true;
}

}  // namespace

bool vulkan_folds_cache_writes(const ir::Node& attention) { return claim_kv_attention(attention); }

void register_attention_lowerings(common::LoweringTable& table) {
  table["kv_cache_attention"] = {lower_kv_attention, claim_kv_attention, true};
}

}  // namespace tessera::backends::vulkan
