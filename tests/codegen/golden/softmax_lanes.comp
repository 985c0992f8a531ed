#version 450

// softmax_lanes
layout(std430, binding = 0) readonly buffer TsrIn0 { float in0[]; };
layout(std430, binding = 1) writeonly buffer TsrOut0 { float out0[]; };
shared float tsr_tree0[256];
shared bool tsr_treen0[256];
shared double tsr_tree1[256];
// tsr_kernel_0: the module's entry point
layout(local_size_x = 256) in;
layout(push_constant) uniform TsrRange { int begin; int end; };
void main() {
  {
    const int tsr_t = int(gl_GlobalInvocationID.x);
    const int tsr_lane = tsr_t % 64;
    for (int ow = begin + tsr_t / 256 * 4; ow < end; ow += int(gl_NumWorkGroups.x * gl_WorkGroupSize.x) / 64) {
      const int o = ow + tsr_t % 256 / 64;
      const bool tsr_live = o < end;
      const int i0 = o;
      float a0 = (-uintBitsToFloat(0x7f800000u));
      bool n0 = false;
      double a1 = 0.0lf;
      if (tsr_live) {
        for (int r = tsr_lane; r < 256; r += 64) {
          const int j = r;
          const float v0 = in0[i0 * 256 + j];
          a0 = v0 > a0 ? v0 : a0;
          n0 = n0 || isnan(v0);
        }
      }
      const int tsr_li0 = int(gl_LocalInvocationID.x);
      barrier();
      tsr_tree0[tsr_li0] = a0;
      tsr_treen0[tsr_li0] = n0;
      barrier();
      if (tsr_li0 % 64 < 32) {
        { const float t = tsr_tree0[tsr_li0 + 32]; a0 = t > a0 ? t : a0; }
        n0 = n0 || tsr_treen0[tsr_li0 + 32];
        tsr_tree0[tsr_li0] = a0;
        tsr_treen0[tsr_li0] = n0;
      }
      barrier();
      if (tsr_li0 % 64 < 16) {
        { const float t = tsr_tree0[tsr_li0 + 16]; a0 = t > a0 ? t : a0; }
        n0 = n0 || tsr_treen0[tsr_li0 + 16];
        tsr_tree0[tsr_li0] = a0;
        tsr_treen0[tsr_li0] = n0;
      }
      barrier();
      if (tsr_li0 % 64 < 8) {
        { const float t = tsr_tree0[tsr_li0 + 8]; a0 = t > a0 ? t : a0; }
        n0 = n0 || tsr_treen0[tsr_li0 + 8];
        tsr_tree0[tsr_li0] = a0;
        tsr_treen0[tsr_li0] = n0;
      }
      barrier();
      if (tsr_li0 % 64 < 4) {
        { const float t = tsr_tree0[tsr_li0 + 4]; a0 = t > a0 ? t : a0; }
        n0 = n0 || tsr_treen0[tsr_li0 + 4];
        tsr_tree0[tsr_li0] = a0;
        tsr_treen0[tsr_li0] = n0;
      }
      barrier();
      if (tsr_li0 % 64 < 2) {
        { const float t = tsr_tree0[tsr_li0 + 2]; a0 = t > a0 ? t : a0; }
        n0 = n0 || tsr_treen0[tsr_li0 + 2];
        tsr_tree0[tsr_li0] = a0;
        tsr_treen0[tsr_li0] = n0;
      }
      barrier();
      if (tsr_li0 % 64 < 1) {
        { const float t = tsr_tree0[tsr_li0 + 1]; a0 = t > a0 ? t : a0; }
        n0 = n0 || tsr_treen0[tsr_li0 + 1];
      }
      const int tsr_li1 = int(gl_LocalInvocationID.x);
      if (tsr_li1 % 64 == 0) {
        tsr_tree0[tsr_li1] = a0;
        tsr_treen0[tsr_li1] = n0;
      }
      barrier();
      a0 = tsr_tree0[tsr_li1 - tsr_li1 % 64];
      n0 = tsr_treen0[tsr_li1 - tsr_li1 % 64];
      if (tsr_live) {
        for (int r = tsr_lane; r < 256; r += 64) {
          const int j = r;
          const float c0 = in0[i0 * 256 + j];
          const float c1 = (n0 ? uintBitsToFloat(0x7fc00000u) : a0);
          const float c2 = c0 - c1;
          const float c3 = exp(c2);
          const double c4 = double(c3);
          a1 += c4;
        }
      }
      const int tsr_li2 = int(gl_LocalInvocationID.x);
      barrier();
      tsr_tree1[tsr_li2] = a1;
      barrier();
      if (tsr_li2 % 64 < 32) {
        a1 += tsr_tree1[tsr_li2 + 32];
        tsr_tree1[tsr_li2] = a1;
      }
      barrier();
      if (tsr_li2 % 64 < 16) {
        a1 += tsr_tree1[tsr_li2 + 16];
        tsr_tree1[tsr_li2] = a1;
      }
      barrier();
      if (tsr_li2 % 64 < 8) {
        a1 += tsr_tree1[tsr_li2 + 8];
        tsr_tree1[tsr_li2] = a1;
      }
      barrier();
      if (tsr_li2 % 64 < 4) {
        a1 += tsr_tree1[tsr_li2 + 4];
        tsr_tree1[tsr_li2] = a1;
      }
      barrier();
      if (tsr_li2 % 64 < 2) {
        a1 += tsr_tree1[tsr_li2 + 2];
        tsr_tree1[tsr_li2] = a1;
      }
      barrier();
      if (tsr_li2 % 64 < 1) {
        a1 += tsr_tree1[tsr_li2 + 1];
      }
      const int tsr_li3 = int(gl_LocalInvocationID.x);
      if (tsr_li3 % 64 == 0) {
        tsr_tree1[tsr_li3] = a1;
      }
      barrier();
      a1 = tsr_tree1[tsr_li3 - tsr_li3 % 64];
      if (tsr_live) {
        for (int r = tsr_lane; r < 256; r += 64) {
          const int j = r;
          const float w0 = in0[i0 * 256 + j];
          const float w1 = (n0 ? uintBitsToFloat(0x7fc00000u) : a0);
          const float w2 = w0 - w1;
          const float w3 = exp(w2);
          const double w4 = a1;
          const float w5 = float(w4);
          const float w6 = w3 / w5;
          out0[i0 * 256 + j] = w6;
        }
      }
    }
  }
}
