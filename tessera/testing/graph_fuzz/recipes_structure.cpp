// Recipes for shapes and views (reshape, permute, broadcast, strided slices, flips, splits, concat,
// padding), indexing (gather, index_select, scatter_add, one_hot, embedding), creation ops and the
// counter-based random ops.
#include <algorithm>
#include <numeric>

#include "tessera/ops/ops.h"
#include "tessera/testing/graph_fuzz/builder.h"

namespace tessera::testing::fuzz {
namespace {

// Any value of the pool (or a fresh float), for ops that work on every dtype.
Candidate any_operand(Builder& b, int min_rank = 0) {
  if (b.chance(0.85)) {
    auto c = b.pick([&](const Candidate& x) { return x.rank() >= min_rank; });
    if (c) return *c;
  }
  return b.fresh_float(b.shape(min_rank, 4), b.float_dtype());
}

void keep(Builder& b, const Tensor& y, const Candidate& x) {
  b.add(y, x.f);
}

void reshape(Builder& b) {
  const Candidate x = any_operand(b);
  int64_t n = x.t.numel();
  Shape s;
  if (n == 0) {
    s = {0, b.integer(1, 3)};
  } else {
    // A random factorisation of n, with size-1 axes sprinkled in.
    while (n > 1 && s.size() < 4) {
      std::vector<int64_t> divisors;
      for (int64_t d = 2; d <= n; ++d) {
        if (n % d == 0) divisors.push_back(d);
      }
      const int64_t d = b.choose(divisors);
      s.push_back(d);
      n /= d;
      if (b.chance(0.15)) s.push_back(1);
    }
    if (n > 1) s.back() *= n;
    std::shuffle(s.begin(), s.end(), std::mt19937_64(static_cast<uint64_t>(b.integer(0, 1 << 20))));
    if (b.chance(0.3) && !s.empty()) s[static_cast<size_t>(b.integer(0, static_cast<int64_t>(s.size()) - 1))] = -1;
  }
  keep(b, ops::reshape(x.t, s), x);
}

void permute(Builder& b) {
  const Candidate x = any_operand(b, 2);
  std::vector<int64_t> axes(static_cast<size_t>(x.rank()));
  std::iota(axes.begin(), axes.end(), 0);
  std::shuffle(axes.begin(), axes.end(), std::mt19937_64(static_cast<uint64_t>(b.integer(0, 1 << 20))));
  if (b.chance(0.3)) {
    keep(b, ops::transpose(x.t), x);
    return;
  }
  keep(b, ops::permute(x.t, axes), x);
}

void broadcast(Builder& b) {
  const Candidate x = any_operand(b);
  Shape s = x.shape();
  for (int64_t& d : s) {
    if (d == 1 && b.chance(0.7)) d = b.integer(2, 4);
  }
  const int64_t extra = b.integer(0, 2);
  for (int64_t i = 0; i < extra && static_cast<int>(s.size()) < b.options().max_rank; ++i) {
    s.insert(s.begin(), b.integer(1, 3));
  }
  if (!b.fits(s)) return;
  keep(b, ops::broadcast_to(x.t, s), x);
}

void slice(Builder& b) {
  const Candidate x = any_operand(b, 1);
  const int64_t axis = b.integer(0, x.rank() - 1);
  const int64_t n = x.shape()[static_cast<size_t>(axis)];
  const int64_t start = b.integer(0, std::max<int64_t>(n - 1, 0));
  const int64_t stop = b.chance(0.2) ? n + b.integer(0, 3) : b.integer(start, n);
  const int64_t step = b.choose<int64_t>({1, 1, 2, 3});
  keep(b, ops::slice(x.t, b.chance(0.2) ? axis - x.rank() : axis, start, stop, step), x);
}

void flip(Builder& b) {
  const Candidate x = any_operand(b, 1);
  std::vector<int64_t> axes;
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (b.chance(0.5)) axes.push_back(d);
  }
  keep(b, ops::flip(x.t, axes), x);
}

void squeeze(Builder& b) {
  const Candidate x = any_operand(b);
  if (b.chance(0.5) || x.rank() == 0) {
    keep(b, ops::unsqueeze(x.t, b.integer(0, x.rank())), x);
  } else {
    keep(b, ops::squeeze(x.t), x);
  }
}

void split(Builder& b) {
  const Candidate x = any_operand(b, 1);
  const int64_t axis = b.integer(0, x.rank() - 1);
  int64_t n = x.shape()[static_cast<size_t>(axis)];
  std::vector<int64_t> sizes;
  while (n > 0) {
    const int64_t s = b.integer(1, n);
    sizes.push_back(s);
    n -= s;
  }
  if (sizes.empty()) sizes.push_back(0);
  for (const Tensor& piece : ops::split(x.t, sizes, axis)) {
    if (b.chance(0.7)) keep(b, piece, x);
  }
}

void concat(Builder& b) {
  const Candidate x = any_operand(b, 1);
  const int64_t axis = b.integer(0, x.rank() - 1);
  std::vector<Tensor> parts{x.t};
  Facts f = x.f;
  const int64_t count = b.integer(1, 3);
  for (int64_t i = 0; i < count; ++i) {
    Shape s = x.shape();
    s[static_cast<size_t>(axis)] = b.integer(0, 3);
    Candidate other = b.chance(0.3)
                          ? x
                          : b.fresh({x.dtype(), s}, x.f.exact || !is_floating(x.dtype()) ? InputSpec::integers(-2, 2)
                                                                                         : InputSpec::uniform(-2, 2));
    if (other.dtype() == DType::boolean) other = b.fresh({DType::boolean, s}, InputSpec::boolean());
    parts.push_back(other.t);
    f.lo = std::min(f.lo, other.f.lo);
    f.hi = std::max(f.hi, other.f.hi);
    f.exact = f.exact && other.f.exact;
  }
  const Tensor y = b.chance(0.2) ? ops::stack({x.t, x.t}, axis) : ops::concat(parts, axis);
  b.add(y, f);
}

void pad(Builder& b) {
  const Candidate x = any_operand(b, 1);
  const bool reflect = b.chance(0.4);
  std::vector<std::pair<int64_t, int64_t>> widths;
  for (int64_t d = 0; d < x.rank(); ++d) {
    const int64_t n = x.shape()[static_cast<size_t>(d)];
    const int64_t most = reflect ? std::max<int64_t>(n - 1, 0) : 2;
    widths.emplace_back(b.chance(0.5) ? b.integer(0, most) : 0, b.chance(0.5) ? b.integer(0, most) : 0);
  }
  const double value = static_cast<double>(b.integer(-1, 1));
  Facts f = x.f;
  f.lo = std::min(f.lo, value);
  f.hi = std::max(f.hi, value);
  b.add(ops::pad(x.t, widths, reflect ? ops::PadMode::Reflect : ops::PadMode::Constant, value), f);
}

void stop_gradient(Builder& b) {
  const Candidate x = b.float_operand();
  keep(b, ops::stop_gradient(x.t), x);
}

void tile(Builder& b) {
  const Candidate x = any_operand(b, 1);
  std::vector<int64_t> repeats;
  for (int64_t d = 0; d < x.rank(); ++d) repeats.push_back(b.integer(1, 2));
  if (b.chance(0.5) && x.rank() >= 2) {
    keep(b, b.chance(0.5) ? ops::tril(x.t, b.integer(-1, 1)) : ops::triu(x.t, b.integer(-1, 1)), x);
    return;
  }
  keep(b, ops::repeat(x.t, repeats), x);
}

// --- indexing ------------------------------------------------------------------------------------

void gather(Builder& b) {
  const Candidate x = any_operand(b, 1);
  const int64_t axis = b.integer(0, x.rank() - 1);
  const int64_t n = x.shape()[static_cast<size_t>(axis)];
  if (n == 0) return;
  Shape s = x.shape();
  for (size_t d = 0; d < s.size(); ++d) {
    s[d] = static_cast<int64_t>(d) == axis ? b.integer(1, 4) : b.integer(std::min<int64_t>(s[d], 1), s[d]);
  }
  const Candidate index = b.fresh_index(s, n);
  keep(b, ops::gather(x.t, axis, index.t), x);
}

void index_select(Builder& b) {
  const Candidate x = any_operand(b, 1);
  const int64_t axis = b.integer(0, x.rank() - 1);
  const int64_t n = x.shape()[static_cast<size_t>(axis)];
  if (n == 0) return;
  const Candidate index = b.fresh_index({b.integer(0, 5)}, n);
  keep(b, ops::index_select(x.t, axis, index.t), x);
}

// index_copy over distinct slices (consecutive rows from a random start, wrapping around).
void index_copy(Builder& b) {
  const Candidate x = b.float_operand();
  if (x.rank() == 0) return;
  const int64_t axis = b.integer(0, x.rank() - 1), size = x.shape()[static_cast<size_t>(axis)];
  const int64_t m = b.integer(0, std::min<int64_t>(size, 3)), start = b.integer(0, std::max<int64_t>(size - 1, 0));
  std::vector<int64_t> rows;
  for (int64_t k = 0; k < m; ++k) rows.push_back((start + k) % size);
  Shape s = x.shape();
  s[static_cast<size_t>(axis)] = m;
  const Candidate src = b.float_of_shape(s, x.dtype());
  const Tensor y = ops::index_copy(x.t, axis, Tensor::from_vector(rows, {m}), src.t);
  b.add(y, Builder::exact_if(x.f.exact && src.f.exact, std::min(x.f.lo, src.f.lo), std::max(x.f.hi, src.f.hi),
                             y.dtype()));
}

void scatter_add(Builder& b) {
  const Candidate x = b.float_operand();
  if (x.rank() == 0 || x.t.numel() == 0) return;
  const int64_t axis = b.integer(0, x.rank() - 1);
  Shape s = x.shape();
  for (size_t d = 0; d < s.size(); ++d) {
    s[d] = static_cast<int64_t>(d) == axis ? b.integer(1, 5) : b.integer(std::min<int64_t>(s[d], 1), s[d]);
  }
  const Candidate index = b.fresh_index(s, x.shape()[static_cast<size_t>(axis)]);
  const Candidate src = b.float_of_shape(s, x.dtype());
  const Tensor y = ops::scatter_add(x.t, axis, index.t, src.t);
  const double n = static_cast<double>(shape_numel(s));
  b.add(y, Builder::exact_if(x.f.exact && src.f.exact, x.f.lo + n * std::min(src.f.lo, 0.0),
                             x.f.hi + n * std::max(src.f.hi, 0.0), y.dtype()));
}

void one_hot(Builder& b) {
  const int64_t classes = b.integer(1, 6);
  const Candidate index = b.fresh_index(b.shape(0, 2), classes);
  const DType dt = b.chance(0.5) ? DType::f32 : b.choose<DType>({DType::i64, DType::f64, DType::boolean});
  b.add(ops::one_hot(index.t, classes, dt), Facts{0, 1, true});
}

void embedding(Builder& b) {
  const int64_t rows = b.integer(1, 6), dim = b.integer(1, 5);
  const Candidate weight = b.float_of_shape({rows, dim}, b.float_dtype());
  const Candidate index = b.fresh_index(b.shape(0, 2), rows);
  const Tensor y = ops::embedding(weight.t, index.t);
  b.add(y, weight.f);
  if (b.chance(0.3)) {  // the gradient op directly: rows of g summed by index
    const Candidate g = b.float_of_shape(y.shape(), y.dtype());
    const Tensor dw =
        ir::make_node1("embedding_grad", {g.t.value(), index.t.value()}, ir::Attrs{{"num_embeddings", rows}});
    const double n = static_cast<double>(index.t.numel());
    b.add(dw, Builder::exact_if(g.f.exact, n * std::min(g.f.lo, 0.0), n * std::max(g.f.hi, 0.0), dw.dtype()));
  }
}

void slice_backward(Builder& b) {
  const Candidate g = b.float_operand();
  if (g.rank() == 0) return;
  const int64_t axis = b.integer(0, g.rank() - 1);
  const int64_t n = g.shape()[static_cast<size_t>(axis)];
  const int64_t step = b.integer(1, 3), start = b.integer(0, 2);
  const int64_t size = start + (n > 0 ? (n - 1) * step + 1 : 0) + b.integer(0, 2);
  Facts f = g.f;
  f.lo = std::min(f.lo, 0.0);
  f.hi = std::max(f.hi, 0.0);
  b.add(ops::slice_backward(g.t, axis, start, step, size), f);
}

// --- creation and random ops ----------------------------------------------------------------------

void creation(Builder& b) {
  const int64_t which = b.integer(0, 2);
  if (which == 0) {
    const double v = static_cast<double>(b.integer(-3, 3));
    const DType dt = b.chance(0.7) ? b.float_dtype() : b.int_dtype();
    const Tensor t = ops::full(b.shape(0, 3), v, dt);
    b.add(t, Facts{v, v, true});
    if (b.chance(0.7)) {  // as a broadcast operand of an op, where fusion gives it most trouble
      const Candidate x = b.float_operand();
      const Tensor y = ops::add(x.t, ops::cast(ops::full(b.broadcastable(x.shape()), v, x.dtype()), x.dtype()));
      b.add(y, Builder::exact_if(x.f.exact, x.f.lo + v, x.f.hi + v, y.dtype()));
    }
  } else if (which == 1) {
    const int64_t n = b.integer(0, 8);
    const double start = static_cast<double>(b.integer(-3, 3)), step = b.choose<double>({1, 2, -1, 0.5});
    const DType dt = b.chance(0.6) ? b.float_dtype() : b.int_dtype();
    if (!is_floating(dt) && step != std::floor(step)) return;
    const Tensor t = ops::arange(start, start + step * static_cast<double>(n), step, dt);
    const double end = start + step * static_cast<double>(n);
    b.add(t, Facts{std::min(start, end), std::max(start, end), step == std::floor(step)});
  } else {
    const int64_t n = b.integer(1, 5), m = b.integer(1, 5), k = b.integer(-2, 2);
    b.add(ops::eye(n, m, k, b.chance(0.7) ? b.float_dtype() : DType::i64), Facts{0, 1, true});
  }
}

void random(Builder& b) {
  ops::Generator gen(static_cast<uint64_t>(b.integer(0, 1000)));
  gen.set_offset(static_cast<uint64_t>(b.integer(0, 100)));
  const Shape s = b.shape(0, 3);
  switch (b.integer(0, 4)) {
    case 0:
      b.add(ops::uniform(s, -1, 2, gen, b.float_dtype()), Facts{-1, 2, false});
      break;
    case 1:
      b.add(ops::normal(s, 0.5, 2, gen, b.float_dtype()), Facts{-15, 16, false});
      break;
    case 2:
      b.add(ops::randint(-3, 4, s, gen, b.int_dtype()), Facts{-3, 3, true});
      break;
    case 3: {
      const Candidate p = b.fresh({b.float_dtype(), s}, InputSpec::uniform(0, 1));
      b.add(ops::bernoulli(p.t, gen), Facts{0, 1, true});
      break;
    }
    default: {
      const int64_t n = b.integer(0, 7);
      b.add(ops::permutation(n, gen), Facts{0, static_cast<double>(std::max<int64_t>(n - 1, 0)), true});
    }
  }
}

}  // namespace

std::vector<Recipe> structure_recipes() {
  return {
      {"reshape", {"reshape"}, 2, reshape},
      {"permute", {"permute"}, 2, permute},
      {"broadcast", {"broadcast_to"}, 1.5, broadcast},
      {"slice", {"slice"}, 2, slice},
      {"flip", {"flip"}, 0.8, flip},
      {"squeeze", {"reshape"}, 0.6, squeeze},
      {"split", {"split"}, 1, split},
      {"concat", {"concat"}, 1.2, concat},
      {"pad", {"pad"}, 1, pad},
      {"stop_gradient", {"stop_gradient"}, 0.4, stop_gradient},
      {"tile", {"concat", "broadcast_to", "reshape", "mul", "where"}, 0.6, tile},
      {"gather", {"gather"}, 1, gather},
      {"index_select", {"index_select"}, 1, index_select},
      {"scatter_add", {"scatter_add"}, 0.8, scatter_add},
      {"index_copy", {"index_copy"}, 0.6, index_copy},
      {"one_hot", {"one_hot"}, 0.6, one_hot},
      {"embedding", {"embedding", "embedding_grad"}, 1, embedding},
      {"slice_backward", {"slice_backward"}, 0.6, slice_backward},
      {"creation", {"full", "arange", "eye"}, 1, creation},
      {"random", {"uniform", "normal", "randint", "bernoulli", "permutation"}, 0.8, random},
  };
}

}  // namespace tessera::testing::fuzz
