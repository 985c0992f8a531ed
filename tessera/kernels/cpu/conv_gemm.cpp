// Convolution forward as an implicit GEMM: per group, Y[co, j] = W[co, :] . X[:, j] over the columns j
// of the whole batch, with the im2col matrix X gathered panel by panel straight from the images
// (conv_pack.h) instead of being written out and read back, and the tail (bias, activation, residual,
// activation) applied by the register tile before its one store (conv_tile.h). The loop nest is the
// GEMM's (NC columns -> k block -> MC rows -> NR x MR tiles); threads claim tasks of a 2-D grid of
// output channels x columns, so a batch of one keeps every thread busy, and the weights are packed once
// per call or, when constant, once per executable (implicit_gemm_pack_weights).
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "tessera/core/error.h"
#include "tessera/kernels/cpu/conv_pack.h"
#include "tessera/kernels/cpu/conv_tile.h"
#include "tessera/kernels/cpu/cpu_features.h"
#include "tessera/runtime/thread_scratch.h"

namespace tessera::kernels {

namespace {
using namespace conv_detail;

// Cache blocking: a KC x NR column panel stays in L1 while the MR-row tiles of an MC x KC block of
// weights (in L2) pass over it; an NC-column block of panels (KC x NC floats) stays in L2.
constexpr int64_t kKC = 256;
constexpr int64_t kMC = 144;  // a multiple of both tiles' MR (6, 12)
constexpr int64_t kNC = 768;  // a multiple of both tiles' NR (16, 32)

// The header at the start of packed weights: which tile layout they are in, for which product.
constexpr int64_t kHeaderFloats = 16;
constexpr int32_t kMagic = 0x50564e43;  // "CNVP"
struct PackedHeader {
  int32_t magic, mr, nr, exact_rows, k_block, m, k, groups;
  bool operator==(const PackedHeader&) const = default;
};
static_assert(sizeof(PackedHeader) <= kHeaderFloats * sizeof(float));

PackedHeader header_for(const Conv2dGeometry& g, const TileKernel& kernel) {
  return {kMagic,
          static_cast<int32_t>(kernel.mr),
          static_cast<int32_t>(kernel.nr),
          kernel.exact_rows ? 1 : 0,
          static_cast<int32_t>(k_block_size(col_rows(g), kKC)),
          static_cast<int32_t>(out_per_group(g)),
          static_cast<int32_t>(col_rows(g)),
          static_cast<int32_t>(g.groups)};
}

RowPanels row_panels(const Conv2dGeometry& g, const TileKernel& kernel) {
  return {out_per_group(g), kernel.mr, kernel.exact_rows};
}

int64_t packed_floats(const Conv2dGeometry& g, const TileKernel& kernel) {
  return kHeaderFloats + g.groups * packed_weight_floats_per_group(g, row_panels(g, kernel));
}

bool has_tail(const ConvEpilogue& e, const float* bias) {
  return bias != nullptr || e.activation != Activation::none || e.residual != nullptr ||
         e.post_activation != Activation::none;
}

// How the product is spread over the threads: tasks claimed dynamically, several per thread so that a
// thread that another process keeps off its core holds up one task, not half the work.
//  - shared columns: when the columns are few (late layers of a batch of one), the im2col panels of the
//    whole product are packed once into the workspace (a first parallel pass), and the tasks split the
//    output channels, so each weight is read from memory once;
//  - otherwise a grid of tm row blocks x tn column blocks, each task packing its own columns: each
//    column block streams all the weights of its row block, each row block packs its columns again,
//    so the grid minimises tn * weight bytes + 1.6 * tm * column bytes (packing a panel row costs about
//    what streaming 1.6 times its bytes of weights does).
struct Schedule {
  bool shared_columns = false;
  int64_t tm = 1, tn = 1;
};

constexpr int64_t kMaxSharedColumns = 512;

// Outputs larger than this are stored with non-temporal stores (TileTail::stream).
constexpr int64_t kStreamBytes = int64_t{16} << 20;  // a k block of them (256 x 512 floats) stays in L2

int64_t padded_columns(const Conv2dGeometry& g, int64_t nr) {
  const int64_t n = g.batch * out_plane(g);
  return (n + nr - 1) / nr * nr;
}

// Whether the product uses shared columns: decided by the shape alone, so that the workspace a caller
// planned for one pool fits a call on another.
bool uses_shared_columns(const Conv2dGeometry& g, const TileKernel& kernel, const RowPanels& rows) {
  return padded_columns(g, kernel.nr) <= kMaxSharedColumns && rows.count() >= 4;
}

Schedule plan_schedule(const Conv2dGeometry& g, const TileKernel& kernel, const RowPanels& rows, int64_t threads) {
  Schedule s;
  const int64_t target = threads <= 1 ? 1 : 4 * threads, n = g.batch * out_plane(g), k = col_rows(g);
  const int64_t n_padded = padded_columns(g, kernel.nr);
  if (uses_shared_columns(g, kernel, rows)) {
    s.shared_columns = true;
    s.tm = std::min(rows.count(), target);
    return s;
  }
  if (threads <= 1) return s;
  const double weight_bytes = 4.0 * static_cast<double>(rows.padded() * k);
  const double column_bytes = 4.0 * static_cast<double>(n_padded * k);
  double best = -1.0;
  for (int64_t tn = 1; tn <= std::min(target, (n + kernel.nr - 1) / kernel.nr); ++tn) {
    const int64_t tm = std::min(rows.count(), (target + tn - 1) / tn);
    const double cost = static_cast<double>(tn) * weight_bytes + 1.6 * static_cast<double>(tm) * column_bytes;
    if (best < 0 || cost < best) {
      best = cost;
      s.tm = tm;
      s.tn = tn;
    }
  }
  return s;
}

int64_t split_point(int64_t extent, int64_t parts, int64_t index, int64_t unit) {
  if (index >= parts) return extent;
  const int64_t units = (extent + unit - 1) / unit;
  return std::min(extent, units * index / parts * unit);
}

// One group's product; a task computes row panels [k0, k1) by columns [j0, j1).
struct GroupProduct {
  const Conv2dGeometry* g;
  TileKernel kernel;
  RowPanels rows;
  int64_t k_block;
  const float* weights;  // this group's packed weights
  ColumnSource columns;
  float* y;              // output channel 0 of this group in image 0
  const float* bias;     // this group's bias, or null
  const float* residual;  // like y, or null
  ConvEpilogue epilogue;
  bool tail;    // whether any tail applies
  bool stream;  // non-temporal stores (TileTail::stream): the output is far larger than the caches

  TileTail tail_at(int64_t row, int64_t offset) const {
    TileTail t;
    t.bias = bias != nullptr ? bias + row : nullptr;
    t.activation = epilogue.activation;
    t.residual = residual != nullptr ? residual + offset : nullptr;
    t.ldr = out_plane(*g);
    t.post_activation = epilogue.post_activation;
    t.stream = stream;
    return t;
  }

  // Tile (rows [i, i + rows), columns [j, j + cols)) of the k block [p0, p0 + kc).
  void tile(const float* pa, const float* pb, int64_t kc, int64_t i, int64_t rows, int64_t j, int64_t cols, bool first,
            bool last) const {
    const int64_t plane = out_plane(*g), image = g->out_channels * plane;
    const int64_t n = j / plane, q = j % plane;
    const int64_t offset = n * image + i * plane + q;
    const TileTail t = tail_at(i, offset);
    const bool in_registers = tile_activation(t.activation) && tile_activation(t.post_activation);
    const TileTail* fused_tail = last && (tail || stream) && in_registers ? &t : nullptr;
    if (cols == kernel.nr && q + cols <= plane) {
      kernel.run(kc, pa, pb, y + offset, plane, rows, !first, fused_tail, nullptr);
      if (last && tail && !in_registers) tail_rows(y + offset, plane, rows, cols, t);
      return;
    }
    // Cut by the last column or an image edge: the columns of this image and of the next, through masks.
    const int64_t first_cols = std::min(cols, plane - q), second_cols = std::min(cols - first_cols, plane);
    if (kernel.split_columns && in_registers && first_cols + second_cols == cols) {
      TileColumns columns;
      columns.first = static_cast<uint32_t>((uint64_t{1} << first_cols) - 1);
      columns.second = static_cast<uint32_t>(((uint64_t{1} << cols) - 1) & ~uint64_t{columns.first});
      columns.second_delta = image - q - first_cols;
      kernel.run(kc, pa, pb, y + offset, plane, rows, !first, fused_tail, &columns);
      return;
    }
    // Otherwise compute into a local tile, then merge each image's part.
    alignas(64) float local[16 * 32];
    kernel.run(kc, pa, pb, local, kernel.nr, rows, false, nullptr, nullptr);
    for (int64_t c0 = 0; c0 < cols;) {
      const int64_t jj = j + c0, nn = jj / plane, qq = jj % plane;
      const int64_t len = std::min(cols - c0, plane - qq);
      const int64_t part = nn * image + i * plane + qq;
      for (int64_t r = 0; r < rows; ++r) {
        float* dst = y + part + r * plane;
        const float* l = local + r * kernel.nr + c0;
        if (first) {
          std::memcpy(dst, l, sizeof(float) * static_cast<size_t>(len));
        } else {
          for (int64_t c = 0; c < len; ++c) dst[c] += l[c];
        }
      }
      if (last && tail) tail_rows(y + part, plane, rows, len, tail_at(i, part));
      c0 += len;
    }
  }

  // Columns [j0, j0 + cols) of the k block [p0, p0 + kc) into consecutive panels at dst.
  void pack(int64_t p0, int64_t kc, int64_t j0, int64_t cols, float* dst) const {
    if (kernel.nr == 32 && use_avx512() && can_pack_columns_avx512(*g)) {
      pack_columns_avx512(columns, p0, kc, j0, cols, dst);
    } else {
      for (int64_t jr = 0; jr < cols; jr += kernel.nr)
        pack_columns(columns, p0, kc, j0 + jr, std::min(kernel.nr, cols - jr), kernel.nr, dst + jr * kc);
    }
  }

  // Row panels [k0, k1) by every column, from panels packed beforehand: k block p0's at
  // shared + p0 * padded columns.
  void shared_region(int64_t k0, int64_t k1, const float* shared) const {
    shared_region_tiles(k0, k1, shared);
    if (stream) tile_store_fence();
  }

  void shared_region_tiles(int64_t k0, int64_t k1, const float* shared) const {
    const int64_t k = col_rows(*g), n = g->batch * out_plane(*g), n_padded = padded_columns(*g, kernel.nr);
    for (int64_t p0 = 0; p0 < k; p0 += k_block) {
      const int64_t kc = std::min(k_block, k - p0);
      const bool first = p0 == 0, last = p0 + kc == k;
      const float* block = shared + p0 * n_padded;
      for (int64_t panel = k0; panel < k1; ++panel) {
        const float* pa = weights + weight_panel_offset(rows, p0, kc, panel);
        for (int64_t jr = 0; jr < n; jr += kernel.nr)
          tile(pa, block + jr * kc, kc, rows.start(panel), rows.rows(panel), jr, std::min(kernel.nr, n - jr), first,
               last);
      }
    }
  }

  void region(int64_t k0, int64_t k1, int64_t j0, int64_t j1) const {
    region_tiles(k0, k1, j0, j1);
    if (stream) tile_store_fence();
  }

  void region_tiles(int64_t k0, int64_t k1, int64_t j0, int64_t j1) const {
    const int64_t k = col_rows(*g), nr = kernel.nr;
    const int64_t panels_per_block = std::max<int64_t>(1, kMC / kernel.mr);
    float* panels = runtime::thread_scratch_of<float>(runtime::ScratchSlot::conv_columns, kKC * kNC);
    for (int64_t jc = j0; jc < j1; jc += kNC) {
      const int64_t nc = std::min(kNC, j1 - jc);
      for (int64_t p0 = 0; p0 < k; p0 += k_block) {
        const int64_t kc = std::min(k_block, k - p0);
        const bool first = p0 == 0, last = p0 + kc == k;
        pack(p0, kc, jc, nc, panels);
        for (int64_t kb = k0; kb < k1; kb += panels_per_block) {
          const int64_t kb_end = std::min(k1, kb + panels_per_block);
          for (int64_t jr = 0; jr < nc; jr += nr) {
            const int64_t cols = std::min(nr, nc - jr);
            for (int64_t panel = kb; panel < kb_end; ++panel) {
              const float* pa = weights + weight_panel_offset(rows, p0, kc, panel);
              tile(pa, panels + jr * kc, kc, rows.start(panel), rows.rows(panel), jc + jr, cols, first, last);
            }
          }
        }
      }
    }
  }
};

}  // namespace

namespace conv_detail {

int64_t implicit_gemm_packed_floats(const Conv2dGeometry& g) {
  // Room for whichever tile runs when the weights are packed (the AVX-512 switch may change).
  return std::max(packed_floats(g, tile_kernel_avx512()), packed_floats(g, tile_kernel_avx2()));
}

void implicit_gemm_pack_weights(const Conv2dGeometry& g, const float* w, float* packed, runtime::ThreadPool& pool) {
  const TileKernel kernel = best_tile_kernel();
  const PackedHeader h = header_for(g, kernel);
  std::memset(packed, 0, sizeof(float) * kHeaderFloats);
  std::memcpy(packed, &h, sizeof(h));
  pack_weights(g, w, row_panels(g, kernel), h.k_block, packed + kHeaderFloats, pool);
}

// The weights packed per call (unless packed once), then the shared columns (Schedule) if the
// schedule for this pool uses them.
int64_t implicit_gemm_workspace_bytes(const Conv2dGeometry& g, bool weights_packed) {
  const int64_t weights = weights_packed ? 0 : implicit_gemm_packed_floats(g);
  int64_t columns = 0;
  for (const TileKernel& kernel : {tile_kernel_avx512(), tile_kernel_avx2()}) {
    if (uses_shared_columns(g, kernel, row_panels(g, kernel)))
      columns = std::max(columns, padded_columns(g, kernel.nr) * col_rows(g));
  }
  return 4 * (padded_floats(weights) + columns) + (columns > 0 ? 64 : 0);  // room to align the columns
}

void implicit_gemm_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* packed_weights,
                           const float* bias, float* y, void* workspace, const ConvEpilogue& epilogue,
                           runtime::ThreadPool& pool) {
  // Weights packed for a tile this CPU still runs (the AVX-512 switch may have changed since) are used
  // as they are; anything else is packed now.
  TileKernel kernel;
  const float* packed = nullptr;
  if (packed_weights != nullptr) {
    PackedHeader h;
    std::memcpy(&h, packed_weights, sizeof(h));
    kernel = tile_kernel_for(h.mr, h.nr);
    if (kernel.run != nullptr && h == header_for(g, kernel)) packed = packed_weights;
  }
  // A workspace the caller sized for packed weights has no room to pack them now.
  const bool fits = packed_weights == nullptr || packed != nullptr;
  Workspace ws(fits ? workspace : nullptr, implicit_gemm_workspace_bytes(g, packed != nullptr));
  if (packed == nullptr) {
    kernel = best_tile_kernel();
    implicit_gemm_pack_weights(g, w, ws.floats(), pool);
    packed = ws.floats();
  }
  // The shared columns, 64-byte aligned as the tiles read panels.
  float* shared = ws.floats() + (packed == packed_weights ? 0 : padded_floats(implicit_gemm_packed_floats(g)));
  shared = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(shared) + 63) & ~uintptr_t{63});
  PackedHeader h;
  std::memcpy(&h, packed, sizeof(h));
  const int64_t m = out_per_group(g), n = g.batch * out_plane(g), k = col_rows(g);
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  // Below about a million flops the wake-up of a second thread costs more than it saves.
  const int64_t threads = flops * static_cast<double>(g.groups) < 1.0e6 ? 1 : pool.size();
  const RowPanels rows = row_panels(g, kernel);
  const Schedule schedule = plan_schedule(g, kernel, rows, threads);
  const int64_t tm = schedule.tm, tn = schedule.tn;
  for (int64_t gi = 0; gi < g.groups; ++gi) {
    GroupProduct gp{&g,
                    kernel,
                    rows,
                    h.k_block,
                    packed + kHeaderFloats + gi * packed_weight_floats_per_group(g, rows),
                    ColumnSource{&g, x + gi * in_per_group(g) * in_plane(g), g.in_channels * in_plane(g)},
                    y + gi * m * out_plane(g),
                    bias != nullptr ? bias + gi * m : nullptr,
                    epilogue.residual != nullptr ? epilogue.residual + gi * m * out_plane(g) : nullptr,
                    epilogue,
                    has_tail(epilogue, bias),
                    4 * g.batch * g.out_channels * out_plane(g) > kStreamBytes};
    if (schedule.shared_columns) {
      const int64_t k_blocks = (k + h.k_block - 1) / h.k_block, n_padded = padded_columns(g, kernel.nr);
      pool.parallel_tasks(k_blocks, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
          const int64_t p0 = b * h.k_block;
          gp.pack(p0, std::min<int64_t>(h.k_block, k - p0), 0, n, shared + p0 * n_padded);
        }
      });
      pool.parallel_tasks(tm, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) gp.shared_region(rows.count() * t / tm, rows.count() * (t + 1) / tm, shared);
      });
      continue;
    }
    pool.parallel_tasks(tm * tn, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t ti = t / tn, tj = t % tn;
        const int64_t k0 = rows.count() * ti / tm, k1 = rows.count() * (ti + 1) / tm;
        const int64_t j0 = split_point(n, tn, tj, kernel.nr), j1 = split_point(n, tn, tj + 1, kernel.nr);
        if (k0 < k1 && j0 < j1) gp.region(k0, k1, j0, j1);
      }
    });
  }
}

}  // namespace conv_detail
}  // namespace tessera::kernels
