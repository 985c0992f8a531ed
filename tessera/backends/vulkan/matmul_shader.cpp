#include "tessera/backends/vulkan/matmul_shader.h"

#include <fmt/format.h>

#include "tessera/core/error.h"

namespace tessera::backends::vulkan {

int matmul_block(int64_t m, int64_t n) { return m >= 512 && n >= 512 ? 8 : 4; }

std::string matmul_pipeline_name(DType dtype, int block, bool a_transposed, bool b_transposed, const MatvecTail& tail) {
  return fmt::format("matmul_{}_r{}{}{}{}", dtype_name(dtype), block, a_transposed ? "_ta" : "", b_transposed ? "_tb" : "",
                     tail.suffix());
}

namespace {

// `float finish(float v, int at, int r, int c)`: the tail of the result stored at `at` (row r, column c),
// with the declarations of its bindings (3 on; their shifts after D's).
std::string product_store_tail(const MatvecTail& tail, const std::string& bias_index) {
  const TailGlsl t = tail_glsl(tail, 3, bias_index, "at", "  ");
  return t.declarations + "float finish(float v, int at, int r, int c) {\n" + t.statements + "  return v;\n}\n";
}

}  // namespace

std::string tiled_product_glsl(DType dtype, int block, const TiledOperands& ops, const MatvecTail& tail) {
  TESSERA_CHECK(dtype == DType::f32 || dtype == DType::f16, "vulkan: no matmul shader for {}", dtype_name(dtype));
  TESSERA_CHECK(tail.empty() || dtype == DType::f32, "vulkan: a matmul tail on {} values (f32 only)", dtype_name(dtype));
  TESSERA_CHECK(block == 4 || block == 8, "vulkan: matmul block {} (4 or 8)", block);
  TESSERA_CHECK(ops.k_split == 0 || (ops.k_split % kMatmulSlice == 0 && tail.empty()),
                "vulkan: a split product's K range ({}) is whole slices, without a tail", ops.k_split);
  const bool half = dtype == DType::f16;
  const std::string extensions = half ? "#extension GL_EXT_shader_16bit_storage : require\n"
                                        "#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require\n"
                                      : "";
  const std::string type = half ? "uint16_t" : "float";
  const std::string load = half ? "unpackHalf2x16(uint({})).x" : "{}";
  const std::string store = half ? "uint16_t(packHalf2x16(vec2({}, 0.0)) & 0xffffu)" : "{}";
  // Consecutive invocations stage consecutive addresses: along k where an operand is contiguous in k,
  // along the rows (columns) otherwise.
  const std::string a_index = ops.a_along_k ? "kk = e % SLICE, rr = e / SLICE" : "rr = e % TILE, kk = e / TILE";
  const std::string b_index = ops.b_along_k ? "kk = e % SLICE, cc = e / SLICE" : "cc = e % TILE, kk = e / TILE";
  const std::string result = fmt::format(fmt::runtime(store), tail.empty() ? "acc[i][j]" : "finish(acc[i][j], at, r, c)");
  // A split product: workgroup z sums K range [z k_split, (z + 1) k_split) into its own M x N partial.
  const std::string k_range = ops.k_split > 0 ? fmt::format("const int kbegin = batch * {0}, kend = min(K, kbegin + {0});\n",
                                                            ops.k_split)
                                              : "const int kbegin = 0, kend = K;\n";
  // The A slice is stored transposed (k-major) with one float of padding per row, so the staging writes
  // of consecutive k fall in different banks; each invocation reads its R rows as one run and its R
  // columns 16 apart (the stores of a warp then cover whole rows of the tile).
  return fmt::format(R"(#version 450
{ext}layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer TsrA {{ {type} a[]; }};
layout(std430, binding = 1) readonly buffer TsrB {{ {type} b[]; }};
layout(std430, binding = 2) writeonly buffer TsrD {{ {type} d[]; }};
layout(push_constant) uniform TsrMatmul {{ int M; int N; int K; int a_batch; int b_batch; int shift[{bindings}]; }};
{definitions}{tail}const int R = {r}, TILE = 16 * R, SLICE = {slice};
shared float tile_a[SLICE][TILE + 1];
shared float tile_b[SLICE][TILE];
void main() {{
  const int tid = int(gl_LocalInvocationID.x), tx = tid % 16, ty = tid / 16;
  const int row0 = int(gl_WorkGroupID.y) * TILE, col0 = int(gl_WorkGroupID.x) * TILE;
  const int batch = int(gl_WorkGroupID.z);
  const int a0 = shift[0] + batch * a_batch, b0 = shift[1] + batch * b_batch;
  {k_range}  float acc[R][R];
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < R; ++j) acc[i][j] = 0.0;
  for (int k0 = kbegin; k0 < kend; k0 += SLICE) {{
    for (int e = tid; e < TILE * SLICE; e += 256) {{
      const int {a_index}, r = row0 + rr, k = k0 + kk;
      tile_a[kk][rr] = r < M && k < kend ? {load_a} : 0.0;
    }}
    for (int e = tid; e < TILE * SLICE; e += 256) {{
      const int {b_index}, c = col0 + cc, k = k0 + kk;
      tile_b[kk][cc] = k < kend && c < N ? {load_b} : 0.0;
    }}
    barrier();
    for (int kk = 0; kk < SLICE; ++kk) {{
      float ra[R], rb[R];
      for (int i = 0; i < R; ++i) ra[i] = tile_a[kk][ty * R + i];
      for (int j = 0; j < R; ++j) rb[j] = tile_b[kk][tx + 16 * j];
      for (int i = 0; i < R; ++i)
        for (int j = 0; j < R; ++j) acc[i][j] = fma(ra[i], rb[j], acc[i][j]);
    }}
    barrier();
  }}
  const int d0 = batch * M * N;
  for (int i = 0; i < R; ++i) {{
    const int r = row0 + ty * R + i;
    if (r >= M) break;
    for (int j = 0; j < R; ++j) {{
      const int c = col0 + tx + 16 * j, at = d0 + {d};
      if (c < N) d[shift[2] + at] = {result};
    }}
  }}
}}
)",
                     fmt::arg("ext", extensions), fmt::arg("type", type), fmt::arg("r", block),
                     fmt::arg("slice", kMatmulSlice), fmt::arg("load_a", fmt::format(fmt::runtime(load), ops.a)),
                     fmt::arg("load_b", fmt::format(fmt::runtime(load), ops.b)), fmt::arg("result", result),
                     fmt::arg("a_index", a_index), fmt::arg("b_index", b_index), fmt::arg("d", ops.d),
                     fmt::arg("k_range", k_range), fmt::arg("definitions", ops.definitions),
                     fmt::arg("bindings", 3 + tail.bindings()),
                     fmt::arg("tail", tail.empty() ? "" : product_store_tail(tail, ops.bias_index)));
}

std::string matmul_glsl(DType dtype, int block, bool a_transposed, bool b_transposed, const MatvecTail& tail) {
  TiledOperands ops;
  ops.a = a_transposed ? "a[a0 + k * M + r]" : "a[a0 + r * K + k]";
  ops.b = b_transposed ? "b[b0 + c * K + k]" : "b[b0 + k * N + c]";
  ops.a_along_k = !a_transposed;
  ops.b_along_k = b_transposed;
  return tiled_product_glsl(dtype, block, ops, tail);
}

std::string matmul_coopmat_glsl() {
  // Subgroups of 32 (NVIDIA's, the only devices with this extension): 8 of them in the workgroup.
  return R"(#version 450
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer TsrA { float16_t a[]; };
layout(std430, binding = 0) readonly buffer TsrA8 { uvec4 a8[]; };
layout(std430, binding = 1) readonly buffer TsrB { float16_t b[]; };
layout(std430, binding = 1) readonly buffer TsrB8 { uvec4 b8[]; };
layout(std430, binding = 2) writeonly buffer TsrD { float16_t d[]; };
layout(push_constant) uniform TsrMatmul { int M; int N; int K; int a_batch; int b_batch; int shift[3]; };
const int TILE = 128, SLICE = 32, LDA = SLICE + 8, LDB = TILE + 8;
shared float16_t tile_a[TILE * LDA];
shared float16_t tile_b[SLICE * LDB];
shared float16_t staging[8 * 256];
#define HALVES fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define FLOATS fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>

// Eight consecutive halves of A (row r, from column k) or of B (row k, from column c) as one 16-byte
// load when they lie inside the matrix and start on a 16-byte boundary, else one by one (zero outside).
uvec4 fetch_a(int a0, int r, int k, bool aligned) {
  const int at = a0 + r * K + k;
  if (r >= M || k >= K) return uvec4(0);
  if (aligned && k + 8 <= K) return a8[at / 8];
  float16_t h[8];
  for (int i = 0; i < 8; ++i) h[i] = k + i < K ? a[at + i] : float16_t(0.0);
  return uvec4(packFloat2x16(f16vec2(h[0], h[1])), packFloat2x16(f16vec2(h[2], h[3])),
               packFloat2x16(f16vec2(h[4], h[5])), packFloat2x16(f16vec2(h[6], h[7])));
}
uvec4 fetch_b(int b0, int k, int c, bool aligned) {
  const int at = b0 + k * N + c;
  if (k >= K || c >= N) return uvec4(0);
  if (aligned && c + 8 <= N) return b8[at / 8];
  float16_t h[8];
  for (int i = 0; i < 8; ++i) h[i] = c + i < N ? b[at + i] : float16_t(0.0);
  return uvec4(packFloat2x16(f16vec2(h[0], h[1])), packFloat2x16(f16vec2(h[2], h[3])),
               packFloat2x16(f16vec2(h[4], h[5])), packFloat2x16(f16vec2(h[6], h[7])));
}

void main() {
  const int tid = int(gl_LocalInvocationID.x), warp = int(gl_SubgroupID), lane = int(gl_SubgroupInvocationID);
  const int wr = warp / 4, wc = warp % 4;
  const int row0 = int(gl_WorkGroupID.y) * TILE, col0 = int(gl_WorkGroupID.x) * TILE;
  const int batch = int(gl_WorkGroupID.z);
  const int a0 = shift[0] + batch * a_batch, b0 = shift[1] + batch * b_batch;
  // 16-byte loads need every row start on a 16-byte boundary.
  const bool a_aligned = K % 8 == 0 && a0 % 8 == 0, b_aligned = N % 8 == 0 && b0 % 8 == 0;
  // This invocation's share of a slice: two 8-half runs of A (rows ar + 64 i, columns ak..ak+7) and of B
  // (rows bk + 16 i, columns bc..bc+7).
  const int ar = tid / 4, ak = (tid % 4) * 8, bk = tid / 16, bc = (tid % 16) * 8;
  FLOATS acc[4][2];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j) acc[i][j] = FLOATS(0.0);
  uvec4 ra[2], rb[2];
  for (int i = 0; i < 2; ++i) {
    ra[i] = fetch_a(a0, row0 + ar + 64 * i, ak, a_aligned);
    rb[i] = fetch_b(b0, bk + 16 * i, col0 + bc, b_aligned);
  }
  for (int k0 = 0; k0 < K; k0 += SLICE) {
    for (int i = 0; i < 2; ++i) {
      const int ta = (ar + 64 * i) * LDA + ak, tb = (bk + 16 * i) * LDB + bc;
      for (int w = 0; w < 4; ++w) {
        const f16vec2 ha = unpackFloat2x16(ra[i][w]), hb = unpackFloat2x16(rb[i][w]);
        tile_a[ta + 2 * w] = ha.x;
        tile_a[ta + 2 * w + 1] = ha.y;
        tile_b[tb + 2 * w] = hb.x;
        tile_b[tb + 2 * w + 1] = hb.y;
      }
    }
    barrier();
    // The next slice's loads are in flight while this one is multiplied.
    if (k0 + SLICE < K) {
      for (int i = 0; i < 2; ++i) {
        ra[i] = fetch_a(a0, row0 + ar + 64 * i, k0 + SLICE + ak, a_aligned);
        rb[i] = fetch_b(b0, k0 + SLICE + bk + 16 * i, col0 + bc, b_aligned);
      }
    }
    for (int ks = 0; ks < SLICE; ks += 16) {
      HALVES fa[4];
      HALVES fb[2];
      for (int i = 0; i < 4; ++i) coopMatLoadNV(fa[i], tile_a, (wr * 64 + i * 16) * LDA + ks, LDA, false);
      for (int j = 0; j < 2; ++j) coopMatLoadNV(fb[j], tile_b, ks * LDB + wc * 32 + j * 16, LDB, false);
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 2; ++j) acc[i][j] = coopMatMulAddNV(fa[i], fb[j], acc[i][j]);
    }
    barrier();
  }
  const int d0 = shift[2] + batch * M * N;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 2; ++j) {
      HALVES h = HALVES(acc[i][j]);
      coopMatStoreNV(h, staging, warp * 256, 16, false);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      for (int e = lane; e < 256; e += 32) {
        const int r = row0 + wr * 64 + i * 16 + e / 16, c = col0 + wc * 32 + j * 16 + e % 16;
        if (r < M && c < N) d[d0 + r * N + c] = staging[warp * 256 + e];
      }
      subgroupMemoryBarrierShared();
      subgroupBarrier();
    }
  }
}
)";
}

}  // namespace tessera::backends::vulkan
