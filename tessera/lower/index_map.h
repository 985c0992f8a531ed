#pragma once
// Index maps: where, as a function of the kernel's domain indices, one value of a fused cluster is
// read. A map gives one affine index per dimension of the value; after a reshape that does not
// split into per-dimension indices, only the row-major linear offset is known (linear_only), which is
// still enough to load a contiguous buffer or to pass through same-shape elementwise ops.
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/shape.h"
#include "tessera/lower/loop_ir.h"

namespace tessera::lower {

struct IndexMap {
  bool linear_only = false;
  std::vector<Affine> dims;  // one per dimension of the value (when !linear_only)
  Affine linear;             // the row-major offset (when linear_only)

  bool operator==(const IndexMap& o) const {
    return linear_only == o.linear_only && (linear_only ? linear == o.linear : dims == o.dims);
  }
  std::string key() const;  // for memo tables
};

Affine affine_const(size_t rank, int64_t c);
Affine affine_var(size_t rank, size_t d);
Affine affine_add(const Affine& a, const Affine& b);
Affine affine_scale(const Affine& a, int64_t k);

// The per-dimension map of the identity over `domain`: value index d = domain index d.
IndexMap identity_map(const Shape& domain);

// The row-major offset into a contiguous buffer of `shape` that `map` addresses (an affine function
// of `domain_rank` domain indices).
Affine to_linear(const IndexMap& map, const Shape& shape, size_t domain_rank);

// Splits a row-major offset into per-dimension affine indices of `shape`, when no carry between
// dimensions can occur for any domain index; nullopt otherwise.
std::optional<std::vector<Affine>> delinearize(const Affine& linear, const Shape& shape, const Shape& domain);

// The map with per-dimension indices (delinearising a linear-only map if needed), or nullopt.
std::optional<IndexMap> with_dims(const IndexMap& map, const Shape& shape, const Shape& domain);

// True when `linear`, over the domain axes marked in `active` (the others must have coefficient
// 0), visits every offset of a buffer of `numel` elements exactly once.
bool is_bijection(const Affine& linear, const Shape& domain, const std::vector<bool>& active, int64_t numel);

// The row-major linear index over the `active` domain axes (the identity layout of an output).
Affine row_major(const Shape& domain, const std::vector<bool>& active);

}  // namespace tessera::lower
