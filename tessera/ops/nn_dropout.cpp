// Dropout: x * bernoulli(1 - p) / (1 - p) while training, the identity otherwise. The mask is a
// random node drawn from the caller's generator, so a seed reproduces it on every backend.
#include "tessera/ir/op_def.h"
#include "tessera/ir/origin.h"
#include "tessera/ops/ops.h"

namespace tessera::ops {

Tensor dropout(const Tensor& x, double p, bool training, Generator& generator) {
  const ir::OriginScope origin("ops::dropout");
  if (!is_floating(x.dtype())) {
    ir::op_fail("dropout", {x.type()}, "expected a floating input, got {}", dtype_name(x.dtype()));
  }
  if (!(p >= 0.0 && p <= 1.0)) ir::op_fail("dropout", {x.type()}, "p must be in [0, 1], got {}", p);
  if (!training || p == 0.0) return x;
  // Everything dropped: x * 0 keeps NaN/inf propagation and a (zero) gradient, as in PyTorch.
  if (p == 1.0) return x * 0.0;
  // The keep probability is drawn in f32 at least, so that 1 - p is not rounded to f16/bf16 first.
  const DType mask_dtype = x.dtype() == DType::f64 ? DType::f64 : DType::f32;
  const Tensor keep = cast(bernoulli(full(x.shape(), 1.0 - p, mask_dtype), generator), x.dtype());
  return x * keep * (1.0 / (1.0 - p));
}

Tensor dropout(const Tensor& x, double p, bool training) {
  return dropout(x, p, training, default_generator());
}

}  // namespace tessera::ops
