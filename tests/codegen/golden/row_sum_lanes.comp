#version 450

// row_sum_lanes
layout(std430, binding = 0) readonly buffer TsrIn0 { float in0[]; };
layout(std430, binding = 1) writeonly buffer TsrOut0 { float out0[]; };
// tsr_kernel_0: the module's entry point
layout(local_size_x = 256) in;
layout(push_constant) uniform TsrRange { int begin; int end; };
void main() {
  for (int o = begin + int(gl_GlobalInvocationID.x); o < end; o += int(gl_NumWorkGroups.x * gl_WorkGroupSize.x)) {
    const int i0 = o;
    double a0 = 0.0lf;
    for (int j = 0; j < 128; ++j) {
      const float v0 = in0[i0 * 128 + j];
      const float v1 = v0 * v0;
      const double v2 = double(v1);
      a0 += v2;
    }
    const double e0 = a0;
    const float e1 = float(e0);
    out0[i0] = e1;
  }
}
