#version 450

// split_max
layout(std430, binding = 0) readonly buffer TsrIn0 { float in0[]; };
layout(std430, binding = 1) writeonly buffer TsrOut0 { float out0[]; };
// tsr_kernel_0: the module's entry point
layout(local_size_x = 256) in;
layout(push_constant) uniform TsrRange { int begin; int end; };
void main() {
  for (int o = begin + int(gl_GlobalInvocationID.x); o < end; o += int(gl_NumWorkGroups.x * gl_WorkGroupSize.x)) {
    const int i0 = o;
    float a0 = (-uintBitsToFloat(0x7f800000u));
    bool n0 = false;
    for (int j = 0; j < 65536; ++j) {
      const float v0 = in0[i0 * 65536 + j];
      a0 = v0 > a0 ? v0 : a0;
      n0 = n0 || isnan(v0);
    }
    const float e0 = (n0 ? uintBitsToFloat(0x7fc00000u) : a0);
    out0[i0] = e0;
  }
}
