#version 450
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require

float tsr_log1p_f32(float x) {
  const float u = 1.0 + x;
  if (u == 1.0) return x;
  if (u <= 0.0) return u == 0.0 ? uintBitsToFloat(0xff800000u) : uintBitsToFloat(0x7fc00000u);
  if (isinf(u)) return u;
  return log(u) * x / (u - 1.0);
}

float tsr_erf_f32(float x) {
  const float a = abs(x);
  if (a < 0.5) {
    const float s = x * x;
    return x * (1.1283791671 + s * (-0.3761263890 + s * (0.1128379167 +
           s * (-0.0268661706 + s * (0.0052239776 - s * 0.0008548327)))));
  }
  const float t = 1.0 / (1.0 + 0.3275911 * a);
  const float p = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return sign(x) * (1.0 - p * exp(-a * a));
}

int8_t tsr_f32_to_i8(float v) {
  if (isnan(v)) return int8_t(0);
  if (v <= (-128.0)) return (int8_t(-128));
  if (v >= 127.0) return int8_t(127);
  return int8_t(v);
}

// math_and_bytes
layout(std430, binding = 0) readonly buffer TsrIn0 { float in0[]; };
layout(std430, binding = 4) readonly buffer TsrIn4 { uint8_t in4[]; };
layout(std430, binding = 5) writeonly buffer TsrOut0 { int8_t out0[]; };
layout(std430, binding = 6) writeonly buffer TsrOut1 { uint8_t out1[]; };
layout(std430, binding = 7) writeonly buffer TsrOut2 { uint8_t out2[]; };
// tsr_kernel_0: the module's entry point
layout(local_size_x = 256) in;
layout(push_constant) uniform TsrRange { int begin; int end; };
void main() {
  for (int u = begin + int(gl_GlobalInvocationID.x); u < end; u += int(gl_NumWorkGroups.x * gl_WorkGroupSize.x)) {
    const int j = u;
    const bool v0 = (in4[j] != uint8_t(0));
    const float v1 = in0[j];
    const float v2 = tsr_erf_f32(v1);
    const bool v4 = (v2 > 0.0);
    const bool v5 = (v0 && v4);
    const float v6 = tsr_log1p_f32(v2);
    const bool v8 = (v6 > 0.5);
    const float v10 = v2 * 100.0;
    const int8_t v11 = tsr_f32_to_i8(v10);
    out2[j] = uint8_t(v5);
    out1[j] = uint8_t(v8);
    out0[j] = v11;
  }
}
