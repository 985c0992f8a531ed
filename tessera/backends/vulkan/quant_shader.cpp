#include "tessera/backends/vulkan/quant_shader.h"

#include <algorithm>

#include <fmt/format.h>

#include "tessera/backends/common/epilogues.h"
#include "tessera/core/error.h"

namespace tessera::backends::vulkan {

namespace {

using quant::GgmlType;

// The weight binding and reads of its bytes. Every block size and field offset of the formats below
// is even, so 16-bit fields never straddle a word.
constexpr const char* kPrelude = R"(layout(std430, binding = 0) readonly buffer TsrW { uint w[]; };
uint ld8(uint b) { return (w[b >> 2] >> ((b & 3u) << 3)) & 255u; }
uint ld16(uint b) { return (w[b >> 2] >> ((b & 2u) << 3)) & 65535u; }
float half_at(uint b) { return unpackHalf2x16(ld16(b)).x; }
)";

// Per type, `decode(row, s, q, s0, s1, off)` reads group s of the row starting at byte `row` (GROUP
// consecutive values): value i is s0 * q[i] + off below GROUP / 2 and s1 * q[i] + off above (two
// scales: Q6_K's sub-blocks of 16); HAS_OFFSET says whether off can be non-zero. The scales are
// formed in the reference's order (quant/dequantize.cpp), as the CUDA kernels do, so that decoded
// values equal the reference's bit for bit. Layouts: quant/blocks.h.
constexpr const char* kQ4_0 = R"(#define GROUP 32u
#define HAS_OFFSET 0
void decode(uint row, uint s, out float q[GROUP], out float s0, out float s1, out float off) {
  const uint b = row + 18u * s;
  s0 = half_at(b);
  s1 = s0;
  off = 0.0;
  for (uint j = 0u; j < 8u; ++j) {
    const uint v = ld16(b + 2u + 2u * j);
    q[2u * j] = float(int(v & 15u) - 8);
    q[2u * j + 1u] = float(int((v >> 8) & 15u) - 8);
    q[2u * j + 16u] = float(int((v >> 4) & 15u) - 8);
    q[2u * j + 17u] = float(int(v >> 12) - 8);
  }
}
)";

constexpr const char* kQ4_1 = R"(#define GROUP 32u
#define HAS_OFFSET 1
void decode(uint row, uint s, out float q[GROUP], out float s0, out float s1, out float off) {
  const uint b = row + 20u * s;
  s0 = half_at(b);
  s1 = s0;
  off = half_at(b + 2u);
  for (uint j = 0u; j < 8u; ++j) {
    const uint v = ld16(b + 4u + 2u * j);
    q[2u * j] = float(v & 15u);
    q[2u * j + 1u] = float((v >> 8) & 15u);
    q[2u * j + 16u] = float((v >> 4) & 15u);
    q[2u * j + 17u] = float(v >> 12);
  }
}
)";

// Q5_0: d, qh[4], qs[16] (22 bytes), x = d * (q - 16); Q5_1: d, m, qh[4], qs[16] (24), x = d * q + m.
// Bit 4 of value i is bit i of qh.
constexpr const char* kQ5_0 = "#define Q5_BYTES 22u\n#define Q5_QH 2u\n#define Q5_BIAS 16\n#define Q5_MIN 0\n";
constexpr const char* kQ5_1 = "#define Q5_BYTES 24u\n#define Q5_QH 4u\n#define Q5_BIAS 0\n#define Q5_MIN 1\n";
constexpr const char* kQ5Body = R"(#define GROUP 32u
#define HAS_OFFSET Q5_MIN
void decode(uint row, uint s, out float q[GROUP], out float s0, out float s1, out float off) {
  const uint b = row + Q5_BYTES * s;
  s0 = half_at(b);
  s1 = s0;
  off = Q5_MIN != 0 ? half_at(b + 2u) : 0.0;
  const uint qh = ld16(b + Q5_QH) | (ld16(b + Q5_QH + 2u) << 16);
  for (uint j = 0u; j < 8u; ++j) {
    const uint v = ld16(b + Q5_QH + 4u + 2u * j);
    for (uint t = 0u; t < 2u; ++t) {
      const uint i = 2u * j + t;
      q[i] = float(int(((v >> (8u * t)) & 15u) | (((qh >> i) & 1u) << 4)) - Q5_BIAS);
      q[i + 16u] = float(int(((v >> (8u * t + 4u)) & 15u) | (((qh >> (i + 16u)) & 1u) << 4)) - Q5_BIAS);
    }
  }
}
)";

constexpr const char* kQ8_0 = R"(#define GROUP 32u
#define HAS_OFFSET 0
void decode(uint row, uint s, out float q[GROUP], out float s0, out float s1, out float off) {
  const uint b = row + 34u * s;
  s0 = half_at(b);
  s1 = s0;
  off = 0.0;
  for (uint j = 0u; j < 16u; ++j) {
    const int v = int(ld16(b + 2u + 2u * j));
    q[2u * j] = float(bitfieldExtract(v, 0, 8));
    q[2u * j + 1u] = float(bitfieldExtract(v, 8, 8));
  }
}
)";

// Q4_K (144 bytes: d, dmin, scales[12], qs[128]) and Q5_K (176: the same with qh[32] before qs):
// groups of 32 within a 256-value super-block, 6-bit scales and mins (quant/blocks.h k4_scale_min).
constexpr const char* kQ4_K = "#define K_BYTES 144u\n#define K_QS 16u\n#define K_HIGH 0\n";
constexpr const char* kQ5_K = "#define K_BYTES 176u\n#define K_QS 48u\n#define K_HIGH 1\n";
constexpr const char* kKBody = R"(#define GROUP 32u
#define HAS_OFFSET 1
void decode(uint row, uint s, out float q[GROUP], out float s0, out float s1, out float off) {
  const uint b = row + K_BYTES * (s >> 3);
  const uint p = s & 7u, chunk = p >> 1, shift = (p & 1u) * 4u, sc = b + 4u;
  uint scale, mn;
  if (p < 4u) {
    scale = ld8(sc + p) & 63u;
    mn = ld8(sc + p + 4u) & 63u;
  } else {
    scale = (ld8(sc + p + 4u) & 15u) | ((ld8(sc + p - 4u) >> 6) << 4);
    mn = (ld8(sc + p + 4u) >> 4) | ((ld8(sc + p) >> 6) << 4);
  }
  s0 = half_at(b) * float(scale);
  s1 = s0;
  off = -(half_at(b + 2u) * float(mn));
  const uint qs = b + K_QS + 32u * chunk;
  for (uint j = 0u; j < 16u; ++j) {
    const uint v = ld16(qs + 2u * j);
    const uint h = K_HIGH != 0 ? ld16(b + 16u + 2u * j) : 0u;
    q[2u * j] = float(((v >> shift) & 15u) + (((h >> p) & 1u) << 4));
    q[2u * j + 1u] = float(((v >> (8u + shift)) & 15u) + (((h >> (8u + p)) & 1u) << 4));
  }
}
)";

// Q6_K: ql[128], qh[64], scales[16] (int8), d (210 bytes). Group p of 32 takes nibble (p%4)/2 of
// ql[64*(p/4) + 32*(p%2) + l] and bits 2*(p%4).. of qh[32*(p/4) + l]; its halves have scales 2*(p%4)
// and the one after.
constexpr const char* kQ6_K = R"(#define GROUP 32u
#define HAS_OFFSET 0
void decode(uint row, uint s, out float q[GROUP], out float s0, out float s1, out float off) {
  const uint b = row + 210u * (s >> 3);
  const uint p = s & 7u, half_block = p >> 2, r = p & 3u;
  const float d = half_at(b + 208u);
  const int sc = int(ld16(b + 192u + 8u * half_block + 2u * r));
  s0 = d * float(bitfieldExtract(sc, 0, 8));
  s1 = d * float(bitfieldExtract(sc, 8, 8));
  off = 0.0;
  const uint ql = b + 64u * half_block + 32u * (r & 1u), qh = b + 128u + 32u * half_block;
  const uint shift = 4u * (r >> 1), hshift = 2u * r;
  for (uint j = 0u; j < 16u; ++j) {
    const uint l = ld16(ql + 2u * j), h = ld16(qh + 2u * j);
    for (uint t = 0u; t < 2u; ++t) {
      const uint v = ((l >> (8u * t + shift)) & 15u) | (((h >> (8u * t + hshift)) & 3u) << 4);
      q[2u * j + t] = float(int(v) - 32);
    }
  }
}
)";

// 16-bit float rows, GROUP values (an even number, two per word) from a word-aligned row.
constexpr const char* kHalfBody = R"(#define HAS_OFFSET 0
void decode(uint row, uint s, out float q[GROUP], out float s0, out float s1, out float off) {
  const uint b = (row >> 2) + (GROUP / 2u) * s;
  for (uint j = 0u; j < GROUP / 2u; ++j) {
    const uint v = w[b + j];
    q[2u * j] = WIDEN_LOW(v);
    q[2u * j + 1u] = WIDEN_HIGH(v);
  }
  s0 = 1.0;
  s1 = 1.0;
  off = 0.0;
}
)";

constexpr const char* kF32Body = R"(#define HAS_OFFSET 0
void decode(uint row, uint s, out float q[GROUP], out float s0, out float s1, out float off) {
  const uint b = (row >> 2) + GROUP * s;
  for (uint j = 0u; j < GROUP; ++j) q[j] = uintBitsToFloat(w[b + j]);
  s0 = 1.0;
  s1 = 1.0;
  off = 0.0;
}
)";

// The decode function of `type` for rows of k values ("" where there is none).
std::string decode_source(GgmlType type, int64_t k) {
  switch (type) {
    case GgmlType::q4_0:
      return kQ4_0;
    case GgmlType::q4_1:
      return kQ4_1;
    case GgmlType::q5_0:
      return std::string(kQ5_0) + kQ5Body;
    case GgmlType::q5_1:
      return std::string(kQ5_1) + kQ5Body;
    case GgmlType::q8_0:
      return kQ8_0;
    case GgmlType::q4_k:
      return std::string(kQ4_K) + kKBody;
    case GgmlType::q5_k:
      return std::string(kQ5_K) + kKBody;
    case GgmlType::q6_k:
      return kQ6_K;
    case GgmlType::f16:
      return fmt::format("#define GROUP {}u\n#define WIDEN_LOW(v) unpackHalf2x16(v).x\n"
                         "#define WIDEN_HIGH(v) unpackHalf2x16(v).y\n",
                         decode_group(type, k)) +
             kHalfBody;
    case GgmlType::bf16:
      return fmt::format("#define GROUP {}u\n#define WIDEN_LOW(v) uintBitsToFloat((v) << 16)\n"
                         "#define WIDEN_HIGH(v) uintBitsToFloat((v) & 0xffff0000u)\n",
                         decode_group(type, k)) +
             kHalfBody;
    case GgmlType::f32:
      return fmt::format("#define GROUP {}u\n", decode_group(type, k)) + kF32Body;
    default:
      return "";
  }
}

std::string checked_decode(GgmlType type, int64_t k) {
  TESSERA_CHECK(vulkan_decodes(type, k), "vulkan: no shader decodes rows of {} {} values", k, quant::type_name(type));
  return decode_source(type, k);
}

// The matvec's reductions of acc[] over each weight row's lanes, and the stores.
constexpr const char* kSharedReduction = R"(
      for (uint r = 0u; r < ROWS; ++r) red[r][v] = acc[r];
      for (uint o = LANES / 2u; o > 0u; o >>= 1) {
        barrier();
        if (lane < o) {
          for (uint r = 0u; r < ROWS; ++r) red[r][v] += red[r][v + o];
        }
      }
      barrier();
      if (lane == 0u && j < n) {
        for (uint r = 0u; r < ROWS; ++r) y[shift[2] + r * n + j] = finish(red[r][v], r, j);
      }
      barrier();
)";

// Subgroups lie within one row's lanes when they are no wider (the branch is uniform); each one's sum
// goes to shared memory and the row's first lane adds its subgroups' sums.
constexpr const char* kSubgroupReduction = R"(
    if (gl_SubgroupSize <= LANES) {
      for (uint r = 0u; r < ROWS; ++r) {
        const float t = subgroupAdd(acc[r]);
        if (subgroupElect()) red[r][gl_SubgroupID] = t;
      }
      barrier();
      if (lane == 0u && j < n) {
        const uint per_row = LANES / gl_SubgroupSize, first = slot * per_row;
        for (uint r = 0u; r < ROWS; ++r) {
          float t = 0.0;
          for (uint p = 0u; p < per_row; ++p) t += red[r][first + p];
          y[shift[2] + r * n + j] = finish(t, r, j);
        }
      }
      barrier();
    } else {
)";

}  // namespace

int decode_group(GgmlType type, int64_t k) {
  switch (type) {
    case GgmlType::f32:
      return k % 4 == 0 ? 4 : 1;
    case GgmlType::f16:
    case GgmlType::bf16:
      return k % 8 == 0 ? 8 : 2;
    default:
      return 32;
  }
}

bool vulkan_decodes(GgmlType type, int64_t k) {
  if (k <= 0 || decode_source(type, k).empty()) return false;
  if ((type == GgmlType::f16 || type == GgmlType::bf16) && k % 2 != 0) return false;  // rows must be word-aligned
  return k % decode_group(type, k) == 0;
}

std::string MatvecTail::suffix() const {
  std::string act = activation == kernels::Activation::none ? "" : std::string("_") + kernels::activation_name(activation);
  std::replace(act.begin(), act.end(), '-', '_');
  return std::string(bias ? "_bias" : "") + act + (residual ? "_residual" : "");
}

std::string MatvecTail::description() const {
  const std::string act = activation == kernels::Activation::none ? "" : std::string(" ") + kernels::activation_name(activation);
  return std::string(bias ? " +bias" : "") + act + (residual ? " +residual" : "");
}

std::string tail_activation_glsl(kernels::Activation a) {
  TESSERA_CHECK(common::gpu_tail_applies(a), "vulkan: a product tail with an activation other than ReLU or tanh-GELU");
  switch (a) {
    case kernels::Activation::relu:
      return "float activate(float v) { return v < 0.0 ? 0.0 : v; }\n";
    case kernels::Activation::gelu_tanh:
      // kernels/cpu/activation.h's formula; tanh's argument clamped where it is +-1 in f32 anyway (a
      // driver may compute it through exp, which overflows to inf / inf).
      return "float activate(float v) {\n"
             "  return 0.5 * v * (1.0 + tanh(clamp(0.7978845608028654 * (v + 0.044715 * v * v * v), -10.0, 10.0)));\n"
             "}\n";
    default:
      return "float activate(float v) { return v; }\n";
  }
}

TailGlsl tail_glsl(const MatvecTail& tail, int first_binding, const std::string& bias_index,
                   const std::string& residual_index, const std::string& indent) {
  TailGlsl t{tail_activation_glsl(tail.activation), ""};
  int binding = first_binding;
  if (tail.bias) {
    t.declarations += fmt::format("layout(std430, binding = {}) readonly buffer TsrBias {{ float bias[]; }};\n", binding);
    t.statements += fmt::format("{}v += bias[shift[{}] + {}];\n", indent, binding++, bias_index);
  }
  if (tail.activation != kernels::Activation::none) t.statements += indent + "v = activate(v);\n";
  if (tail.residual) {
    t.declarations +=
        fmt::format("layout(std430, binding = {}) readonly buffer TsrResidual {{ float residual[]; }};\n", binding);
    t.statements += fmt::format("{}v += residual[shift[{}] + {}];\n", indent, binding++, residual_index);
  }
  return t;
}

std::string matvec_tail_glsl(const MatvecTail& tail) {
  const TailGlsl t = tail_glsl(tail, 3, "j", "r * n + j", "  ");
  return t.declarations + "float finish(float v, uint r, uint j) {\n" + t.statements + "  return v;\n}\n";
}

std::string quant_matvec_glsl(GgmlType type, int64_t k, int rows, bool subgroups, const MatvecTail& tail) {
  TESSERA_CHECK(rows >= 1 && rows <= kMaxMatvecRows, "vulkan quant matvec: {} rows (1..{})", rows, kMaxMatvecRows);
  const std::string extensions = subgroups ? "#extension GL_KHR_shader_subgroup_basic : require\n"
                                             "#extension GL_KHR_shader_subgroup_arithmetic : require\n"
                                           : "";
  // With subgroups, invocation v is numbered subgroup by subgroup, so each subgroup's lanes are
  // consecutive (one row's) whatever order the device gives them.
  const std::string index = subgroups ? "gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID"
                                      : "gl_LocalInvocationIndex";
  const std::string reduction =
      subgroups ? std::string(kSubgroupReduction) + kSharedReduction + "    }\n" : std::string(kSharedReduction);
  return fmt::format(R"(#version 450
{ext}// {type} matvec: {rows} activation rows against every weight row, {lanes} invocations a weight row.
layout(local_size_x = {size}) in;
{prelude}{decode}layout(std430, binding = 1) readonly buffer TsrX {{ float x[]; }};
layout(std430, binding = 2) writeonly buffer TsrY {{ float y[]; }};
layout(push_constant) uniform TsrShape {{ uint n; uint k; uint row_bytes; uint shift[{bindings}]; }};
{tail}#define ROWS {rows}u
#define LANES {lanes}u
#define SLOTS {slots}u
shared float red[ROWS][SLOTS * LANES];
void main() {{
  const uint v = {index};
  const uint slot = v / LANES, lane = v % LANES, groups = k / GROUP, row_groups = (n + SLOTS - 1u) / SLOTS;
  for (uint g = gl_WorkGroupID.x; g < row_groups; g += gl_NumWorkGroups.x) {{
    const uint j = g * SLOTS + slot;
    float acc[ROWS];
    for (uint r = 0u; r < ROWS; ++r) acc[r] = 0.0;
    if (j < n) {{
      const uint row = shift[0] * 4u + j * row_bytes;
      for (uint s = lane; s < groups; s += LANES) {{
        float q[GROUP];
        float s0, s1, off;
        decode(row, s, q, s0, s1, off);
        for (uint r = 0u; r < ROWS; ++r) {{
          const uint xb = shift[1] + r * k + s * GROUP;
          float lo = 0.0, hi = 0.0, sum = 0.0;
          for (uint i = 0u; i < GROUP; ++i) {{
            const float xv = x[xb + i];
            if (i < GROUP / 2u) lo += q[i] * xv; else hi += q[i] * xv;
            if (HAS_OFFSET != 0) sum += xv;
          }}
          acc[r] += s0 * lo + s1 * hi + (HAS_OFFSET != 0 ? off * sum : 0.0);
        }}
      }}
    }}
{reduction}  }}
}}
)",
                     fmt::arg("ext", extensions), fmt::arg("type", quant::type_name(type)), fmt::arg("rows", rows),
                     fmt::arg("lanes", kMatvecLanes), fmt::arg("slots", kMatvecRowsPerGroup),
                     fmt::arg("size", kMatvecLanes * kMatvecRowsPerGroup), fmt::arg("prelude", kPrelude),
                     fmt::arg("decode", checked_decode(type, k)), fmt::arg("index", index),
                     fmt::arg("reduction", reduction), fmt::arg("bindings", 3 + tail.bindings()),
                     fmt::arg("tail", matvec_tail_glsl(tail)));
}

std::string quant_dequantize_glsl(GgmlType type, int64_t k, bool transposed) {
  return fmt::format(R"(#version 450
// {type} rows decoded to f32{how}.
layout(local_size_x = 256) in;
{prelude}{decode}layout(std430, binding = 1) writeonly buffer TsrY {{ float y[]; }};
layout(push_constant) uniform TsrShape {{ uint rows; uint k; uint row_bytes; uint shift[2]; }};
void main() {{
  const uint groups = k / GROUP, total = rows * groups;
  for (uint t = gl_GlobalInvocationID.x; t < total; t += gl_NumWorkGroups.x * 256u) {{
    const uint r = t / groups, s = t - r * groups;
    float q[GROUP];
    float s0, s1, off;
    decode(shift[0] * 4u + r * row_bytes, s, q, s0, s1, off);
    for (uint i = 0u; i < GROUP; ++i) {{
      // precise: no fused multiply-add, so the values round as the reference's.
      precise float value = (i < GROUP / 2u ? s0 : s1) * q[i] + off;
      y[shift[1] + {out}] = value;
    }}
  }}
}}
)",
                     fmt::arg("type", quant::type_name(type)), fmt::arg("how", transposed ? ", transposed" : ""),
                     fmt::arg("prelude", kPrelude), fmt::arg("decode", checked_decode(type, k)),
                     fmt::arg("out", transposed ? "(s * GROUP + i) * rows + r" : "r * k + s * GROUP + i"));
}

}  // namespace tessera::backends::vulkan
