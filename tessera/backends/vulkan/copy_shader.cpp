#include "tessera/backends/vulkan/copy_shader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tessera/core/error.h"

namespace tessera::backends::vulkan {

std::string strided_copy_glsl(uint32_t element_size, const common::CopyPlan* axes) {
  std::string extensions, type;
  switch (element_size) {
    case 1:
      extensions = "#extension GL_EXT_shader_8bit_storage : require\n"
                   "#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require\n";
      type = "uint8_t";
      break;
    case 2:
      extensions = "#extension GL_EXT_shader_16bit_storage : require\n"
                   "#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require\n";
      type = "uint16_t";
      break;
    case 4:
      type = "uint";
      break;
    case 8:
      type = "uvec2";  // 8-byte elements move as two words: no 64-bit integer feature needed
      break;
    default:
      fail("vulkan: no copy shader for {}-byte elements", element_size);
  }
  // The axes: the push constants' (rank <= kMaxCopyRank), or constants of this shader.
  std::string axes_glsl = "#define RANK rank\n#define SHAPE shape\n#define SRC_STRIDES src_strides\n"
                          "#define DST_STRIDES dst_strides\n";
  if (axes != nullptr) {
    const auto list = [](const std::vector<int64_t>& v) { return fmt::format("int[]({})", fmt::join(v, ", ")); };
    axes_glsl = fmt::format("const int RANK = {};\nconst int SHAPE[RANK] = {};\nconst int SRC_STRIDES[RANK] = {};\n"
                            "const int DST_STRIDES[RANK] = {};\n",
                            axes->shape.size(), list(axes->shape), list(axes->src_strides), list(axes->dst_strides));
  }
  return fmt::format(R"(#version 450
{0}// The strided copy of {1}-byte elements.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer TsrSrc {{ {2} src[]; }};
layout(std430, binding = 1) writeonly buffer TsrDst {{ {2} dst[]; }};
layout(push_constant) uniform TsrCopy {{
  int numel; int rank; int src_offset; int dst_offset;
  int shape[{3}]; int src_strides[{3}]; int dst_strides[{3}];
  int shift[2];
}};
{4}void main() {{
  const int step = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int i = int(gl_GlobalInvocationID.x); i < numel; i += step) {{
    int rest = i, s = src_offset, d = dst_offset;
    for (int a = RANK - 1; a >= 0; --a) {{
      const int c = rest % SHAPE[a];
      rest /= SHAPE[a];
      s += c * SRC_STRIDES[a];
      d += c * DST_STRIDES[a];
    }}
    dst[shift[1] + d] = src[shift[0] + s];
  }}
}}
)",
                     extensions, element_size, type, kMaxCopyRank, axes_glsl);
}

}  // namespace tessera::backends::vulkan
