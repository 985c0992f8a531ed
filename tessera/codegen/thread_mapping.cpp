// How GridStride kernels spread their range over threads: shared by the emitter (which writes the
// loops) and the launchers (which size the grid), so the two cannot disagree.
#include "tessera/codegen/thread_mapping.h"

#include <algorithm>

namespace tessera::codegen {

namespace {

int64_t floor_pow2(int64_t v) {
  int64_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

int element_bytes(lower::ScalarType t) {
  return t == lower::ScalarType::boolean ? 1 : lower::scalar_bits(t) / 8;
}

}  // namespace

int reduction_group(const lower::Kernel& k, const Dialect& d) {
  if (d.schedule != Schedule::GridStride || d.warp_size == 0 || !k.has_reduction()) return 1;
  const int64_t work = k.work_per_unit(), outputs = k.range();
  // A kept innermost axis with many outputs: neighbouring threads read neighbouring addresses
  // when each walks its own output (a column sum), which a group of lanes over rows would lose.
  if (!k.reduced.back() && outputs >= 4096) return 1;
  if (work < 16) return 1;
  // Few outputs over long rows: a whole block per output keeps the machine busy. So for a row kernel
  // over a few rows of a few hundred (a decode step's norms): a warp walked a 768-wide row three times,
  // 24 dependent loads a lane per pass.
  if (work >= 2048 && outputs <= 512) return d.block_size;
  if (k.has_row_phase() && work >= 256 && outputs <= 8) return d.block_size;
  // About four elements per lane before the shuffles, at most a warp.
  return static_cast<int>(std::min<int64_t>(d.warp_size, floor_pow2(work / 4)));
}

int vector_width(const lower::Kernel& k, const Dialect& d) {
  if (d.schedule != Schedule::GridStride || d.vector_bytes == 0 || k.has_reduction()) return 1;
  const size_t last = k.domain.size() - 1;
  int widest = 0;
  auto note = [&](lower::ScalarType t, const lower::Affine& a) {
    if (a.coef[last] == 1) widest = std::max(widest, element_bytes(t));
  };
  for (const lower::Instr& in : k.body) {
    if (in.op == lower::Op::Load) note(k.input_types[static_cast<size_t>(in.buffer)], in.access);
    // Vector lanes read whole vectors; a computed index along the vectors' axis would need a lane offset.
    if (in.op == lower::Op::Index && in.access.coef[last] != 0) return 1;
  }
  for (const lower::Store& s : k.body_stores) note(k.output_types[static_cast<size_t>(s.output)], s.access);
  if (widest == 0) return 1;
  const int v = d.vector_bytes / widest;
  if (v < 2 || k.domain[last] % v != 0) return 1;
  return v;
}

bool vector_aligned(const lower::Affine& a, int vector) {
  if (a.constant % vector != 0) return false;
  for (size_t d = 0; d + 1 < a.coef.size(); ++d) {
    if (a.coef[d] % vector != 0) return false;
  }
  return a.coef.back() == 1;
}

int reduction_split(const lower::Kernel& k, const Dialect& d) {
  // A row kernel's threads of one row all need its finished reductions, which a split leaves to one block.
  if (d.scratch_binding.empty() || k.has_row_phase() || reduction_group(k, d) != d.block_size) return 1;
  const int64_t work = k.work_per_unit(), outputs = k.range();
  // About 4K elements per block, and no more blocks in all than a few per multiprocessor of a large GPU.
  // (16K left a CNN's bias gradients, 64 sums of 30,976, on 64 blocks of an H200's 132 multiprocessors:
  // 33 us for 24 MB, with the ReLU gradient written beside the sums.)
  const int64_t want = std::min<int64_t>(work / 4096, 1024 / std::max<int64_t>(outputs, 1));
  return static_cast<int>(std::clamp<int64_t>(want, 1, 64));
}

int64_t split_chunk(const lower::Kernel& k, const Dialect& d) {
  const int64_t s = reduction_split(k, d), b = d.block_size;
  const int64_t per = (k.work_per_unit() + s - 1) / s;
  return (per + b - 1) / b * b;
}

namespace {

bool tracks_nan(const lower::Reduction& r) {
  return lower::is_float(r.acc_type) && (r.kind == lower::ReduceKind::Max || r.kind == lower::ReduceKind::Min);
}

}  // namespace

int64_t scratch_bytes(const lower::Kernel& k, const Dialect& d) {
  const int64_t s = reduction_split(k, d);
  if (s <= 1) return 0;
  const int64_t slots = k.range() * s;
  int64_t bytes = 0;
  for (const lower::Reduction& r : k.reductions) {
    bytes += slots * 8;  // every accumulator type fits 8 bytes; 8-byte slots keep them aligned
    if (tracks_nan(r)) bytes += slots * 8;
  }
  return bytes + k.range() * 4;
}

// Range units from which an elementwise kernel without vectors takes dialect.scalar_unroll per thread.
constexpr int64_t kUnrollMinRange = int64_t{1} << 16;

ThreadMapping thread_mapping(const lower::Kernel& k, const Dialect& d) {
  ThreadMapping m{reduction_group(k, d), vector_width(k, d), reduction_split(k, d)};
  // Only where there are enough elements to keep every thread busy: a small kernel (a decode step's)
  // gains nothing and its unrolled body costs compile time (a Llama decode graph's NVRTC time doubled).
  if (!k.has_reduction() && m.vector == 1 && d.schedule == Schedule::GridStride && k.range() >= kUnrollMinRange) {
    m.unroll = std::max(1, d.scalar_unroll);
  }
  return m;
}

}  // namespace tessera::codegen
