#pragma once
// Whether this build compiles the hand-written x86 kernels (AVX2/FMA/F16C, AVX-512), each chosen at run
// time by cpu_features.h. Elsewhere (arm64, or TESSERA_PORTABLE=ON, which proves the portable path on
// x86) they are left out: <immintrin.h> and target("avx2") exist only for x86 compilers.
#if (defined(__x86_64__) || defined(__i386__)) && !defined(TESSERA_PORTABLE)
#define TESSERA_X86_KERNELS 1
#else
#define TESSERA_X86_KERNELS 0
#endif
