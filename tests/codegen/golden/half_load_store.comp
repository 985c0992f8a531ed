#version 450
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

float tsr_f16_to_f32(uint16_t h) {
  return unpackHalf2x16(uint(h)).x;  // exact for every f16, NaN and subnormals included
}
uint16_t tsr_f32_to_f16(float f) {
  const uint x = floatBitsToUint(f);
  const uint ax = x & 0x7fffffffu;
  uint h;
  if (ax > 0x7f800000u) {
    h = 0x7e00u | ((ax >> 13) & 0x3ffu);
  } else if (ax >= 0x47800000u) {
    h = 0x7c00u;
  } else if (ax >= 0x38800000u) {
    h = (ax - 0x38000000u) >> 13;
    const uint rest = ax & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) != 0u)) h += 1u;
  } else if (ax >= 0x33000000u) {
    const uint shift = 126u - (ax >> 23);
    const uint m = (ax & 0x7fffffu) | 0x800000u;
    const uint rest = m & ((1u << shift) - 1u), half_way = 1u << (shift - 1u);
    h = m >> shift;
    if (rest > half_way || (rest == half_way && (h & 1u) != 0u)) h += 1u;
  } else {
    h = 0u;
  }
  return uint16_t(h | ((x >> 16) & 0x8000u));
}

float tsr_bf16_to_f32(uint16_t h) {
  return uintBitsToFloat(uint(h) << 16);
}
uint16_t tsr_f32_to_bf16(float f) {
  const uint x = floatBitsToUint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);
  return uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

float tsr_expm1_f32(float x) {
  const float u = exp(x);
  if (u == 1.0) return x;
  const float um1 = u - 1.0;
  if (um1 == -1.0 || isinf(u)) return um1;
  return um1 * x / log(u);
}

// half_load_store
layout(std430, binding = 0) readonly buffer TsrIn0 { uint16_t in0[]; };
layout(std430, binding = 1) readonly buffer TsrIn1 { uint16_t in1[]; };
layout(std430, binding = 2) writeonly buffer TsrOut0 { uint16_t out0[]; };
layout(std430, binding = 3) writeonly buffer TsrOut1 { uint16_t out1[]; };
// tsr_kernel_0: the module's entry point
layout(local_size_x = 256) in;
layout(push_constant) uniform TsrRange { int begin; int end; };
void main() {
  for (int u = begin + int(gl_GlobalInvocationID.x); u < end; u += int(gl_NumWorkGroups.x * gl_WorkGroupSize.x)) {
    const int j = u;
    const uint16_t v0 = in0[j];
    const float v1 = tsr_f16_to_f32(v0);
    const float v2 = tsr_expm1_f32(v1);
    const uint16_t v3 = tsr_f32_to_f16(v2);
    const float v4 = tsr_f16_to_f32(v3);
    const uint16_t v5 = tsr_f32_to_bf16(v4);
    const uint16_t v6 = in1[j];
    const float v7 = tsr_bf16_to_f32(v5);
    const float v8 = tsr_bf16_to_f32(v6);
    const float v9 = v7 * v8;
    const uint16_t v10 = tsr_f32_to_bf16(v9);
    out1[j] = v10;
    out0[j] = v3;
  }
}
