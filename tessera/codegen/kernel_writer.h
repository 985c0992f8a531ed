#pragma once
// The emitter's writer of one kernel (internal to tessera/codegen; emitter.cpp writes the module
// around the kernels). The class is declared here and defined by concern: kernel_writer.cpp (the
// frame, expressions, stores), kernel_writer_elementwise.cpp, kernel_writer_reduction.cpp and
// row_phase.cpp. Three loop shapes cover every kernel:
//  - elementwise: rows of the domain with a contiguous inner loop (RowLoops), or one element per
//    thread step (GridStride);
//  - reduction whose innermost axis is reduced: one output element per range unit, accumulators in
//    registers, the inner loop a SIMD reduction;
//  - reduction whose innermost axis is kept (RowLoops): a tile of neighbouring outputs accumulated
//    together in small arrays, so the inner loop stays contiguous (a column sum reads rows).
// A row kernel's row phase (loop_ir.h) follows its output's epilogue: the thread that reduced the
// row walks it again; where lanes or a block shared the row, every one of them first takes the
// group's finished result and then walks its strided share of the row (row_phase.cpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "tessera/codegen/emitter.h"
#include "tessera/codegen/thread_mapping.h"
#include "tessera/core/error.h"

namespace tessera::codegen::detail {

using lower::Affine;
using lower::Instr;
using lower::Kernel;
using lower::Op;
using lower::ReduceKind;
using lower::ScalarType;

// What the module's helper section must define.
struct Helpers {
  std::set<std::pair<ScalarType, ScalarType>> conversions;  // saturating float -> integer conversions
  std::set<std::pair<int, int>> math;                       // (MathFn, 0: f32 / 1: f64) the dialect defines
  std::set<ScalarType> types;                               // for the dialect's type requirements
  bool stream = false;                                      // the dialect's streaming-store helpers
  bool vector = false;                                      // the dialect's vector type
};

// (T)x or T(x); `e` must be a primary expression unless `compound` says it needs parentheses in C.
std::string cast_to(const std::string& type, const std::string& e, const Dialect& d, bool compound = false);
std::string convert_helper_name(ScalarType from, ScalarType to);
bool narrow(ScalarType t);  // i8, u8, bool: C computes them in int

class KernelWriter {
 public:
  // With `params`, extents and outer strides are read from P[] rather than written as literals, so
  // kernels that differ only in sizes print the same text and can share one compiled body; with
  // `literal_params` too, the body's size locals are those of this kernel (every kernel sharing it
  // has the same sizes), so the compiler can fold the divisions of the index decomposition.
  KernelWriter(const Kernel& k, const std::string& symbol, const Dialect& d, Helpers& helpers,
               std::vector<int64_t>* params = nullptr, bool literal_params = false)
      : k_(k), symbol_(symbol), d_(d), helpers_(helpers), params_(params), literal_params_(literal_params),
        last_(k.domain.size() - 1), mapping_(thread_mapping(k, d)) {
    if (d.index_bits < 64) check_index_range();
    note_types();
    plan_streaming();
  }

  std::string write();

 private:
  const std::string& buffer_type(ScalarType t) const {
    return t == ScalarType::boolean ? d_.bool_buffer_type : d_.type(t);
  }

  // 32-bit indices: every offset the kernel computes must fit (the domain's flat index, each access).
  void check_index_range() const;

  // The types whose dialect requirements the module must meet: buffers (bool as its buffer type) and values.
  void note_types();
  std::vector<const std::vector<Instr>*> all_code() const;

  const std::string& idx() const { return d_.index_type; }
  void line(const std::string& s) { out_ += std::string(static_cast<size_t>(indent_) * 2, ' ') + s + "\n"; }
  void open(const std::string& s) {
    line(s.empty() ? "{" : s + " {");
    ++indent_;
  }
  void close() {
    --indent_;
    line("}");
  }
  void pragma(const std::string& p) {
    if (!p.empty()) out_ += p + "\n";
  }

  // Inside lane k of a vector step the innermost index is j + k.
  std::string var(size_t d) const {
    if (d != last_) return fmt::format("i{}", d);
    return lane_ > 0 ? fmt::format("(j + {})", lane_) : "j";
  }

  // A size in the code: a literal, or the next slot of P[] when writing a shared body.
  std::string num(int64_t v);
  std::string extent(size_t d) { return num(k_.domain[d]); }

  // The offset an access reads or writes. Shared bodies keep the innermost stride literal when it is
  // 0 or +-1 (what decides vectorisation) and take every other number from P[].
  std::string index(const Affine& a);

  // Row-major decomposition of `src` into the index variables of `dims` (outermost first).
  void decompose(const std::string& src, const std::vector<size_t>& dims);

  // The text an instruction is referred to by: literals inline, accumulators by name, others vN.
  std::string ref(const std::vector<Instr>& code, char prefix, int id) const;
  // vN, or vN_k for a value that varies along the innermost axis inside vector lane k.
  std::string value_name(const std::vector<Instr>& code, char prefix, size_t id) const;

  std::string expr(const std::vector<Instr>& code, char prefix, const Instr& in);

  enum class Part { All, Invariant, Variant };

  // Whether each instruction changes along the innermost loop (over the last axis): values that do
  // not are computed once before that loop (broadcast operands, scalars).
  const std::vector<bool>& variant(const std::vector<Instr>& code);

  void instrs(const std::vector<Instr>& code, char prefix, Part part = Part::All);
  // The invariant part of `code`, then the innermost loop over j in [lo, hi) opened (with the dialect's
  // loop pragma) and the variant part inside it; the caller adds the stores and closes the loop.
  void open_inner_loop(const std::vector<Instr>& code, char prefix, const std::string& lo, const std::string& hi);

  // A store's value; strict dialects convert bools to their buffer type.
  std::string stored(const std::vector<Instr>& code, char prefix, const lower::Store& s) const;

  void stores(const std::vector<lower::Store>& list, const std::vector<Instr>& code, char prefix);

  // --- streaming stores -------------------------------------------------------------------------
  int64_t buffer_bytes(const lower::Store& s) const {
    const ScalarType t = k_.output_types[static_cast<size_t>(s.output)];
    return t == ScalarType::boolean ? 1 : lower::scalar_bits(t) / 8;
  }

  // Streams the body stores that write contiguously along the innermost loop, when the kernel is
  // elementwise, its rows are long enough and the streamed outputs together reach the dialect's size.
  void plan_streaming();

  // The innermost loop over [lo, hi) in blocks whose ends are multiples of block_ (whole cache lines
  // of every output when rows start on a line): compute a block into the buffers, then copy it out.
  void streamed_inner_loop(const std::string& lo, const std::string& hi);

  // --- reductions -------------------------------------------------------------------------------
  bool tiled() const { return d_.schedule == Schedule::RowLoops && !k_.reduced[last_] && !k_.has_row_phase(); }
  std::string acc(size_t r) const { return tiled() ? fmt::format("a{}[j - jb]", r) : fmt::format("a{}", r); }
  std::string nan_flag(size_t r) const { return tiled() ? fmt::format("n{}[j - jb]", r) : fmt::format("n{}", r); }
  bool tracks_nan(size_t r) const {
    const auto& red = k_.reductions[r];
    return lower::is_float(red.acc_type) && (red.kind == ReduceKind::Max || red.kind == ReduceKind::Min);
  }
  std::string reduced_ref(size_t r) const;

  std::string identity(size_t r) const;

  // The reductions of the walk being written (walk_: 0 the body, k chained walk k).
  bool in_walk(size_t r) const { return k_.reductions[r].walk == walk_; }
  const std::vector<Instr>& walk_code() const {
    return walk_ == 0 ? k_.body : k_.chained[static_cast<size_t>(walk_ - 1)];
  }
  char walk_prefix() const { return walk_prefix(walk_); }
  static char walk_prefix(int walk);

  void accumulate();

  std::string simd_clauses() const;

  std::vector<size_t> dims_where(bool reduced) const;

  std::string range_loop(const std::string& v) const;

  // Splits the flat range [begin, end) of the axes up to the last one into rows: j0..j1 of the
  // last axis for one value of the others (decomposed from `row`).
  void open_rows(const std::vector<size_t>& outer);
  void close_rows() {
    line("flat += j1 - j0;");
    close();
  }

  void elementwise_rows();

  void elementwise_grid();

  // `unroll` elements per thread step, a grid stride apart (so a warp's accesses stay consecutive):
  // every load of all of them first, then the arithmetic and stores: more loads in flight per thread.
  void elementwise_grid_unrolled(int unroll);

  // Elementwise with whole vectors: each thread step takes `vector` consecutive elements of a row,
  // loads every contiguous buffer as one vector (16 bytes on CUDA), computes the lanes and stores
  // vectors; buffers whose addresses turn out misaligned take the scalar loop instead.
  void elementwise_vectors();

  // --- cooperative reductions (GridStride dialects with a warp) ----------------------------------
  void declare_accumulators();

  // --- row phase (row_phase.cpp) -------------------------------------------------------------
  void row_loops(bool hoist);
  void strided_row_loop(const std::string& first, int step);
  void share_through_tree(int lanes);
  void share_block_result(int warps);

  // This thread's share of one output's reduced elements: flat indices first, first + step, ...
  // (walk_ > 0: the chained walk's code, which stores nothing.)
  void strided_reduced_loop(const std::string& first, int step);

  // acc(r) = acc(r) (op) other, for every reduction; `flag` gives the other's NaN flag of reduction r.
  void combine(const std::function<std::string(size_t)>& other, const std::function<std::string(size_t)>& flag);

  std::string shuffled(ScalarType t, const std::string& v, int m) const;

  // Whether this kernel's lanes combine through the shared-memory tree.
  bool tree_lanes() const { return d_.lanes_through_shared && mapping_.group > 1; }

  // The tree's type for an accumulator of type t: bytes travel as int (as through shuffles).
  std::string slot_type(ScalarType t) const {
    return t == ScalarType::i8 || t == ScalarType::u8 ? d_.type(ScalarType::i32) : d_.type(t);
  }

  // One slot per thread of the block for each accumulator (and NaN flag), at module scope.
  void declare_tree_slots();
  // Each reduction of the walk's accumulator (and NaN flag) into its tree slot `slot`.
  void store_tree_slots(const std::string& slot);

  // Groups of `lanes` aligned threads through shared memory: at each level the lower half of a group
  // takes in the slot `m` above it (the butterfly's order, fixed whatever the device). Afterwards the
  // group's first thread holds its result. Every thread of the block must get here.
  void combine_lanes_in_tree(int lanes);

  // A butterfly over groups of `lanes` aligned lanes: afterwards each lane holds its group's result
  // (through shared memory: the group's first lane).
  void combine_lanes(int lanes);

  // A row kernel may store nothing per kept element.
  bool has_epilogue() const { return !k_.epilogue_stores.empty(); }

  void epilogue_part() {
    instrs(k_.epilogue, 'e');
    stores(k_.epilogue_stores, k_.epilogue, 'e');
  }

  // A group of `group` lanes of one warp per output. The loop over outputs steps a whole warp at a
  // time, so every lane reaches the shuffles (lanes past the end add nothing and store nothing).
  void reduction_per_lanes();

  // The block-wide combine of reduction_per_block: afterwards thread 0 holds the block's result.
  void combine_block(int warps);

  void declare_block_shared(int warps);

  // `split` blocks per output, each over one chunk of the reduced range; the last block to finish
  // an output (its counter) combines the partials in block order and runs the epilogue.
  void reduction_split_blocks();

  // One block per output: lanes combine within each warp, warps through shared memory.
  void reduction_per_block();


  void reduction_per_output();

  void reduction_tiles();

  const Kernel& k_;
  const std::string& symbol_;
  const Dialect& d_;
  Helpers& helpers_;
  std::vector<int64_t>* params_;
  bool literal_params_ = false;
  std::map<const std::vector<Instr>*, std::vector<bool>> variant_;
  size_t last_;
  ThreadMapping mapping_;
  int lane_ = -1;                                         // vector lane being written, -1 outside vector steps
  std::map<const Instr*, std::string> vector_loads_;      // loads of whole vectors, by the variable holding them
  std::map<const Instr*, std::string> element_loads_;     // loads made ahead, by the array element holding them
  std::vector<bool> vector_stores_;                       // per body store: written as whole vectors
  std::vector<bool> streamed_;  // per body store: written through a block buffer and stream_store_fn
  int64_t block_ = 0;           // elements per streamed block; 0: the kernel writes directly
  std::string out_;
  int indent_ = 0;
  int tree_level_ = 0;  // names of combine_lanes_in_tree's local index, one per use
  int walk_ = 0;        // the walk whose reductions accumulate() and the combines take (0: the body's)
};

}  // namespace tessera::codegen::detail
