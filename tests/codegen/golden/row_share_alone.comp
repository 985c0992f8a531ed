#version 450

// row_share_alone
layout(std430, binding = 0) readonly buffer TsrIn0 { float in0[]; };
layout(std430, binding = 1) writeonly buffer TsrOut0 { float out0[]; };
// tsr_kernel_0: the module's entry point
layout(local_size_x = 256) in;
layout(push_constant) uniform TsrRange { int begin; int end; };
void main() {
  for (int o = begin + int(gl_GlobalInvocationID.x); o < end; o += int(gl_NumWorkGroups.x * gl_WorkGroupSize.x)) {
    const int i0 = o;
    double a0 = 0.0lf;
    for (int j = 0; j < 12; ++j) {
      const float v0 = in0[i0 * 12 + j];
      const double v1 = double(v0);
      a0 += v1;
    }
    for (int j = 0; j < 12; ++j) {
      const float w0 = in0[i0 * 12 + j];
      const double w1 = a0;
      const float w2 = float(w1);
      const float w3 = w0 / w2;
      out0[i0 * 12 + j] = w3;
    }
  }
}
