// The kernel writer's reductions (kernel_writer.h): accumulators, the combines across lanes, warps
// and blocks, and the four reduction shapes (per lanes, split blocks, per block, per output, tiles).
#include "tessera/codegen/kernel_writer.h"

namespace tessera::codegen::detail {

std::string KernelWriter::reduced_ref(size_t r) const {
  if (!tracks_nan(r)) return acc(r);
  return fmt::format("({} ? {} : {})", nan_flag(r),
                     d_.nan_literal[k_.reductions[r].acc_type == ScalarType::f32 ? 0 : 1], acc(r));
}

std::string KernelWriter::identity(size_t r) const {
  const auto& red = k_.reductions[r];
  const ScalarType t = red.acc_type;
  switch (red.kind) {
    case ReduceKind::Sum:
      return format_literal(t, 0, 0, d_);
    case ReduceKind::Prod:
      return format_literal(t, 1, 1, d_);
    case ReduceKind::Max:
    case ReduceKind::Min: {
      const bool is_max = red.kind == ReduceKind::Max;
      if (lower::is_float(t)) return format_literal(t, is_max ? -INFINITY : INFINITY, 0, d_);
      int64_t lo = 0, hi = 1;
      if (t == ScalarType::i8) lo = INT8_MIN, hi = INT8_MAX;
      if (t == ScalarType::u8) lo = 0, hi = UINT8_MAX;
      if (t == ScalarType::i32) lo = INT32_MIN, hi = INT32_MAX;
      if (t == ScalarType::i64) lo = INT64_MIN, hi = INT64_MAX;
      return format_literal(t, 0, is_max ? lo : hi, d_);
    }
  }
  return "0";
}

char KernelWriter::walk_prefix(int walk) {
  static const char prefixes[] = "vcdfghkmqtuxyz";  // none another name of the kernels starts with
  TESSERA_CHECK(walk >= 0 && walk + 1 < static_cast<int>(sizeof prefixes), "emitter: more than {} chained walks",
                sizeof prefixes - 2);
  return prefixes[walk];
}

void KernelWriter::accumulate() {
  for (size_t r = 0; r < k_.reductions.size(); ++r) {
    if (!in_walk(r)) continue;
    const auto& red = k_.reductions[r];
    const std::string v = ref(walk_code(), walk_prefix(), red.value), a = acc(r);
    switch (red.kind) {
      case ReduceKind::Sum:
        line(fmt::format("{} += {};", a, v));
        break;
      case ReduceKind::Prod:
        line(fmt::format("{} *= {};", a, v));
        break;
      case ReduceKind::Max:
        line(fmt::format("{0} = {1} > {0} ? {1} : {0};", a, v));
        break;
      case ReduceKind::Min:
        line(fmt::format("{0} = {1} < {0} ? {1} : {0};", a, v));
        break;
    }
    if (tracks_nan(r)) {
      line(fmt::format(fmt::runtime(d_.nan_flag_update), fmt::arg("flag", nan_flag(r)), fmt::arg("v", v)));
    }
  }
}

std::string KernelWriter::simd_clauses() const {
  std::string s;
  for (size_t r = 0; r < k_.reductions.size(); ++r) {
    if (!in_walk(r)) continue;
    const auto& red = k_.reductions[r];
    if (narrow(red.acc_type)) return "";  // OpenMP reductions over bool/bytes: leave the loop scalar
    static const char* ops[] = {"+", "*", "max", "min"};
    s += fmt::format("{}reduction({}:a{})", s.empty() ? "" : " ", ops[static_cast<int>(red.kind)], r);
    if (tracks_nan(r)) s += fmt::format(" reduction(|:n{})", r);
  }
  return s;
}

void KernelWriter::declare_accumulators() {
  for (size_t r = 0; r < k_.reductions.size(); ++r) {
    line(fmt::format("{} a{} = {};", d_.type(k_.reductions[r].acc_type), r, identity(r)));
    if (tracks_nan(r)) line(fmt::format(fmt::runtime(d_.nan_flag_decl), fmt::arg("flag", nan_flag(r))) + ";");
  }
}

void KernelWriter::strided_reduced_loop(const std::string& first, int step) {
  open(fmt::format("for ({0} r = {1}; r < {2}; r += {3})", idx(), first, num(k_.work_per_unit()), step));
  decompose("r", dims_where(true));
  instrs(walk_code(), walk_prefix());
  if (walk_ == 0) stores(k_.body_stores, k_.body, 'v');
  accumulate();
  close();
}

void KernelWriter::combine(const std::function<std::string(size_t)>& other, const std::function<std::string(size_t)>& flag) {
  for (size_t r = 0; r < k_.reductions.size(); ++r) {
    if (!in_walk(r)) continue;
    const std::string a = acc(r), o = other(r);
    switch (k_.reductions[r].kind) {
      case ReduceKind::Sum:
        line(fmt::format("{} += {};", a, o));
        break;
      case ReduceKind::Prod:
        line(fmt::format("{} *= {};", a, o));
        break;
      case ReduceKind::Max:
      case ReduceKind::Min: {
        const char* cmp = k_.reductions[r].kind == ReduceKind::Max ? ">" : "<";
        line(fmt::format("{{ const {0} t = {1}; {2} = t {3} {2} ? t : {2}; }}",
                         d_.type(k_.reductions[r].acc_type), o, a, cmp));
        break;
      }
    }
    if (tracks_nan(r)) {
      line(fmt::format(fmt::runtime(d_.nan_flag_merge), fmt::arg("a", nan_flag(r)), fmt::arg("b", flag(r))));
    }
  }
}

std::string KernelWriter::shuffled(ScalarType t, const std::string& v, int m) const {
  // Shuffles move 32-bit words or wider: narrower values travel as int.
  const std::string e = fmt::format(fmt::runtime(d_.shuffle_xor), fmt::arg("v", narrow(t) ? "(int)" + v : v),
                                    fmt::arg("m", m));
  return narrow(t) ? cast_to(d_.type(t), e, d_) : e;
}

void KernelWriter::declare_tree_slots() {
  for (size_t r = 0; r < k_.reductions.size(); ++r) {
    line(fmt::format(fmt::runtime(d_.shared_decl), fmt::arg("type", slot_type(k_.reductions[r].acc_type)),
                     fmt::arg("name", fmt::format("tsr_tree{}", r)), fmt::arg("size", d_.block_size)) + ";");
    if (tracks_nan(r)) {
      line(fmt::format(fmt::runtime(d_.shared_decl), fmt::arg("type", d_.nan_flag_type),
                       fmt::arg("name", fmt::format("tsr_treen{}", r)), fmt::arg("size", d_.block_size)) + ";");
    }
  }
}

void KernelWriter::store_tree_slots(const std::string& slot) {
  for (size_t r = 0; r < k_.reductions.size(); ++r) {
    if (!in_walk(r)) continue;
    const ScalarType t = k_.reductions[r].acc_type;
    const std::string v = slot_type(t) == d_.type(t) ? acc(r) : cast_to(slot_type(t), acc(r), d_);
    line(fmt::format("tsr_tree{}[{}] = {};", r, slot, v));
    if (tracks_nan(r)) line(fmt::format("tsr_treen{}[{}] = {};", r, slot, nan_flag(r)));
  }
}

void KernelWriter::combine_lanes_in_tree(int lanes) {
  const std::string li = fmt::format("tsr_li{}", tree_level_++);
  line(fmt::format("const {} {} = {};", idx(), li, d_.local_index));
  line(d_.barrier);  // the slots' previous readers are done
  store_tree_slots(li);
  for (int m = lanes / 2; m >= 1; m /= 2) {
    line(d_.barrier);
    open(fmt::format("if ({} % {} < {})", li, lanes, m));
    combine(
        [&](size_t r) {
          const ScalarType t = k_.reductions[r].acc_type;
          const std::string slot = fmt::format("tsr_tree{}[{} + {}]", r, li, m);
          return slot_type(t) == d_.type(t) ? slot : cast_to(d_.type(t), slot, d_);
        },
        [&](size_t r) { return fmt::format("tsr_treen{}[{} + {}]", r, li, m); });
    if (m > 1) store_tree_slots(li);
    close();
  }
}

void KernelWriter::combine_lanes(int lanes) {
  if (d_.lanes_through_shared) {
    combine_lanes_in_tree(lanes);
    return;
  }
  for (int m = lanes / 2; m >= 1; m /= 2) {
    combine([&](size_t r) { return shuffled(k_.reductions[r].acc_type, acc(r), m); },
            [&](size_t r) { return fmt::format(fmt::runtime(d_.shuffle_xor), fmt::arg("v", nan_flag(r)), fmt::arg("m", m)); });
  }
}

void KernelWriter::reduction_per_lanes() {
  const int g = mapping_.group, w = d_.warp_size;
  const std::string& b = d_.type(ScalarType::boolean);
  open("");
  line(fmt::format("const {} tsr_t = {};", idx(), d_.thread_index));
  line(fmt::format("const {} tsr_lane = tsr_t % {};", idx(), g));
  open(fmt::format("for ({0} ow = begin + tsr_t / {1} * {2}; ow < end; ow += {3} / {4})", idx(), w, w / g,
                   d_.thread_count, g));
  line(fmt::format("const {} o = ow + tsr_t % {} / {};", idx(), w, g));
  line(fmt::format("const {} tsr_live = o < end;", b));
  decompose("o", dims_where(false));
  declare_accumulators();
  open("if (tsr_live)");
  strided_reduced_loop("tsr_lane", g);
  close();
  combine_lanes(g);
  if (k_.has_row_phase() && tree_lanes()) share_through_tree(g);
  for (walk_ = 1; walk_ <= static_cast<int>(k_.chained.size()); ++walk_) {
    open("if (tsr_live)");
    strided_reduced_loop("tsr_lane", g);
    close();
    combine_lanes(g);
    if (tree_lanes()) share_through_tree(g);
  }
  walk_ = 0;
  if (has_epilogue()) {
    open("if (tsr_live && tsr_lane == 0)");
    epilogue_part();
    close();
  }
  if (!k_.row_stores.empty()) {
    open("if (tsr_live)");
    strided_row_loop("tsr_lane", g);
    close();
  }
  close();
  close();
}

void KernelWriter::combine_block(int warps) {
  const int w = d_.warp_size;
  if (warps == 1) {  // the block is one warp (a shared-memory tree)
    combine_lanes(w);
    return;
  }
  combine_lanes(w);
  open(fmt::format("if (tsr_l % {} == 0)", w));
  for (size_t r = 0; r < k_.reductions.size(); ++r) {
    if (!in_walk(r)) continue;
    line(fmt::format("tsr_sh{}[tsr_l / {}] = {};", r, w, acc(r)));
    if (tracks_nan(r)) line(fmt::format("tsr_shn{}[tsr_l / {}] = {};", r, w, nan_flag(r)));
  }
  close();
  line(d_.barrier);
  open(fmt::format("if (tsr_l < {})", w));
  for (size_t r = 0; r < k_.reductions.size(); ++r) {
    if (!in_walk(r)) continue;
    line(fmt::format("{} = tsr_l < {} ? tsr_sh{}[tsr_l] : {};", acc(r), warps, r, identity(r)));
    if (tracks_nan(r)) line(fmt::format("{} = tsr_l < {} ? tsr_shn{}[tsr_l] : 0;", nan_flag(r), warps, r));
  }
  combine_lanes(w);
  close();
}

void KernelWriter::declare_block_shared(int warps) {
  for (size_t r = 0; r < k_.reductions.size(); ++r) {
    line(fmt::format(fmt::runtime(d_.shared_decl), fmt::arg("type", d_.type(k_.reductions[r].acc_type)),
                     fmt::arg("name", fmt::format("tsr_sh{}", r)), fmt::arg("size", warps)) + ";");
    if (tracks_nan(r)) {
      line(fmt::format(fmt::runtime(d_.shared_decl), fmt::arg("type", "int"),
                       fmt::arg("name", fmt::format("tsr_shn{}", r)), fmt::arg("size", warps)) + ";");
    }
  }
}

void KernelWriter::reduction_split_blocks() {
  const int bs = d_.block_size, warps = bs / d_.warp_size, split = mapping_.split;
  const int64_t outputs = k_.range(), chunk = split_chunk(k_, d_), work = k_.work_per_unit();
  line(fmt::format(fmt::runtime(d_.scratch_binding), fmt::arg("k", k_.output_types.size())));
  declare_block_shared(warps);
  line(fmt::format(fmt::runtime(d_.shared_decl), fmt::arg("type", "int"), fmt::arg("name", "tsr_last"),
                   fmt::arg("size", 1)) + ";");
  int64_t offset = 0;
  for (size_t r = 0; r < k_.reductions.size(); ++r) {
    const std::string& t = d_.type(k_.reductions[r].acc_type);
    line(fmt::format("{0} {1}* tsr_part{2} = ({0} {1}*)(tsr_scratch + {3});", d_.volatile_qualifier, t, r, offset));
    offset += outputs * split * 8;
    if (tracks_nan(r)) {
      line(fmt::format("{0} int* tsr_partn{1} = ({0} int*)(tsr_scratch + {2});", d_.volatile_qualifier, r, offset));
      offset += outputs * split * 8;
    }
  }
  line(fmt::format("unsigned int* tsr_count = (unsigned int*)(tsr_scratch + {});", offset));
  line(fmt::format("const {} tsr_l = {};", idx(), d_.local_index));
  open(fmt::format("for ({0} ob = begin * {3} + {1}; ob < end * {3}; ob += {2})", idx(), d_.block_index,
                   d_.block_count, split));
  line(fmt::format("const {0} o = ob / {1}, tsr_s = ob % {1};", idx(), split));
  decompose("o", dims_where(false));
  declare_accumulators();
  line(fmt::format("const {0} tsr_end = tsr_s * {1} + {1} < {2} ? tsr_s * {1} + {1} : {2};", idx(), num(chunk),
                   num(work)));
  open(fmt::format("for ({0} r = tsr_s * {1} + tsr_l; r < tsr_end; r += {2})", idx(), num(chunk), bs));
  decompose("r", dims_where(true));
  instrs(k_.body, 'v');
  stores(k_.body_stores, k_.body, 'v');
  accumulate();
  close();
  combine_block(warps);
  open("if (tsr_l == 0)");
  for (size_t r = 0; r < k_.reductions.size(); ++r) {
    line(fmt::format("tsr_part{}[o * {} + tsr_s] = {};", r, split, acc(r)));
    if (tracks_nan(r)) line(fmt::format("tsr_partn{}[o * {} + tsr_s] = {};", r, split, nan_flag(r)));
  }
  line(d_.memory_fence);
  line(fmt::format("tsr_last[0] = {} == {}u;",
                   fmt::format(fmt::runtime(d_.atomic_increment), fmt::arg("p", "tsr_count + o")), split - 1));
  close();
  line(d_.barrier);
  open("if (tsr_last[0] && tsr_l == 0)");
  line(d_.memory_fence);
  for (size_t r = 0; r < k_.reductions.size(); ++r) {
    line(fmt::format("{} = {};", acc(r), identity(r)));
    if (tracks_nan(r)) line(fmt::format("{} = 0;", nan_flag(r)));
  }
  open(fmt::format("for (int q = 0; q < {}; ++q)", split));
  combine([&](size_t r) { return fmt::format("tsr_part{}[o * {} + q]", r, split); },
          [&](size_t r) { return fmt::format("tsr_partn{}[o * {} + q]", r, split); });
  close();
  line("tsr_count[o] = 0u;  // ready for the next run");
  epilogue_part();
  close();
  line(d_.barrier);  // tsr_last and the shared slots are rewritten for the next output
  close();
}

void KernelWriter::reduction_per_block() {
  const int bs = d_.block_size, warps = bs / d_.warp_size;
  if (warps > 1) declare_block_shared(warps);
  line(fmt::format("const {} tsr_l = {};", idx(), d_.local_index));
  open(fmt::format("for ({0} o = begin + {1}; o < end; o += {2})", idx(), d_.block_index, d_.block_count));
  decompose("o", dims_where(false));
  declare_accumulators();
  strided_reduced_loop("tsr_l", bs);
  combine_block(warps);
  if (k_.has_row_phase()) share_block_result(warps);
  for (walk_ = 1; walk_ <= static_cast<int>(k_.chained.size()); ++walk_) {
    strided_reduced_loop("tsr_l", bs);
    combine_block(warps);
    share_block_result(warps);
  }
  walk_ = 0;
  if (has_epilogue()) {
    open("if (tsr_l == 0)");
    epilogue_part();
    close();
  }
  if (!k_.row_stores.empty()) strided_row_loop("tsr_l", bs);
  // The shared slots are rewritten for the next output (a tree waits before it writes them).
  if (!tree_lanes()) line(d_.barrier);
  close();
}

void KernelWriter::reduction_per_output() {
  open(range_loop("o"));
  decompose("o", dims_where(false));
  for (size_t r = 0; r < k_.reductions.size(); ++r) {
    line(fmt::format("{} a{} = {};", d_.type(k_.reductions[r].acc_type), r, identity(r)));
    if (tracks_nan(r)) line(fmt::format(fmt::runtime(d_.nan_flag_decl), fmt::arg("flag", nan_flag(r))) + ";");
  }
  const std::vector<size_t> red = dims_where(true);
  // On RowLoops the innermost loop runs over the last axis (reduced here): hoist what it does not
  // change. (A row kernel of one-element rows has no reduced axis left: nothing to hoist out of.)
  const bool hoist = d_.schedule == Schedule::RowLoops && !red.empty();
  for (walk_ = 0; walk_ <= static_cast<int>(k_.chained.size()); ++walk_) {
    const std::vector<Instr>& code = walk_code();
    for (size_t i = 0; i < red.size(); ++i) {
      if (i + 1 == red.size()) {
        if (hoist) instrs(code, walk_prefix(), Part::Invariant);
        const std::string clauses = simd_clauses();
        if (!clauses.empty() && !d_.simd_reduction_pragma.empty()) {
          pragma(fmt::format(fmt::runtime(d_.simd_reduction_pragma), clauses));
        }
      }
      open(fmt::format("for ({2} {0} = 0; {0} < {1}; ++{0})", var(red[i]), extent(red[i]), idx()));
    }
    instrs(code, walk_prefix(), hoist ? Part::Variant : Part::All);
    if (walk_ == 0) stores(k_.body_stores, k_.body, 'v');
    accumulate();
    for (size_t i = 0; i < red.size(); ++i) close();
  }
  walk_ = 0;
  instrs(k_.epilogue, 'e');
  stores(k_.epilogue_stores, k_.epilogue, 'e');
  if (!k_.row_stores.empty()) row_loops(hoist);
  close();
}

void KernelWriter::reduction_tiles() {
  TESSERA_CHECK(!k_.has_row_phase(), "emitter: kernel '{}' has a row phase but keeps its innermost axis", k_.name);
  const int tile = d_.reduction_tile;
  std::vector<size_t> outer_kept;
  for (size_t d : dims_where(false)) {
    if (d != last_) outer_kept.push_back(d);
  }
  open_rows(outer_kept);
  open(fmt::format("for ({} jb = j0; jb < j1; jb += {})", idx(), tile));
  line(fmt::format("const {1} je = j1 - jb < {0} ? j1 : jb + {0};", tile, idx()));
  for (size_t r = 0; r < k_.reductions.size(); ++r) {
    line(fmt::format("{} a{}[{}];", d_.type(k_.reductions[r].acc_type), r, tile));
    if (tracks_nan(r)) line(fmt::format("unsigned char n{}[{}];", r, tile));
  }
  open(fmt::format("for ({} j = jb; j < je; ++j)", idx()));
  for (size_t r = 0; r < k_.reductions.size(); ++r) {
    line(fmt::format("{} = {};", acc(r), identity(r)));
    if (tracks_nan(r)) line(fmt::format("{} = 0;", nan_flag(r)));
  }
  close();
  const std::vector<size_t> red = dims_where(true);
  for (size_t d : red) open(fmt::format("for ({2} {0} = 0; {0} < {1}; ++{0})", var(d), extent(d), idx()));
  open_inner_loop(k_.body, 'v', "jb", "je");
  stores(k_.body_stores, k_.body, 'v');
  accumulate();
  close();
  for (size_t i = 0; i < red.size(); ++i) close();
  open_inner_loop(k_.epilogue, 'e', "jb", "je");
  stores(k_.epilogue_stores, k_.epilogue, 'e');
  close();
  close();
  close_rows();
}

}  // namespace tessera::codegen::detail
