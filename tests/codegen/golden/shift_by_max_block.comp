#version 450

// shift_by_max_block
layout(std430, binding = 0) readonly buffer TsrIn0 { float in0[]; };
layout(std430, binding = 1) writeonly buffer TsrOut0 { float out0[]; };
shared float tsr_tree0[256];
shared bool tsr_treen0[256];
// tsr_kernel_0: the module's entry point
layout(local_size_x = 256) in;
layout(push_constant) uniform TsrRange { int begin; int end; };
void main() {
  const int tsr_l = int(gl_LocalInvocationID.x);
  for (int o = begin + int(gl_WorkGroupID.x); o < end; o += int(gl_NumWorkGroups.x)) {
    const int i0 = o;
    float a0 = (-uintBitsToFloat(0x7f800000u));
    bool n0 = false;
    for (int r = tsr_l; r < 4096; r += 256) {
      const int j = r;
      const float v0 = in0[i0 * 4096 + j];
      a0 = v0 > a0 ? v0 : a0;
      n0 = n0 || isnan(v0);
    }
    const int tsr_li0 = int(gl_LocalInvocationID.x);
    barrier();
    tsr_tree0[tsr_li0] = a0;
    tsr_treen0[tsr_li0] = n0;
    barrier();
    if (tsr_li0 % 256 < 128) {
      { const float t = tsr_tree0[tsr_li0 + 128]; a0 = t > a0 ? t : a0; }
      n0 = n0 || tsr_treen0[tsr_li0 + 128];
      tsr_tree0[tsr_li0] = a0;
      tsr_treen0[tsr_li0] = n0;
    }
    barrier();
    if (tsr_li0 % 256 < 64) {
      { const float t = tsr_tree0[tsr_li0 + 64]; a0 = t > a0 ? t : a0; }
      n0 = n0 || tsr_treen0[tsr_li0 + 64];
      tsr_tree0[tsr_li0] = a0;
      tsr_treen0[tsr_li0] = n0;
    }
    barrier();
    if (tsr_li0 % 256 < 32) {
      { const float t = tsr_tree0[tsr_li0 + 32]; a0 = t > a0 ? t : a0; }
      n0 = n0 || tsr_treen0[tsr_li0 + 32];
      tsr_tree0[tsr_li0] = a0;
      tsr_treen0[tsr_li0] = n0;
    }
    barrier();
    if (tsr_li0 % 256 < 16) {
      { const float t = tsr_tree0[tsr_li0 + 16]; a0 = t > a0 ? t : a0; }
      n0 = n0 || tsr_treen0[tsr_li0 + 16];
      tsr_tree0[tsr_li0] = a0;
      tsr_treen0[tsr_li0] = n0;
    }
    barrier();
    if (tsr_li0 % 256 < 8) {
      { const float t = tsr_tree0[tsr_li0 + 8]; a0 = t > a0 ? t : a0; }
      n0 = n0 || tsr_treen0[tsr_li0 + 8];
      tsr_tree0[tsr_li0] = a0;
      tsr_treen0[tsr_li0] = n0;
    }
    barrier();
    if (tsr_li0 % 256 < 4) {
      { const float t = tsr_tree0[tsr_li0 + 4]; a0 = t > a0 ? t : a0; }
      n0 = n0 || tsr_treen0[tsr_li0 + 4];
      tsr_tree0[tsr_li0] = a0;
      tsr_treen0[tsr_li0] = n0;
    }
    barrier();
    if (tsr_li0 % 256 < 2) {
      { const float t = tsr_tree0[tsr_li0 + 2]; a0 = t > a0 ? t : a0; }
      n0 = n0 || tsr_treen0[tsr_li0 + 2];
      tsr_tree0[tsr_li0] = a0;
      tsr_treen0[tsr_li0] = n0;
    }
    barrier();
    if (tsr_li0 % 256 < 1) {
      { const float t = tsr_tree0[tsr_li0 + 1]; a0 = t > a0 ? t : a0; }
      n0 = n0 || tsr_treen0[tsr_li0 + 1];
    }
    const int tsr_li1 = int(gl_LocalInvocationID.x);
    if (tsr_li1 % 256 == 0) {
      tsr_tree0[tsr_li1] = a0;
      tsr_treen0[tsr_li1] = n0;
    }
    barrier();
    a0 = tsr_tree0[tsr_li1 - tsr_li1 % 256];
    n0 = tsr_treen0[tsr_li1 - tsr_li1 % 256];
    for (int r = tsr_l; r < 4096; r += 256) {
      const int j = r;
      const float w0 = in0[i0 * 4096 + j];
      const float w1 = (n0 ? uintBitsToFloat(0x7fc00000u) : a0);
      const float w2 = w0 - w1;
      const float w3 = exp(w2);
      out0[i0 * 4096 + j] = w3;
    }
  }
}
