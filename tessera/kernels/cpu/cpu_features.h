#pragma once
// Run-time CPU feature checks for the hand-written kernels. The library is compiled for baseline
// x86-64; AVX2/FMA code paths are compiled per function and chosen here at run time. Builds without
// the x86 kernels (arm64, TESSERA_PORTABLE=ON: x86_kernels.h) answer false and run the portable ones.

namespace tessera::kernels {

// Whether this CPU has AVX2 and FMA, whatever the build and the switches below (the JIT's flags).
bool cpu_has_avx2_fma();

// Whether this build has the x86 kernels at all (false on arm64 and with TESSERA_PORTABLE=ON).
bool x86_kernels_built();

// True when the CPU has AVX2 and FMA and the AVX2 paths are not disabled (TESSERA_NO_AVX2=1, or
// set_avx2_enabled(false) in tests that cover the portable fallback).
bool use_avx2();
void set_avx2_enabled(bool enabled);

// True when the CPU has AVX-512 VNNI (avx512vnni + avx512vl + avx512bw: Intel Ice Lake and later, AMD
// Zen 4 and 5), AVX2 is in use and the wider paths are not disabled (TESSERA_NO_AVX512=1 forces
// the AVX2 kernels, so both are tested on one machine; set_avx512_vnni_enabled(false) in tests).
bool use_avx512_vnni();
void set_avx512_vnni_enabled(bool enabled);

// True when the CPU has AVX-512F (512-bit float FMAs and vcvtph2ps zmm: Skylake-X and later, Zen 4), AVX2
// is in use and TESSERA_NO_AVX512 is not set; the float-weight kernels then use 16-wide vectors.
// set_avx512_enabled(false) forces their AVX2 forms in tests.
bool use_avx512();
void set_avx512_enabled(bool enabled);

}  // namespace tessera::kernels
