#version 450

// row_sum_lanes
layout(std430, binding = 0) readonly buffer TsrIn0 { float in0[]; };
layout(std430, binding = 1) writeonly buffer TsrOut0 { float out0[]; };
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
      if (tsr_live && tsr_lane == 0) {
        const double e0 = a0;
        const float e1 = float(e0);
        out0[i0] = e1;
      }
    }
  }
}
