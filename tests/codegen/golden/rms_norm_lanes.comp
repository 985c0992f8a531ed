#version 450

// rms_norm_lanes
layout(std430, binding = 0) readonly buffer TsrIn0 { float in0[]; };
layout(std430, binding = 3) readonly buffer TsrIn3 { float in3[]; };
layout(std430, binding = 4) writeonly buffer TsrOut0 { float out0[]; };
shared double tsr_tree0[256];
// tsr_kernel_0: the module's entry point
layout(local_size_x = 256) in;
layout(push_constant) uniform TsrRange { int begin; int end; };
void main() {
  {
    const int tsr_t = int(gl_GlobalInvocationID.x);
    const int tsr_lane = tsr_t % 32;
    for (int ow = begin + tsr_t / 256 * 8; ow < end; ow += int(gl_NumWorkGroups.x * gl_WorkGroupSize.x) / 32) {
      const int o = ow + tsr_t % 256 / 32;
      const bool tsr_live = o < end;
      const int i0 = o;
      double a0 = 0.0lf;
      if (tsr_live) {
        for (int r = tsr_lane; r < 128; r += 32) {
          const int j = r;
          const float v0 = in0[i0 * 128 + j];
          const float v1 = v0 * v0;
          const double v2 = double(v1);
          a0 += v2;
        }
      }
      const int tsr_li0 = int(gl_LocalInvocationID.x);
      barrier();
      tsr_tree0[tsr_li0] = a0;
      barrier();
      if (tsr_li0 % 32 < 16) {
        a0 += tsr_tree0[tsr_li0 + 16];
        tsr_tree0[tsr_li0] = a0;
      }
      barrier();
      if (tsr_li0 % 32 < 8) {
        a0 += tsr_tree0[tsr_li0 + 8];
        tsr_tree0[tsr_li0] = a0;
      }
      barrier();
      if (tsr_li0 % 32 < 4) {
        a0 += tsr_tree0[tsr_li0 + 4];
        tsr_tree0[tsr_li0] = a0;
      }
      barrier();
      if (tsr_li0 % 32 < 2) {
        a0 += tsr_tree0[tsr_li0 + 2];
        tsr_tree0[tsr_li0] = a0;
      }
      barrier();
      if (tsr_li0 % 32 < 1) {
        a0 += tsr_tree0[tsr_li0 + 1];
      }
      const int tsr_li1 = int(gl_LocalInvocationID.x);
      if (tsr_li1 % 32 == 0) {
        tsr_tree0[tsr_li1] = a0;
      }
      barrier();
      a0 = tsr_tree0[tsr_li1 - tsr_li1 % 32];
      if (tsr_live) {
        for (int r = tsr_lane; r < 128; r += 32) {
          const int j = r;
          const float w0 = in0[i0 * 128 + j];
          const double w1 = a0;
          const float w2 = float(w1);
          const float w4 = w2 * 0.0078125;
          const float w6 = w4 + 1.1920929e-07;
          const float w7 = sqrt(w6);
          const float w9 = 1.0 / w7;
          const float w10 = w0 * w9;
          const float w11 = in3[j];
          const float w12 = w10 * w11;
          out0[i0 * 128 + j] = w12;
        }
      }
    }
  }
}
