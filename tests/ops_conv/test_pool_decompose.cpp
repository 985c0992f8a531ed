// The sliding pools decomposed (pool_decompose.cpp) against their reference kernels: 1d/2d/3d,
// strides 1-3, padding, dilation, ceil mode with partial last windows, count_include_pad, inputs
// whose trailing elements no window reads, ties (inputs of few distinct integers: the gradient must go
// to the first maximum in row-major order, exactly), NaN, integer inputs, f64/f32/bf16.
#include "decompose_check.h"
#include "helpers.h"

using namespace tessera;
using namespace tessera::test;

namespace {

struct PoolCase {
  Shape x;
  std::vector<int64_t> kernel, stride, padding, dilation;
  bool ceil_mode = false;

  ir::Attrs max_attrs() const {
    return {
        {"kernel", kernel}, {"stride", stride}, {"padding", padding}, {"dilation", dilation}, {"ceil_mode", ceil_mode}};
  }
  ir::Attrs avg_attrs(bool count_include_pad) const {
    return {{"kernel", kernel},
            {"stride", stride},
            {"padding", padding},
            {"count_include_pad", count_include_pad},
            {"ceil_mode", ceil_mode}};
  }
  bool dilated() const {
    return std::any_of(dilation.begin(), dilation.end(), [](int64_t d) { return d != 1; });
  }
};

const std::vector<PoolCase>& pool_cases() {
  static const std::vector<PoolCase> c = {
      {{2, 3, 10}, {3}, {2}, {1}, {1}, false},
      {{2, 3, 10}, {3}, {2}, {1}, {1}, true},
      {{2, 2, 11}, {2}, {3}, {1}, {2}, true},
      {{2, 3, 8, 8}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false},  // the CNN's pooling
      {{2, 3, 7, 9}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false},  // row 6 and column 8 are read by no window
      {{2, 3, 7, 9}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, true},   // ceil mode: partial last windows
      {{1, 2, 7, 6}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true},   // last row window starts in the input, ends in padding
      {{1, 2, 6, 6}, {3, 3}, {2, 2}, {0, 0}, {1, 1}, true},   // last window past the input without padding
      {{2, 2, 9, 8}, {3, 2}, {3, 1}, {1, 1}, {2, 1}, false},
      {{1, 2, 8, 7}, {4, 3}, {1, 3}, {2, 1}, {1, 1}, true},
      {{1, 2, 5, 6, 7}, {2, 3, 2}, {2, 2, 1}, {1, 1, 0}, {1, 1, 1}, true},
      {{1, 1, 4, 5, 6}, {2, 2, 3}, {1, 2, 3}, {0, 1, 1}, {2, 1, 1}, false},
  };
  return c;
}

const Precision kPoolPrecisions[] = {{DType::f64, 1e-12}, {DType::f32, 1e-5}, {DType::bf16, 1e-2}};

std::string describe_pool(const PoolCase& c) {
  return fmt::format("x {} kernel {} stride {} padding {} dilation {} ceil {}", shape_str(c.x), shape_str(c.kernel),
                     shape_str(c.stride), shape_str(c.padding), shape_str(c.dilation), c.ceil_mode);
}

Shape pooled(const ir::Graph& g) {
  return g.outputs()[0].shape();
}

void check(const ir::Graph& g, const std::vector<Array>& inputs, double rtol, DType dtype) {
  const ir::Graph d = expect_decomposition_matches(g, inputs, rtol);
  if (dtype == DType::f32) expect_cuda_keeps_all(d);
}

// Inputs of three distinct values put ties in most windows; the pooled value is exact.
TEST(PoolDecompose, MaxPoolWithTies) {
  for (const PoolCase& c : pool_cases()) {
    for (const Precision& p : kPoolPrecisions) {
      SCOPED_TRACE(describe_pool(c) + " " + dtype_name(p.dtype));
      const ir::Graph g = one_op_graph("max_pool", {{p.dtype, c.x}}, c.max_attrs());
      check(g, {int_array(c.x, 1, 3, p.dtype)}, 0.0, p.dtype);
      check(g, {random_array(c.x, 2, -1, 1, p.dtype)}, 0.0, p.dtype);
    }
  }
}

// The gradient goes to the first maximum in row-major order: exact with integer cotangents (sums of
// a few integers are exact in every dtype, whatever the order).
TEST(PoolDecompose, MaxPoolGradGoesToTheFirstMaximum) {
  for (const PoolCase& c : pool_cases()) {
    for (const Precision& p : kPoolPrecisions) {
      SCOPED_TRACE(describe_pool(c) + " " + dtype_name(p.dtype));
      const Shape out = pooled(one_op_graph("max_pool", {{p.dtype, c.x}}, c.max_attrs()));
      const ir::Graph g = one_op_graph("max_pool_grad", {{p.dtype, c.x}, {p.dtype, out}}, c.max_attrs());
      for (int levels : {2, 3, 1000}) {
        check(g, {int_array(c.x, 3 + levels, levels, p.dtype), int_array(out, 4, 7, p.dtype)}, 0.0, p.dtype);
      }
      check(g, {random_array(c.x, 5, -1, 1, p.dtype), random_array(out, 6, -1, 1, p.dtype)}, p.rtol, p.dtype);
    }
  }
}

TEST(PoolDecompose, MaxPoolGatherReadsTheFirstMaximum) {
  for (const PoolCase& c : pool_cases()) {
    for (const Precision& p : kPoolPrecisions) {
      SCOPED_TRACE(describe_pool(c) + " " + dtype_name(p.dtype));
      const ir::Graph g = one_op_graph("max_pool_gather", {{p.dtype, c.x}, {p.dtype, c.x}}, c.max_attrs());
      check(g, {int_array(c.x, 7, 3, p.dtype), random_array(c.x, 8, -1, 1, p.dtype)}, 0.0, p.dtype);
    }
  }
}

// NaN wins over numbers (the first NaN gets the gradient), -inf inputs tie with the padding, and
// integer inputs pad with their lowest value.
TEST(PoolDecompose, MaxPoolSpecialValuesAndIntegers) {
  const PoolCase c = {{1, 2, 7, 6}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true};
  std::vector<double> v = int_array(c.x, 9, 4, DType::f64).to_f64();
  const double inf = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < v.size(); i += 5) v[i] = std::nan("");
  for (size_t i = 2; i < v.size(); i += 7) v[i] = -inf;
  for (size_t i = 0; i < 12; ++i) v[i] = -inf;  // the whole first row: windows of -inf only
  const Array x = Array::from_vector(v, c.x).astype(DType::f32);
  const Shape out = pooled(one_op_graph("max_pool", {{DType::f32, c.x}}, c.max_attrs()));
  check(one_op_graph("max_pool", {{DType::f32, c.x}}, c.max_attrs()), {x}, 0.0, DType::f32);
  check(one_op_graph("max_pool_grad", {{DType::f32, c.x}, {DType::f32, out}}, c.max_attrs()),
        {x, int_array(out, 10, 5, DType::f32)}, 0.0, DType::f32);
  for (DType dt : {DType::i32, DType::i64, DType::i8, DType::u8}) {
    SCOPED_TRACE(dtype_name(dt));
    const Array xi = int_array(c.x, 11, 3, DType::f64).astype(dt);
    expect_decomposition_matches(one_op_graph("max_pool", {{dt, c.x}}, c.max_attrs()), {xi}, 0.0);
    expect_decomposition_matches(one_op_graph("max_pool_grad", {{dt, c.x}, {DType::f32, out}}, c.max_attrs()),
                                 {xi, int_array(out, 12, 5, DType::f32)}, 0.0);
  }
}

TEST(PoolDecompose, AvgPool) {
  for (const PoolCase& c : pool_cases()) {
    if (c.dilated()) continue;  // avg_pool has no dilation
    for (const Precision& p : kPoolPrecisions) {
      for (bool include_pad : {false, true}) {
        SCOPED_TRACE(describe_pool(c) + " " + dtype_name(p.dtype) + (include_pad ? " count_include_pad" : ""));
        const ir::Graph g = one_op_graph("avg_pool", {{p.dtype, c.x}}, c.avg_attrs(include_pad));
        check(g, {random_array(c.x, 13, -1, 1, p.dtype)}, p.rtol, p.dtype);
      }
    }
  }
}

TEST(PoolDecompose, AvgPoolGrad) {
  for (const PoolCase& c : pool_cases()) {
    if (c.dilated()) continue;
    for (const Precision& p : kPoolPrecisions) {
      for (bool include_pad : {false, true}) {
        SCOPED_TRACE(describe_pool(c) + " " + dtype_name(p.dtype) + (include_pad ? " count_include_pad" : ""));
        const Shape out = pooled(one_op_graph("avg_pool", {{p.dtype, c.x}}, c.avg_attrs(include_pad)));
        ir::Attrs attrs = c.avg_attrs(include_pad);
        attrs.set("input_size", Shape(c.x.end() - static_cast<std::ptrdiff_t>(c.kernel.size()), c.x.end()));
        const ir::Graph g = one_op_graph("avg_pool_grad", {{p.dtype, out}}, attrs);
        check(g, {random_array(out, 14, -1, 1, p.dtype)}, p.rtol, p.dtype);
      }
    }
  }
}

// Pooling over fewer axes than the input has after the batch: every leading axis is a batch axis.
TEST(PoolDecompose, LeadingAxesAreBatchAxes) {
  const PoolCase c = {{2, 3, 4, 9}, {3}, {2}, {1}, {1}, true};
  check(one_op_graph("max_pool", {{DType::f32, c.x}}, c.max_attrs()), {int_array(c.x, 15, 3, DType::f32)}, 0.0,
        DType::f32);
  check(one_op_graph("avg_pool", {{DType::f32, c.x}}, c.avg_attrs(false)), {random_array(c.x, 16, -1, 1, DType::f32)},
        1e-5, DType::f32);
}

}  // namespace
