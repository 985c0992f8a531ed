#include "tessera/backends/vulkan/quant_matvec_wide.h"

#include <cstdlib>

#include <fmt/format.h>

#include "tessera/core/error.h"

namespace tessera::backends::vulkan {

namespace {

using quant::GgmlType;

// Field readers of a superblock held in registers (constant indices once the loops unroll), and the
// exact small-integer conversion of the CUDA kernels: 2^23 + v is the float with v in its mantissa,
// so one subtraction gives v - bias without the int-to-float converter.
constexpr const char* kWideFields = R"(uint h16(uint t, uint h) { return (sw[t][h >> 1] >> ((h & 1u) << 4)) & 0xffffu; }
uint b8(uint t, uint b) { return (sw[t][b >> 2] >> ((b & 3u) << 3)) & 0xffu; }
uint w32(uint t, uint h) { return h16(t, h) | (h16(t, h + 1u) << 16); }
float small_int(uint v, float bias) { return uintBitsToFloat(0x4B000000u | v) - (8388608.0 + bias); }
)";

// Per format, `group_dot(t, g, xsum)`: group g (values 32g..) of row t's superblock sw[t] dotted with xs
// (its 32 activation values; xsum their sum, used where HAS_OFFSET), scales applied as the reference
// forms them (quant/dequantize.cpp). Layouts: quant/blocks.h.

// Q4_0: 8 blocks of 18 bytes (d, 16 bytes of nibbles: byte j holds values j and j + 16).
constexpr const char* kWideQ4_0 = R"(#define HAS_OFFSET 0
float group_dot(uint t, uint g, float xsum) {
  const uint h = 9u * g;
  float dot = 0.0;
  UNROLL for (uint i = 0u; i < 4u; ++i) {
    const uint q = w32(t, h + 1u + 2u * i);
    const vec4 lo = xs[i], hi = xs[i + 4u];
    dot += small_int(q & 15u, 8.0) * lo.x + small_int((q >> 8) & 15u, 8.0) * lo.y +
           small_int((q >> 16) & 15u, 8.0) * lo.z + small_int((q >> 24) & 15u, 8.0) * lo.w;
    dot += small_int((q >> 4) & 15u, 8.0) * hi.x + small_int((q >> 12) & 15u, 8.0) * hi.y +
           small_int((q >> 20) & 15u, 8.0) * hi.z + small_int(q >> 28, 8.0) * hi.w;
  }
  return unpackHalf2x16(h16(t, h)).x * dot;
}
)";

// Q4_1: 8 blocks of 20 bytes (d, m, 16 bytes of nibbles), x = d * q + m.
constexpr const char* kWideQ4_1 = R"(#define HAS_OFFSET 1
float group_dot(uint t, uint g, float xsum) {
  const uint at = 5u * g;
  float dot = 0.0;
  UNROLL for (uint i = 0u; i < 4u; ++i) {
    const uint q = sw[t][at + 1u + i];
    const vec4 lo = xs[i], hi = xs[i + 4u];
    dot += small_int(q & 15u, 0.0) * lo.x + small_int((q >> 8) & 15u, 0.0) * lo.y +
           small_int((q >> 16) & 15u, 0.0) * lo.z + small_int((q >> 24) & 15u, 0.0) * lo.w;
    dot += small_int((q >> 4) & 15u, 0.0) * hi.x + small_int((q >> 12) & 15u, 0.0) * hi.y +
           small_int((q >> 20) & 15u, 0.0) * hi.z + small_int(q >> 28, 0.0) * hi.w;
  }
  const vec2 dm = unpackHalf2x16(sw[t][at]);
  return dm.x * dot + dm.y * xsum;
}
)";

// Q8_0: 8 blocks of 34 bytes (d, 32 int8 values; byte ^ 128 is the value + 128).
constexpr const char* kWideQ8_0 = R"(#define HAS_OFFSET 0
float group_dot(uint t, uint g, float xsum) {
  const uint h = 17u * g;
  float dot = 0.0;
  UNROLL for (uint i = 0u; i < 8u; ++i) {
    const uint q = w32(t, h + 1u + 2u * i) ^ 0x80808080u;
    const vec4 v = xs[i];
    dot += small_int(q & 255u, 128.0) * v.x + small_int((q >> 8) & 255u, 128.0) * v.y +
           small_int((q >> 16) & 255u, 128.0) * v.z + small_int(q >> 24, 128.0) * v.w;
  }
  return unpackHalf2x16(h16(t, h)).x * dot;
}
)";

// Q4_K (144 bytes: d, dmin, 12 bytes of 6-bit scales and mins, 128 of nibbles) and Q5_K (176: qh[32]
// before the nibbles, bit g of qh[l] the fifth bit of value l of group g). Group g takes nibble g % 2
// of bytes 32 (g / 2) .. of the nibbles.
constexpr const char* kWideQ4_K = "#define QS_WORD 4u\n#define K_HIGH 0\n";
constexpr const char* kWideQ5_K = "#define QS_WORD 12u\n#define K_HIGH 1\n";
constexpr const char* kWideKBody = R"(#define HAS_OFFSET 1
float group_dot(uint t, uint g, float xsum) {
  uint scale, mn;
  if (g < 4u) {
    scale = b8(t, 4u + g) & 63u;
    mn = b8(t, 8u + g) & 63u;
  } else {
    scale = (b8(t, 8u + g) & 15u) | ((b8(t, g) >> 6) << 4);
    mn = (b8(t, 8u + g) >> 4) | ((b8(t, 4u + g) >> 6) << 4);
  }
  const vec2 dm = unpackHalf2x16(sw[t][0]);
  const uint shift = (g & 1u) * 4u;
  float dot = 0.0;
  UNROLL for (uint i = 0u; i < 8u; ++i) {
    uint q = (sw[t][QS_WORD + 8u * (g >> 1) + i] >> shift) & 0x0f0f0f0fu;
    if (K_HIGH != 0) q |= ((sw[t][4u + i] >> g) & 0x01010101u) << 4;
    const vec4 v = xs[i];
    dot += small_int(q & 255u, 0.0) * v.x + small_int((q >> 8) & 255u, 0.0) * v.y +
           small_int((q >> 16) & 255u, 0.0) * v.z + small_int(q >> 24, 0.0) * v.w;
  }
  return dm.x * float(scale) * dot - dm.y * float(mn) * xsum;
}
)";

std::string group_source(GgmlType type) {
  switch (type) {
    case GgmlType::q4_0:
      return kWideQ4_0;
    case GgmlType::q4_1:
      return kWideQ4_1;
    case GgmlType::q8_0:
      return kWideQ8_0;
    case GgmlType::q4_k:
      return std::string(kWideQ4_K) + kWideKBody;
    case GgmlType::q5_k:
      return std::string(kWideQ5_K) + kWideKBody;
    default:
      return "";
  }
}

// 32-bit words of a superblock (256 values): 16 bytes per 4 of them.
int superblock_words(GgmlType type) {
  const quant::TypeTraits& t = quant::type_traits(type);
  return static_cast<int>(t.type_size * (kWideMatvecValues / t.block_size) / 4);
}

// The weight and activation loads (16 bytes at a time where the operand starts 16 bytes into its
// binding's alignment, a uniform branch; rows and superblocks are then 16-byte aligned too), the
// product loop and the butterfly over a row's lanes.
constexpr const char* kWideMain = R"(layout(std430, binding = 0) readonly buffer TsrW { uint w[]; };
layout(std430, binding = 0) readonly buffer TsrW4 { uvec4 w4[]; };
layout(std430, binding = 1) readonly buffer TsrX { float x[]; };
layout(std430, binding = 1) readonly buffer TsrX4 { vec4 x4[]; };
layout(std430, binding = 2) writeonly buffer TsrY { float y[]; };
#define SLOTS (WG_SIZE / LANES)
void load_superblock(uint t, uint word) {
  if ((shift[0] & 3u) == 0u) {
    UNROLL for (uint i = 0u; i < SB_WORDS / 4u; ++i) {
      const uvec4 v = w4[(word >> 2) + i];
      sw[t][4u * i] = v.x;
      sw[t][4u * i + 1u] = v.y;
      sw[t][4u * i + 2u] = v.z;
      sw[t][4u * i + 3u] = v.w;
    }
  } else {
    UNROLL for (uint i = 0u; i < SB_WORDS; ++i) sw[t][i] = w[word + i];
  }
}
// The 32 activation values at `at` (a multiple of 4 from the binding's start).
void load_group(uint at) {
  if ((shift[1] & 3u) == 0u) {
    UNROLL for (uint i = 0u; i < 8u; ++i) xs[i] = x4[(at >> 2) + i];
  } else {
    UNROLL for (uint i = 0u; i < 8u; ++i) xs[i] = vec4(x[at + 4u * i], x[at + 4u * i + 1u], x[at + 4u * i + 2u], x[at + 4u * i + 3u]);
  }
}
// Each invocation's sums, one slot per (weight row t, activation row r) at red[t * ROWS + r]: in
// shared memory rather than registers so that the loop over activation rows indexes them without
// being unrolled (compilers unroll loops that index private arrays, and the code grows with them).
shared float red[RB * ROWS][WG_SIZE];
void main() {
  const uint v = INDEX;
  const uint lane = v % LANES, slot = v / LANES, superblocks = k / 256u;
  const uint row_groups = (n + RB * SLOTS - 1u) / (RB * SLOTS), row_words = row_bytes >> 2;
  for (uint g = gl_WorkGroupID.x; g < row_groups; g += gl_NumWorkGroups.x) {
    const uint j0 = (g * SLOTS + slot) * RB;
    barrier();  // the previous row group's sums have been read
    for (uint i = 0u; i < RB * ROWS; ++i) red[i][v] = 0.0;
    if (j0 < n) {
      for (uint s = lane; s < superblocks; s += LANES) {
        // Rows past n read row n - 1 again (their sums are not stored).
        UNROLL for (uint t = 0u; t < RB; ++t) load_superblock(t, shift[0] + min(j0 + t, n - 1u) * row_words + s * SB_WORDS);
        // Groups unrolled, so that the superblock's words stay in registers.
        for (uint r = 0u; r < ROWS; ++r) {
          const uint xb = shift[1] + r * k + s * 256u;
          float part[RB];
          UNROLL for (uint t = 0u; t < RB; ++t) part[t] = 0.0;
          UNROLL for (uint q = 0u; q < 8u; ++q) {
            load_group(xb + 32u * q);
            float xsum = 0.0;
            if (HAS_OFFSET != 0) {
              UNROLL for (uint i = 0u; i < 8u; ++i) xsum += (xs[i].x + xs[i].y) + (xs[i].z + xs[i].w);
            }
            UNROLL for (uint t = 0u; t < RB; ++t) part[t] += group_dot(t, q, xsum);
          }
          UNROLL for (uint t = 0u; t < RB; ++t) red[t * ROWS + r][v] += part[t];
        }
      }
    }
    // lane + m for lane < m, halving m: the butterfly's order, so both ways give the same bits.
    if (SHUFFLE_LANES) {
      for (uint i = 0u; i < RB * ROWS; ++i) {
        float a = red[i][v];
        UNROLL for (uint m = LANES / 2u; m > 0u; m >>= 1) a += SHUFFLE_XOR(a, m);
        red[i][v] = a;
      }
    } else {
      for (uint m = LANES / 2u; m > 0u; m >>= 1) {
        barrier();
        if (lane < m) {
          for (uint i = 0u; i < RB * ROWS; ++i) red[i][v] += red[i][v + m];
        }
      }
    }
    if (lane == 0u) {
      for (uint t = 0u; t < RB; ++t) {
        const uint j = j0 + t;
        if (j < n) {
          for (uint r = 0u; r < ROWS; ++r) y[shift[2] + r * n + j] = finish(red[t * ROWS + r][v], r, j);
        }
      }
    }
  }
}
)";

int forced_row_block() {
  const char* env = std::getenv("TESSERA_VULKAN_MATVEC_ROWS");
  const int v = env != nullptr ? std::atoi(env) : 0;
  return v == 1 || v == 2 || v == 4 ? v : 0;
}

}  // namespace

bool wide_matvec_takes(GgmlType type, int64_t k) {
  return k > 0 && k % kWideMatvecValues == 0 && !group_source(type).empty() && k <= INT32_MAX;
}

WideMatvecShape wide_matvec_shape(GgmlType type, int64_t k, int rows) {
  WideMatvecShape s;
  const int64_t superblocks = k / kWideMatvecValues;
  s.lanes = 1;
  while (s.lanes < 32 && s.lanes < superblocks) s.lanes *= 2;
  const bool narrow = type != GgmlType::q8_0 && type != GgmlType::q5_k;
  s.row_block = rows == 1 && narrow ? 2 : 1;
  if (const int forced = forced_row_block()) s.row_block = forced;
  // The shared-memory sums hold row_block * rows floats per invocation: at most 16 (16 KB).
  while (s.row_block > 1 && s.row_block * rows > 16) s.row_block /= 2;
  return s;
}

std::string quant_matvec_wide_glsl(GgmlType type, int64_t k, int rows, const WideMatvecShape& shape, bool shuffle,
                                   const MatvecTail& tail) {
  TESSERA_CHECK(wide_matvec_takes(type, k), "vulkan wide matvec: no rows of {} {} values", k, quant::type_name(type));
  TESSERA_CHECK(rows >= 1 && rows <= kMaxMatvecRows, "vulkan wide matvec: {} rows (1..{})", rows, kMaxMatvecRows);
  TESSERA_CHECK(shape.row_block * rows <= 16 && shape.lanes >= 1 && shape.lanes <= 32 &&
                    (shape.lanes & (shape.lanes - 1)) == 0,
                "vulkan wide matvec: {} lanes, {} weight rows per invocation", shape.lanes, shape.row_block);
  const std::string extensions = shuffle ? "#extension GL_KHR_shader_subgroup_basic : require\n"
                                           "#extension GL_KHR_shader_subgroup_shuffle : require\n"
                                         : "";
  // With shuffles, invocations are numbered subgroup by subgroup so that a row's lanes (a power of
  // two, no wider than the subgroup) lie in one subgroup whatever order the device gives them.
  const std::string index = shuffle ? "(gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID)"
                                    : "gl_LocalInvocationIndex";
  return fmt::format(R"(#version 450
#extension GL_EXT_control_flow_attributes : require
{ext}// {type} wide matvec: {rows} activation rows, superblocks of 256 values over {lanes} lanes, {rb} weight rows an invocation.
layout(local_size_x = {size}) in;
layout(push_constant) uniform TsrShape {{ uint n; uint k; uint row_bytes; uint shift[{bindings}]; }};
{tail}#define ROWS {rows}u
#define LANES {lanes}u
#define RB {rb}u
#define WG_SIZE {size}u
#define INDEX {index}
#define SHUFFLE_LANES {shuffle}
#define SHUFFLE_XOR(v, m) {shuffle_xor}
#define SB_WORDS {words}u
#define UNROLL {unroll}
// The superblocks of this step (one per weight row) and a group of activation values, in registers.
uint sw[RB][SB_WORDS];
vec4 xs[8];
{fields}{group}{main})",
                     fmt::arg("ext", extensions), fmt::arg("type", quant::type_name(type)), fmt::arg("rows", rows),
                     fmt::arg("lanes", shape.lanes), fmt::arg("rb", shape.row_block),
                     fmt::arg("size", kWideMatvecSize), fmt::arg("bindings", 3 + tail.bindings()),
                     fmt::arg("tail", matvec_tail_glsl(tail)), fmt::arg("index", index),
                     fmt::arg("shuffle", shuffle ? "(gl_SubgroupSize >= LANES)" : "false"),
                     fmt::arg("shuffle_xor", shuffle ? "subgroupShuffleXor(v, m)" : "(v)"),
                     fmt::arg("words", superblock_words(type)), fmt::arg("unroll", shape.unroll ? "[[unroll]]" : "[[dont_unroll]]"), fmt::arg("fields", kWideFields),
                     fmt::arg("group", group_source(type)), fmt::arg("main", kWideMain));
}

}  // namespace tessera::backends::vulkan
