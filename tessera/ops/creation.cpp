// Tensors made from nothing but attributes: full, arange, eye. They are graph nodes (not baked
// constants) so that graphs stay small and backends can generate them in place.
#include <cmath>

#include "tessera/ir/op_def.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/register.h"

namespace tessera::ops {

namespace {
using ir::Attrs;
using ir::TensorType;

int64_t arange_count(double start, double stop, double step) {
  TESSERA_CHECK(step != 0.0 && std::isfinite(step), "arange: step must be finite and non-zero, got {}", step);
  TESSERA_CHECK(std::isfinite(start) && std::isfinite(stop), "arange: start and stop must be finite");
  const double n = std::ceil((stop - start) / step);
  TESSERA_CHECK(n < 4e18, "arange: {} elements is too many", n);
  return n > 0 ? static_cast<int64_t>(n) : 0;
}
}  // namespace

// Whether `value` is exactly representable in the integer (or bool) dtype `dt`.
static bool fits_integer(double value, DType dt) {
  if (value != std::floor(value) || !std::isfinite(value)) return false;
  switch (dt) {
    case DType::boolean: return value == 0.0 || value == 1.0;
    case DType::u8: return value >= 0 && value <= 255;
    case DType::i8: return value >= -128 && value <= 127;
    case DType::i32: return value >= -2147483648.0 && value <= 2147483647.0;
    case DType::i64: return value >= -9223372036854775808.0 && value < 9223372036854775808.0;
    default: return true;
  }
}

Tensor scalar_like(const Tensor& like, double value) {
  // A scalar that the tensor's integer dtype cannot hold widens (i64 for whole numbers, else f32)
  // rather than being squeezed into it; promotion then gives an exact result.
  DType dt = like.dtype();
  if (dt == DType::boolean) dt = DType::i64;  // bool + 1 counts, as in NumPy and PyTorch
  if (!is_floating(dt) && !fits_integer(value, dt)) {
    dt = fits_integer(value, DType::i64) ? DType::i64 : (std::isfinite(value) && value != std::floor(value) ? DType::f32 : DType::f64);
  }
  return Tensor::from_array(Array::scalar(value, dt));
}

Tensor full(const Shape& shape, double value, DType dtype) {
  return ir::make_node1("full", {}, Attrs{{"shape", shape}, {"value", value}, {"dtype", dtype}});
}
Tensor zeros(const Shape& shape, DType dtype) { return full(shape, 0.0, dtype); }
Tensor ones(const Shape& shape, DType dtype) { return full(shape, 1.0, dtype); }
Tensor full_like(const Tensor& like, double value) { return full(like.shape(), value, like.dtype()); }
Tensor zeros_like(const Tensor& like) { return full_like(like, 0.0); }
Tensor ones_like(const Tensor& like) { return full_like(like, 1.0); }

Tensor arange(double start, double stop, double step, DType dtype) {
  return ir::make_node1("arange", {}, Attrs{{"start", start}, {"stop", stop}, {"step", step}, {"dtype", dtype}});
}
Tensor arange(int64_t n, DType dtype) { return arange(0.0, static_cast<double>(n), 1.0, dtype); }

Tensor eye(int64_t n, int64_t m, int64_t k, DType dtype) {
  return ir::make_node1("eye", {}, Attrs{{"n", n}, {"m", m < 0 ? n : m}, {"k", k}, {"dtype", dtype}});
}

void register_creation_ops(ir::OpRegistry& r) {
  r.add(ir::OpDef{
      .name = "full",
      .attrs = {{"shape", ir::AttrKind::Ints}, {"value", ir::AttrKind::Float}, {"dtype", ir::AttrKind::DType}},
      .traits = ir::kFusable,
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        for (int64_t d : a.get_ints("shape")) {
          if (d < 0) ir::op_fail("full", in, "negative dimension in shape {}", shape_str(a.get_ints("shape")));
        }
        const DType dt = a.get_dtype("dtype");
        // Fractions truncate toward zero (as numpy.full); values out of the dtype's range are errors.
        if (is_integral(dt) && !fits_integer(std::trunc(a.get_float("value")), dt)) {
          ir::op_fail("full", in, "value {} is not representable in {}", a.get_float("value"), dtype_name(dt));
        }
        return {{a.get_dtype("dtype"), a.get_ints("shape")}};
      },
      .reference = [](const std::vector<Array>&, const Attrs& a, const std::vector<TensorType>& out)
          -> std::vector<Array> { return {Array::full(out[0].dtype, out[0].shape, a.get_float("value"))}; },
  });
  r.add(ir::OpDef{
      .name = "arange",
      .attrs = {{"start", ir::AttrKind::Float},
                {"stop", ir::AttrKind::Float},
                {"step", ir::AttrKind::Float},
                {"dtype", ir::AttrKind::DType}},
      .infer = [](const std::vector<TensorType>&, const Attrs& a) -> std::vector<TensorType> {
        return {{a.get_dtype("dtype"),
                 {arange_count(a.get_float("start"), a.get_float("stop"), a.get_float("step"))}}};
      },
      .reference = [](const std::vector<Array>&, const Attrs& a, const std::vector<TensorType>& out)
          -> std::vector<Array> {
        Array o = Array::empty(out[0].dtype, out[0].shape);
        const double start = a.get_float("start"), step = a.get_float("step");
        dispatch_dtype(o.dtype(), [&](auto tag) {
          using T = decltype(tag);
          T* p = o.data<T>();
          for (int64_t i = 0; i < o.numel(); ++i) p[i] = convert_element<T>(start + static_cast<double>(i) * step);
        });
        return {o};
      },
  });
  r.add(ir::OpDef{
      .name = "eye",
      .attrs = {{"n", ir::AttrKind::Int}, {"m", ir::AttrKind::Int}, {"k", ir::AttrKind::Int}, {"dtype", ir::AttrKind::DType}},
      .infer = [](const std::vector<TensorType>& in, const Attrs& a) -> std::vector<TensorType> {
        if (a.get_int("n") < 0 || a.get_int("m") < 0) {
          ir::op_fail("eye", in, "sizes must be non-negative, got n={} m={}", a.get_int("n"), a.get_int("m"));
        }
        return {{a.get_dtype("dtype"), {a.get_int("n"), a.get_int("m")}}};
      },
      .reference = [](const std::vector<Array>&, const Attrs& a, const std::vector<TensorType>& out)
          -> std::vector<Array> {
        Array o = Array::zeros(out[0].dtype, out[0].shape);
        const int64_t n = a.get_int("n"), m = a.get_int("m"), k = a.get_int("k");
        dispatch_dtype(o.dtype(), [&](auto tag) {
          using T = decltype(tag);
          T* p = o.data<T>();
          for (int64_t i = 0; i < n; ++i) {
            if (i + k >= 0 && i + k < m) p[i * m + i + k] = convert_element<T>(1.0);
          }
        });
        return {o};
      },
  });
}

}  // namespace tessera::ops
