#pragma once
// The loop IR: one fused kernel as a rectangular iteration domain, straight-line scalar code per
// domain element (the body), optional reductions over some domain axes, scalar code per kept
// element after the reductions (the epilogue) and, for row kernels, a second walk over each kept
// element's reduced elements that uses the finished reductions (the row phase). Every buffer is contiguous; an access is an affine
// function of the domain indices, so broadcasting (stride 0), permuted and sliced reads are index
// math, never copies. Emitters (tessera/codegen) turn a Kernel into C, CUDA C, ... text.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/dtype.h"
#include "tessera/lower/fusion.h"

namespace tessera::lower {

// Scalar types of the generated code: the storable dtypes plus unsigned helpers for wrapping
// integer arithmetic and 64-bit accumulators. f16 and bf16 are storage types only: a value of
// either is its 16 bits as loaded or about to be stored; Convert to f32 (exact) and from f32 (round
// to nearest even) are the only operations on them, so arithmetic happens in f32.
enum class ScalarType : uint8_t { f32, f64, i8, u8, i32, u32, i64, u64, boolean, f16, bf16 };
inline constexpr int kNumScalarTypes = 11;

ScalarType scalar_type_of(DType dt);
const char* scalar_type_name(ScalarType t);  // "f32", "u64", "bool"
bool is_float(ScalarType t);                 // f32, f64: the types arithmetic and math calls take
bool is_half(ScalarType t);                  // f16, bf16
bool is_signed_int(ScalarType t);
bool is_unsigned_int(ScalarType t);  // u8, u32, u64 (not bool)
int scalar_bits(ScalarType t);
ScalarType unsigned_of(ScalarType t);  // i8/u8 -> u32 (C promotes narrower types), i32 -> u32, i64 -> u64

// c + sum_d coef[d] * i_d over the domain indices.
struct Affine {
  int64_t constant = 0;
  std::vector<int64_t> coef;
  bool operator==(const Affine& o) const { return constant == o.constant && coef == o.coef; }
};

enum class Op : uint8_t {
  Load,     // buffer[access]
  Literal,  // fval (floats) or ival (integers, bool)
  Convert,  // value conversion as tessera::convert_element: float -> int saturates (NaN -> 0), x -> bool is x != 0
  Cast,     // plain C cast (integer wrap-around, signed <-> unsigned)
  Neg,
  Not,  // logical not of a bool
  Add,
  Sub,
  Mul,
  Div,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  And,  // logical, bool operands
  Or,
  Select,  // args[0] ? args[1] : args[2]
  Call,    // math function `fn` of args[0] (and args[1] for pow)
  IsNan,
  IsInf,
  Reduced,  // epilogue and row phase only: the finished value of reduction `ival`
  Index,    // the i64 value of `access` at the current domain element: arange's values, computed not loaded
};

// Load and Index carry an affine `access` of the domain indices (rewritten with the domain, bounded by the
// dialect's index width).
inline bool has_access(Op op) { return op == Op::Load || op == Op::Index; }

enum class MathFn : uint8_t { exp, expm1, log, log1p, sqrt, sin, cos, tanh, erf, floor, ceil, nearbyint, fabs, pow };
inline constexpr int kNumMathFns = 14;
const char* math_fn_name(MathFn fn);

struct Instr {
  Op op = Op::Literal;
  ScalarType type = ScalarType::f32;  // the result's type
  std::array<int32_t, 3> args{-1, -1, -1};
  MathFn fn = MathFn::exp;
  int32_t buffer = -1;  // Load: input index
  Affine access;        // Load, Index
  double fval = 0;      // Literal of a float type
  int64_t ival = 0;     // Literal of an integer/bool type (u64 as its bit pattern); Reduced: reduction index
};

enum class ReduceKind : uint8_t { Sum, Prod, Max, Min };
const char* reduce_kind_name(ReduceKind k);

struct Reduction {
  ReduceKind kind = ReduceKind::Sum;
  ScalarType acc_type = ScalarType::f64;  // the body value is already of this type
  int32_t value = -1;                     // instruction of its walk's code: the body, or chained[walk - 1]
  int32_t walk = 0;                       // 0: accumulated by the body; k: by chained walk k (a row kernel)
};

struct Store {
  int32_t output = -1;
  int32_t value = -1;  // instruction of the phase the store belongs to
  Affine access;
};

// One loop kernel. `domain` has at least one axis; `reduced` marks the reduced axes. The kernel's
// range unit is one domain element without reductions, one kept element (output element) with them.
//
// A row kernel (RMSNorm's x * rsqrt(mean(x^2) + eps) * w) also has a row phase: after a kept
// element's reductions and epilogue, its reduced elements are walked again and `row` runs per
// domain element, reading the finished reductions (Op::Reduced) and loading its inputs afresh (the
// row is read twice; the second time from cache), to store outputs of the domain's size. The
// reduced axes of a row kernel are the innermost ones, so that a kept element's row is contiguous
// in the domain and one thread, or one group of threads, owns it.
//
// A reduction whose value uses another's finished result (softmax's sum of exp(x - max), LayerNorm's
// variance around the mean) is accumulated by a chained walk: chained[k - 1] runs per domain element
// after the reductions of walks before k are finished (reading them with Op::Reduced), feeding the
// reductions of walk k. The body is walk 0; the epilogue and the row phase follow the last walk.
struct Kernel {
  std::string name;
  std::vector<ScalarType> input_types;
  std::vector<ScalarType> output_types;
  std::vector<bool> input_used;  // inputs folded into literals (scalar constants, full) are not read
  std::vector<int64_t> domain;
  std::vector<bool> reduced;
  std::vector<Instr> body;
  std::vector<Store> body_stores;
  std::vector<Reduction> reductions;
  std::vector<Instr> epilogue;
  std::vector<Store> epilogue_stores;
  std::vector<std::vector<Instr>> chained;
  std::vector<Instr> row;
  std::vector<Store> row_stores;

  bool has_reduction() const { return !reductions.empty(); }
  // Whether the kernel walks its rows again after the body: a row phase or chained reductions.
  bool has_row_phase() const { return !row_stores.empty() || !chained.empty(); }
  int64_t range() const;          // number of range units
  int64_t work_per_unit() const;  // domain elements per range unit
};

// Lowers a cluster (as find_clusters makes them) to a kernel; throws tessera::Error when the cluster
// cannot be expressed (the message says why). Inputs and outputs keep the cluster's order.
Kernel build_loop_kernel(const Cluster& cluster, const std::string& name = "kernel");

// Readable text form, for tests and TESSERA_DUMP_KERNELS.
std::string print_kernel(const Kernel& kernel);

}  // namespace tessera::lower
