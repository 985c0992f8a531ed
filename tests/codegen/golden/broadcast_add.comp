#version 450

// broadcast_add
layout(std430, binding = 0) readonly buffer TsrIn0 { float in0[]; };
layout(std430, binding = 1) readonly buffer TsrIn1 { float in1[]; };
layout(std430, binding = 2) writeonly buffer TsrOut0 { float out0[]; };
// tsr_kernel_0: the module's entry point
layout(local_size_x = 256) in;
layout(push_constant) uniform TsrRange { int begin; int end; };
void main() {
  for (int u = begin + int(gl_GlobalInvocationID.x); u < end; u += int(gl_NumWorkGroups.x * gl_WorkGroupSize.x)) {
    int rem = u;
    const int j = rem % 5;
    rem /= 5;
    const int i0 = rem;
    const float v0 = in0[i0];
    const float v1 = in1[j];
    const float v2 = v0 + v1;
    out0[i0 * 5 + j] = v2;
  }
}
