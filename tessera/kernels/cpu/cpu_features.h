#pragma once
// Run-time CPU feature checks for the hand-written kernels. The library is compiled for baseline
// x86-64; AVX2/FMA code paths are compiled per function and chosen here at run time.

namespace tessera::kernels {

// True when the CPU has AVX2 and FMA and the AVX2 paths are not disabled (TESSERA_NO_AVX2=1, or
// set_avx2_enabled(false) in tests that cover the portable fallback).
bool use_avx2();
void set_avx2_enabled(bool enabled);

}  // namespace tessera::kernels
