#version 450

// relu_axpb
layout(std430, binding = 0) readonly buffer TsrIn0 { float in0[]; };
layout(std430, binding = 2) readonly buffer TsrIn2 { float in2[]; };
layout(std430, binding = 3) writeonly buffer TsrOut0 { float out0[]; };
// tsr_kernel_0: the module's entry point
layout(local_size_x = 256) in;
layout(push_constant) uniform TsrRange { int begin; int end; };
void main() {
  for (int u = begin + int(gl_GlobalInvocationID.x); u < end; u += int(gl_NumWorkGroups.x * gl_WorkGroupSize.x)) {
    int rem = u;
    const int j = rem % 8;
    rem /= 8;
    const int i0 = rem;
    const float v0 = in0[i0 * 8 + j];
    const float v2 = v0 * 2.0;
    const float v3 = in2[j];
    const float v4 = v2 + v3;
    const bool v6 = (v4 < 0.0);
    const float v7 = (v6 ? 0.0 : v4);
    out0[i0 * 8 + j] = v7;
  }
}
