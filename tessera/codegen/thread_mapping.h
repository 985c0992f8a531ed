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

// Blocks per output of a block reduction: more than 1 when few outputs over very long rows would
// leave most multiprocessors idle (32 bias gradients over 173,056 elements each used 32 of 132).
int reduction_split(const lower::Kernel& kernel, const Dialect& dialect);

// Elements of the reduced range each split block takes (a multiple of the block size).
int64_t split_chunk(const lower::Kernel& kernel, const Dialect& dialect);

// Bytes of scratch a split kernel needs after its outputs (0 when it does not split): per reduction
// and output one partial per block, an int NaN flag where it tracks NaN, then one counter per output.
int64_t scratch_bytes(const lower::Kernel& kernel, const Dialect& dialect);

ThreadMapping thread_mapping(const lower::Kernel& kernel, const Dialect& dialect);

}  // namespace tessera::codegen
