#pragma once
// How a GridStride kernel maps its range [begin, end) onto hardware threads. The emitter writes the
// loops from these decisions and a launcher sizes its grid from the same ones.
#include "tessera/codegen/dialect.h"
#include "tessera/lower/loop_ir.h"

namespace tessera::codegen {

// Threads that share one output of a reduction: 1 (each thread walks its outputs alone), a power of
// two up to the dialect's warp (lanes combine by shuffles), or the dialect's block_size (the whole
// block combines through shared memory). Always 1 for dialects without cooperation.
int reduction_group(const lower::Kernel& kernel, const Dialect& dialect);

// Consecutive elements per thread step of an elementwise kernel: the dialect's vector_bytes over the
// widest element accessed contiguously along the innermost axis, when the innermost extent is a
// multiple of it (a vector never crosses a row); else 1. Requires begin % width == 0 at launch.
int vector_width(const lower::Kernel& kernel, const Dialect& dialect);

// Whether an access at an innermost index that is a multiple of `vector` starts a whole vector: unit
// innermost stride and every other offset a multiple of `vector` (the buffer's own alignment is
// checked when the kernel runs).
bool vector_aligned(const lower::Affine& access, int vector);

ThreadMapping thread_mapping(const lower::Kernel& kernel, const Dialect& dialect);

}  // namespace tessera::codegen
