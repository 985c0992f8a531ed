#pragma once
// The SSA emission context: numbers values (%0, %1, ...), writes one op per line in the StableHLO
// pretty form (the generic form for ops with regions or dimension-number attributes), and offers
// typed builders so that lowerings read like the math they implement. Every builder checks what it
// can about its operands' types, so a lowering bug fails at export time with the op named rather
// than producing text that XLA rejects.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/array.h"
#include "tessera/io/stablehlo/text.h"

namespace tessera::io::stablehlo {

// One SSA value: its name and its type (element type as MLIR spells it, and shape).
struct Val {
  std::string name;
  std::string elem;
  Shape shape;
  std::string type() const { return tensor_type(elem, shape); }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numel() const { return shape_numel(shape); }
  bool is_float() const { return is_float_element(elem); }
};

enum class Cmp { EQ, NE, LT, LE, GT, GE };

class Emitter {
 public:
  explicit Emitter(bool highest_precision = false) : highest_(highest_precision) {}

  bool highest_precision() const { return highest_; }
  const std::vector<std::string>& lines() const { return lines_; }
  // Fresh value names; block arguments of regions draw from the same counter, so every name in a
  // function is unique.
  std::string fresh() { return "%" + std::to_string(next_++); }

  // --- raw emission ---------------------------------------------------------------------------
  // `%N = <body>` with one result of the given type; `body` must end with the op's type signature.
  Val op(const std::string& body, const std::string& elem, const Shape& shape);
  // `%N:k = <body>` with several results, returned as %N#0 ... %N#k-1.
  std::vector<Val> op_multi(const std::string& body, const std::vector<std::pair<std::string, Shape>>& results);
  void line(const std::string& text) { lines_.push_back(std::string(static_cast<size_t>(indent_), ' ') + text); }

  // A generic op with one region of one block: `head` is `"stablehlo.x"(%a, %b) <{...}>`, the block
  // takes arguments of the given scalar element types, `body` emits the block and returns the values
  // for stablehlo.return, and `signature` is the op's trailing `(...) -> ...` type.
  using RegionBody = std::function<std::vector<Val>(Emitter& e, const std::vector<Val>& args)>;
  std::vector<Val> region_op(const std::string& head, const std::vector<std::string>& block_elems,
                             const RegionBody& body, const std::string& signature,
                             const std::vector<std::pair<std::string, Shape>>& results);

  // --- constants ----------------------------------------------------------------------------------
  Val constant(const Array& value, int64_t max_list_elements = 1024);
  // A constant of `shape` filled with `value` converted to `elem` (Tessera's conversion rules).
  Val splat(double value, const std::string& elem, const Shape& shape = {});
  Val splat_bits(uint64_t value, const std::string& elem, const Shape& shape = {});  // unsigned integers
  Val splat_like(const Val& like, double value) { return splat(value, like.elem, like.shape); }
  Val iota(const std::string& elem, const Shape& shape, int64_t dim);

  // --- elementwise ------------------------------------------------------------------------------
  Val unary(const std::string& op, const Val& x);                 // "stablehlo.exponential"
  Val binary(const std::string& op, const Val& a, const Val& b);  // operands of one type
  Val add(const Val& a, const Val& b) { return binary("stablehlo.add", a, b); }
  Val sub(const Val& a, const Val& b) { return binary("stablehlo.subtract", a, b); }
  Val mul(const Val& a, const Val& b) { return binary("stablehlo.multiply", a, b); }
  Val div(const Val& a, const Val& b) { return binary("stablehlo.divide", a, b); }
  Val max(const Val& a, const Val& b) { return binary("stablehlo.maximum", a, b); }
  Val min(const Val& a, const Val& b) { return binary("stablehlo.minimum", a, b); }
  Val logical_and(const Val& a, const Val& b) { return binary("stablehlo.and", a, b); }
  Val logical_or(const Val& a, const Val& b) { return binary("stablehlo.or", a, b); }
  Val logical_xor(const Val& a, const Val& b) { return binary("stablehlo.xor", a, b); }
  Val shift_right(const Val& a, const Val& b) { return binary("stablehlo.shift_right_logical", a, b); }
  Val shift_left(const Val& a, const Val& b) { return binary("stablehlo.shift_left", a, b); }
  Val compare(Cmp dir, const Val& a, const Val& b);
  Val select(const Val& cond, const Val& on_true, const Val& on_false);
  Val is_nan(const Val& x) { return compare(Cmp::NE, x, x); }

  // Conversion with Tessera's semantics (convert_element): float -> integer truncates toward zero,
  // saturates and maps NaN to 0; anything -> bool is "not zero"; f64/i32/i64 -> f16/bf16 round via f32.
  Val convert(const Val& x, const std::string& elem);
  Val convert(const Val& x, DType dt) { return convert(x, element_type(dt)); }
  Val raw_convert(const Val& x, const std::string& elem);  // a plain stablehlo.convert
  Val bitcast(const Val& x, const std::string& elem);      // same width, same shape

  // --- shape --------------------------------------------------------------------------------------
  Val broadcast_in_dim(const Val& x, const Shape& shape, const std::vector<int64_t>& dims);
  Val broadcast_to(const Val& x, const Shape& shape);             // NumPy rules (trailing axes align)
  Val reshape(const Val& x, const Shape& shape);                  // no-op when the shape is already right
  Val transpose(const Val& x, const std::vector<int64_t>& perm);  // no-op for the identity
  Val slice(const Val& x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
            const std::vector<int64_t>& strides = {});
  // x[start:start+size] along one axis, everything along the others.
  Val slice_axis(const Val& x, int64_t axis, int64_t start, int64_t limit, int64_t stride = 1);
  Val concatenate(const std::vector<Val>& xs, int64_t dim);
  Val pad(const Val& x, const Val& value, const std::vector<int64_t>& low, const std::vector<int64_t>& high,
          const std::vector<int64_t>& interior);
  Val reverse(const Val& x, const std::vector<int64_t>& dims);

  // --- reductions -------------------------------------------------------------------------------
  // reduce(x, init) over `dims` with a body that applies one binary op (printed as `applies op`).
  Val reduce(const Val& x, const Val& init, const std::vector<int64_t>& dims, const std::string& body_op);
  // Variadic reduce with a custom body; returns one value per input.
  std::vector<Val> reduce_multi(const std::vector<Val>& xs, const std::vector<Val>& inits,
                                const std::vector<int64_t>& dims, const RegionBody& body);
  struct Window {
    std::vector<int64_t> dims, strides, dilations;
    std::vector<std::pair<int64_t, int64_t>> padding;
  };
  std::vector<Val> reduce_window(const std::vector<Val>& xs, const std::vector<Val>& inits, const Window& w,
                                 const RegionBody& body);
  Val reduce_window(const Val& x, const Val& init, const Window& w, const std::string& body_op);

  // --- indexing -----------------------------------------------------------------------------------
  // Gathers one element per index tuple: `coords` is [..., rank(x)] (index_vector_dim last), the
  // result has coords' shape without its last axis.
  Val gather_elements(const Val& x, const Val& coords);
  // Adds `updates` (coords' shape without the last axis) into x at each index tuple.
  Val scatter_add_elements(const Val& x, const Val& coords, const Val& updates);
  // Whole slices along `axis` picked by a 1-D index (index_select), and its transpose (index_add).
  Val take_along(const Val& x, const Val& index, int64_t axis);
  Val add_along(const Val& x, const Val& index, const Val& updates, int64_t axis);

  // --- products ------------------------------------------------------------------------------------
  Val dot_general(const Val& a, const Val& b, const std::vector<int64_t>& a_batch, const std::vector<int64_t>& b_batch,
                  const std::vector<int64_t>& a_contract, const std::vector<int64_t>& b_contract, bool highest);
  struct ConvSpec {
    std::string lhs, rhs, out;  // "b, f, 0, 1" / "o, i, 0, 1" / "b, f, 0, 1"
    std::vector<int64_t> stride, lhs_dilation, rhs_dilation;
    std::vector<std::pair<int64_t, int64_t>> padding;
    int64_t feature_groups = 1, batch_groups = 1;
    bool highest = false;
  };
  Val convolution(const Val& lhs, const Val& rhs, const ConvSpec& spec, const Shape& out_shape);

  Val sort_by_key(const Val& keys, const Val& values, int64_t dim);  // stable, ascending keys
  Val erf(const Val& x);                                             // chlo.erf

 private:
  bool highest_;
  int64_t next_ = 0;
  int indent_ = 4;
  std::vector<std::string> lines_;
};

std::string cmp_name(Cmp c);
std::string compare_type(const std::string& elem);  // FLOAT, SIGNED or UNSIGNED

}  // namespace tessera::io::stablehlo
