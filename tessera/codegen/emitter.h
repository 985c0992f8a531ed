#pragma once
// The C-family emitter: writes loop kernels (tessera/lower/loop_ir.h) as source text in a dialect.
// Every kernel works on its range units [begin, end) (domain elements, or output elements when it
// reduces), so a caller can split the range between threads; the dialect's kernel_signature and
// bind_buffer say how the range and the buffers arrive (C:
//   void <symbol>(const void* const* in, void* const* out, int64_t begin, int64_t end)).
#include <string>
#include <vector>

#include "tessera/codegen/dialect.h"
#include "tessera/lower/loop_ir.h"

namespace tessera::codegen {

// One translation unit: the dialect's prelude, the helper functions the kernels use, the kernels.
std::string emit_module(const std::vector<lower::Kernel>& kernels, const std::vector<std::string>& symbols,
                        const Dialect& dialect);

// As emit_module, but as many modules as the dialect needs: one per kernel where it takes one kernel
// per module (GLSL), else one.
std::vector<std::string> emit_modules(const std::vector<lower::Kernel>& kernels,
                                      const std::vector<std::string>& symbols, const Dialect& dialect);

// A single kernel in its own module (for tests and dumps).
std::string emit_kernel(const lower::Kernel& kernel, const std::string& symbol, const Dialect& dialect);

// A literal of type t in the dialect's spelling (exact: floats print their shortest round-trip form).
std::string format_literal(lower::ScalarType t, double fval, int64_t ival, const Dialect& dialect);

}  // namespace tessera::codegen
