// The row phase of row kernels (loop_ir.h): after a row's reductions are finished, its elements are
// walked again to compute the outputs that use them. Every thread that walks part of the row must
// hold the row's finished accumulators (and NaN flags) first: a thread alone has them; lanes that
// combined through shuffles all have them (the butterfly leaves the result in every lane); a tree in
// shared memory or a block's warps leave them with one thread, which passes them on through shared
// memory. Each thread then takes every step-th element of the row, so the result of an element never
// depends on which thread computed it: runs are bit-identical.
#include "tessera/codegen/kernel_writer.h"

namespace tessera::codegen::detail {

// One thread's own row (RowLoops, or a GridStride group of 1): the reduced axes again, as the body
// walked them, with what the innermost loop does not change computed before it on RowLoops (the
// reduced values and the scale they make, RMSNorm's rsqrt(mean + eps)).
void KernelWriter::row_loops(bool hoist) {
  const std::vector<size_t> red = dims_where(true);
  for (size_t i = 0; i < red.size(); ++i) {
    if (i + 1 == red.size() && hoist) {
      instrs(k_.row, 'w', Part::Invariant);
      pragma(d_.inner_loop_pragma);
    }
    open(fmt::format("for ({2} {0} = 0; {0} < {1}; ++{0})", var(red[i]), extent(red[i]), idx()));
  }
  instrs(k_.row, 'w', hoist ? Part::Variant : Part::All);
  stores(k_.row_stores, k_.row, 'w');
  for (size_t i = 0; i < red.size(); ++i) close();
}

// This thread's share of the row's elements: flat indices first, first + step, ... (as the
// reduction's strided loop took them, so the row is read back in the same coalesced order).
void KernelWriter::strided_row_loop(const std::string& first, int step) {
  open(fmt::format("for ({0} r = {1}; r < {2}; r += {3})", idx(), first, num(k_.work_per_unit()), step));
  decompose("r", dims_where(true));
  instrs(k_.row, 'w');
  stores(k_.row_stores, k_.row, 'w');
  close();
}

// After a shared-memory tree over groups of `lanes` threads (combine_lanes_in_tree), where only a
// group's first thread holds the result: it writes it to its own slot (no other thread reads that
// slot during the tree), and after a barrier the whole group reads it. The next tree starts with a
// barrier, so these reads finish before the slots are rewritten. Every thread of the block gets here.
void KernelWriter::share_through_tree(int lanes) {
  const std::string li = fmt::format("tsr_li{}", tree_level_++);
  line(fmt::format("const {} {} = {};", idx(), li, d_.local_index));
  open(fmt::format("if ({} % {} == 0)", li, lanes));
  store_tree_slots(li);
  close();
  line(d_.barrier);
  for (size_t r = 0; r < k_.reductions.size(); ++r) {
    if (!in_walk(r)) continue;
    const ScalarType t = k_.reductions[r].acc_type;
    const std::string slot = fmt::format("tsr_tree{}[{} - {} % {}]", r, li, li, lanes);
    line(fmt::format("{} = {};", acc(r), slot_type(t) == d_.type(t) ? slot : cast_to(d_.type(t), slot, d_)));
    if (tracks_nan(r)) line(fmt::format("{} = tsr_treen{}[{} - {} % {}];", nan_flag(r), r, li, li, lanes));
  }
}

// After combine_block: a block of one warp combined by shuffles already has the result in every
// lane, and a tree leaves it with thread 0 (share_through_tree). With several warps only warp 0 has
// it: thread 0 writes it to slot 0 of the warps' shared slots (warp 0's lanes read only their own
// slots while combining, so none is still to read slot 0) and every thread reads it after a barrier;
// the barrier that ends each output keeps the next output's writes after these reads.
void KernelWriter::share_block_result(int warps) {
  if (warps == 1) {
    if (tree_lanes()) share_through_tree(d_.warp_size);
    return;
  }
  open("if (tsr_l == 0)");
  for (size_t r = 0; r < k_.reductions.size(); ++r) {
    if (!in_walk(r)) continue;
    line(fmt::format("tsr_sh{}[0] = {};", r, acc(r)));
    if (tracks_nan(r)) line(fmt::format("tsr_shn{}[0] = {};", r, nan_flag(r)));
  }
  close();
  line(d_.barrier);
  for (size_t r = 0; r < k_.reductions.size(); ++r) {
    if (!in_walk(r)) continue;
    line(fmt::format("{} = tsr_sh{}[0];", acc(r), r));
    if (tracks_nan(r)) line(fmt::format("{} = tsr_shn{}[0];", nan_flag(r), r));
  }
}

}  // namespace tessera::codegen::detail
