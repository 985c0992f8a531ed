#include "tessera/backends/vulkan/matmul_shader.h"

#include <fmt/format.h>

#include "tessera/core/error.h"

namespace tessera::backends::vulkan {

std::string matmul_glsl(DType dtype) {
  TESSERA_CHECK(dtype == DType::f32 || dtype == DType::f16, "vulkan: no matmul shader for {}", dtype_name(dtype));
  const bool half = dtype == DType::f16;
  const std::string extensions = half ? "#extension GL_EXT_shader_16bit_storage : require\n"
                                        "#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require\n"
                                      : "";
  const std::string type = half ? "uint16_t" : "float";
  const std::string load = half ? "unpackHalf2x16(uint({})).x" : "{}";
  const std::string store = half ? "uint16_t(packHalf2x16(vec2({}, 0.0)) & 0xffffu)" : "{}";
  const std::string load_a = fmt::format(fmt::runtime(load), "a[shift[0] + ab + row * K + k]");
  const std::string load_b = fmt::format(fmt::runtime(load), "b[shift[1] + bb + k * N + col]");
  const std::string result = fmt::format(fmt::runtime(store), "acc");
  return fmt::format(R"(#version 450
{0}// A tiled matrix product: each workgroup computes a {1}x{1} tile of D from {1}-wide slices of A and B
// staged in shared memory; each invocation one element of the tile.
layout(local_size_x = {1}, local_size_y = {1}) in;
layout(std430, binding = 0) readonly buffer TsrA {{ {2} a[]; }};
layout(std430, binding = 1) readonly buffer TsrB {{ {2} b[]; }};
layout(std430, binding = 2) writeonly buffer TsrD {{ {2} d[]; }};
layout(push_constant) uniform TsrMatmul {{ int M; int N; int K; int a_batch; int b_batch; int shift[3]; }};
shared float tile_a[{1}][{1}];
shared float tile_b[{1}][{1}];
void main() {{
  const int tx = int(gl_LocalInvocationID.x), ty = int(gl_LocalInvocationID.y);
  const int row0 = int(gl_WorkGroupID.y) * {1}, col0 = int(gl_WorkGroupID.x) * {1};
  const int batch = int(gl_WorkGroupID.z);
  const int ab = batch * a_batch, bb = batch * b_batch;
  float acc = 0.0;
  for (int k0 = 0; k0 < K; k0 += {1}) {{
    {{
      const int row = row0 + ty, k = k0 + tx;
      tile_a[ty][tx] = row < M && k < K ? {3} : 0.0;
    }}
    {{
      const int k = k0 + ty, col = col0 + tx;
      tile_b[ty][tx] = k < K && col < N ? {4} : 0.0;
    }}
    barrier();
    for (int j = 0; j < {1}; ++j) acc += tile_a[ty][j] * tile_b[j][tx];
    barrier();
  }}
  const int row = row0 + ty, col = col0 + tx;
  if (row < M && col < N) d[shift[2] + batch * M * N + row * N + col] = {5};
}}
)",
                     extensions, kMatmulTile, type, load_a, load_b, result);
}

}  // namespace tessera::backends::vulkan
