#include "tessera/lower/index_map.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace tessera::lower {

std::string IndexMap::key() const {
  auto one = [](const Affine& a) { return fmt::format("{}:{}", a.constant, fmt::join(a.coef, ",")); };
  if (linear_only) return "L" + one(linear);
  std::string s = "D";
  for (const Affine& a : dims) s += one(a) + ";";
  return s;
}

Affine affine_const(size_t rank, int64_t c) {
  return Affine{c, std::vector<int64_t>(rank, 0)};
}

Affine affine_var(size_t rank, size_t d) {
  Affine a = affine_const(rank, 0);
  a.coef[d] = 1;
  return a;
}

Affine affine_add(const Affine& a, const Affine& b) {
  Affine r = a;
  r.constant += b.constant;
  for (size_t d = 0; d < r.coef.size(); ++d) r.coef[d] += b.coef[d];
  return r;
}

Affine affine_scale(const Affine& a, int64_t k) {
  Affine r = a;
  r.constant *= k;
  for (int64_t& c : r.coef) c *= k;
  return r;
}

IndexMap identity_map(const Shape& domain) {
  IndexMap m;
  // Axes of extent 1 only ever see index 0: a zero coefficient keeps equal maps equal.
  for (size_t d = 0; d < domain.size(); ++d) {
    m.dims.push_back(domain[d] > 1 ? affine_var(domain.size(), d) : affine_const(domain.size(), 0));
  }
  return m;
}

Affine to_linear(const IndexMap& map, const Shape& shape, size_t domain_rank) {
  if (map.linear_only) return map.linear;
  const Strides strides = contiguous_strides(shape);
  Affine l = affine_const(domain_rank, 0);
  for (size_t k = 0; k < map.dims.size(); ++k) l = affine_add(l, affine_scale(map.dims[k], strides[k]));
  return l;
}

std::optional<std::vector<Affine>> delinearize(const Affine& linear, const Shape& shape, const Shape& domain) {
  const size_t rank = domain.size();
  std::vector<Affine> dims(shape.size(), affine_const(rank, 0));
  // Nothing is ever read from or written to an empty buffer: any map will do.
  if (shape_numel(shape) == 0) return dims;
  const Strides strides = contiguous_strides(shape);
  const int64_t numel = shape_numel(shape);
  if (linear.constant < 0 || linear.constant >= numel) return std::nullopt;
  // The constant splits into digits like any offset.
  for (size_t k = 0; k < shape.size(); ++k) dims[k].constant = (linear.constant / strides[k]) % shape[k];
  // Each moving term must fall into one digit: |coef| = m * stride[k] with 1 <= m < shape[k] (a
  // negative one walks that digit down: a flipped axis read through a reshape).
  for (size_t d = 0; d < rank; ++d) {
    const int64_t a = linear.coef[d];
    if (domain[d] <= 1 || a == 0) continue;
    const int64_t magnitude = a < 0 ? -a : a;
    bool placed = false;
    for (size_t k = 0; k < shape.size() && !placed; ++k) {
      if (shape[k] >= 2 && magnitude % strides[k] == 0 && magnitude / strides[k] < shape[k]) {
        dims[k].coef[d] = a / strides[k];
        placed = true;
      }
    }
    if (!placed) return std::nullopt;
  }
  // No digit may leave its range (borrow from or carry into the next) over the whole domain.
  for (size_t k = 0; k < shape.size(); ++k) {
    int64_t lo = dims[k].constant, hi = dims[k].constant;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t step = dims[k].coef[d] * (domain[d] - 1);
      (step < 0 ? lo : hi) += step;
    }
    if (lo < 0 || hi >= shape[k]) return std::nullopt;
  }
  return dims;
}

std::optional<IndexMap> with_dims(const IndexMap& map, const Shape& shape, const Shape& domain) {
  if (!map.linear_only) return map;
  auto dims = delinearize(map.linear, shape, domain);
  if (!dims) return std::nullopt;
  IndexMap m;
  m.dims = std::move(*dims);
  return m;
}

bool is_bijection(const Affine& linear, const Shape& domain, const std::vector<bool>& active, int64_t numel) {
  int64_t count = 1;
  for (size_t d = 0; d < domain.size(); ++d) {
    if (active[d]) count *= domain[d];
  }
  if (count != numel) return false;
  if (numel == 0) return true;
  if (linear.constant != 0) return false;
  std::vector<std::pair<int64_t, int64_t>> terms;  // (coefficient, extent) of the moving axes
  for (size_t d = 0; d < domain.size(); ++d) {
    if (!active[d]) {
      if (linear.coef[d] != 0 && domain[d] > 1) return false;
      continue;
    }
    if (domain[d] > 1) terms.emplace_back(linear.coef[d], domain[d]);
  }
  std::sort(terms.begin(), terms.end());
  int64_t expected = 1;
  for (const auto& [coef, extent] : terms) {
    if (coef != expected) return false;
    expected *= extent;
  }
  return true;
}

Affine row_major(const Shape& domain, const std::vector<bool>& active) {
  Affine a = affine_const(domain.size(), 0);
  int64_t stride = 1;
  for (size_t d = domain.size(); d-- > 0;) {
    if (!active[d]) continue;
    a.coef[d] = domain[d] <= 1 ? 0 : stride;
    stride *= domain[d];
  }
  return a;
}

}  // namespace tessera::lower
