#version 450

// layer_norm_block
layout(std430, binding = 0) readonly buffer TsrIn0 { float in0[]; };
layout(std430, binding = 4) readonly buffer TsrIn4 { float in4[]; };
layout(std430, binding = 5) readonly buffer TsrIn5 { float in5[]; };
layout(std430, binding = 6) writeonly buffer TsrOut0 { float out0[]; };
shared double tsr_tree0[256];
shared double tsr_tree1[256];
// tsr_kernel_0: the module's entry point
layout(local_size_x = 256) in;
layout(push_constant) uniform TsrRange { int begin; int end; };
void main() {
  const int tsr_l = int(gl_LocalInvocationID.x);
  for (int o = begin + int(gl_WorkGroupID.x); o < end; o += int(gl_NumWorkGroups.x)) {
    const int i0 = o;
    double a0 = 0.0lf;
    double a1 = 0.0lf;
    for (int r = tsr_l; r < 4096; r += 256) {
      const int j = r;
      const float v0 = in0[i0 * 4096 + j];
      const double v1 = double(v0);
      a0 += v1;
    }
    const int tsr_li0 = int(gl_LocalInvocationID.x);
    barrier();
    tsr_tree0[tsr_li0] = a0;
    barrier();
    if (tsr_li0 % 256 < 128) {
      a0 += tsr_tree0[tsr_li0 + 128];
      tsr_tree0[tsr_li0] = a0;
    }
    barrier();
    if (tsr_li0 % 256 < 64) {
      a0 += tsr_tree0[tsr_li0 + 64];
      tsr_tree0[tsr_li0] = a0;
    }
    barrier();
    if (tsr_li0 % 256 < 32) {
      a0 += tsr_tree0[tsr_li0 + 32];
      tsr_tree0[tsr_li0] = a0;
    }
    barrier();
    if (tsr_li0 % 256 < 16) {
      a0 += tsr_tree0[tsr_li0 + 16];
      tsr_tree0[tsr_li0] = a0;
    }
    barrier();
    if (tsr_li0 % 256 < 8) {
      a0 += tsr_tree0[tsr_li0 + 8];
      tsr_tree0[tsr_li0] = a0;
    }
    barrier();
    if (tsr_li0 % 256 < 4) {
      a0 += tsr_tree0[tsr_li0 + 4];
      tsr_tree0[tsr_li0] = a0;
    }
    barrier();
    if (tsr_li0 % 256 < 2) {
      a0 += tsr_tree0[tsr_li0 + 2];
      tsr_tree0[tsr_li0] = a0;
    }
    barrier();
    if (tsr_li0 % 256 < 1) {
      a0 += tsr_tree0[tsr_li0 + 1];
    }
    const int tsr_li1 = int(gl_LocalInvocationID.x);
    if (tsr_li1 % 256 == 0) {
      tsr_tree0[tsr_li1] = a0;
    }
    barrier();
    a0 = tsr_tree0[tsr_li1 - tsr_li1 % 256];
    for (int r = tsr_l; r < 4096; r += 256) {
      const int j = r;
      const float c0 = in0[i0 * 4096 + j];
      const double c1 = a0;
      const float c2 = float(c1);
      const float c4 = c2 * 0.00024414062;
      const float c5 = c0 - c4;
      const float c6 = c5 * c5;
      const double c7 = double(c6);
      a1 += c7;
    }
    const int tsr_li2 = int(gl_LocalInvocationID.x);
    barrier();
    tsr_tree1[tsr_li2] = a1;
    barrier();
    if (tsr_li2 % 256 < 128) {
      a1 += tsr_tree1[tsr_li2 + 128];
      tsr_tree1[tsr_li2] = a1;
    }
    barrier();
    if (tsr_li2 % 256 < 64) {
      a1 += tsr_tree1[tsr_li2 + 64];
      tsr_tree1[tsr_li2] = a1;
    }
    barrier();
    if (tsr_li2 % 256 < 32) {
      a1 += tsr_tree1[tsr_li2 + 32];
      tsr_tree1[tsr_li2] = a1;
    }
    barrier();
    if (tsr_li2 % 256 < 16) {
      a1 += tsr_tree1[tsr_li2 + 16];
      tsr_tree1[tsr_li2] = a1;
    }
    barrier();
    if (tsr_li2 % 256 < 8) {
      a1 += tsr_tree1[tsr_li2 + 8];
      tsr_tree1[tsr_li2] = a1;
    }
    barrier();
    if (tsr_li2 % 256 < 4) {
      a1 += tsr_tree1[tsr_li2 + 4];
      tsr_tree1[tsr_li2] = a1;
    }
    barrier();
    if (tsr_li2 % 256 < 2) {
      a1 += tsr_tree1[tsr_li2 + 2];
      tsr_tree1[tsr_li2] = a1;
    }
    barrier();
    if (tsr_li2 % 256 < 1) {
      a1 += tsr_tree1[tsr_li2 + 1];
    }
    const int tsr_li3 = int(gl_LocalInvocationID.x);
    if (tsr_li3 % 256 == 0) {
      tsr_tree1[tsr_li3] = a1;
    }
    barrier();
    a1 = tsr_tree1[tsr_li3 - tsr_li3 % 256];
    for (int r = tsr_l; r < 4096; r += 256) {
      const int j = r;
      const float w0 = in0[i0 * 4096 + j];
      const double w1 = a0;
      const float w2 = float(w1);
      const float w4 = w2 * 0.00024414062;
      const float w5 = w0 - w4;
      const double w6 = a1;
      const float w7 = float(w6);
      const float w8 = w7 * 0.00024414062;
      const float w10 = w8 + 1e-05;
      const float w11 = sqrt(w10);
      const float w13 = 1.0 / w11;
      const float w14 = w5 * w13;
      const float w15 = in4[j];
      const float w16 = w14 * w15;
      const float w17 = in5[j];
      const float w18 = w16 + w17;
      out0[i0 * 4096 + j] = w18;
    }
  }
}
