// The text of docs/ops.md's Conventions section (see ops_conventions.h). Each statement is pinned by a
// test; the test names are given so a change of behaviour and of this text go together.
#include "ops_conventions.h"

namespace tessera::cli {

std::string_view ops_conventions_markdown() {
  return R"md(
## Conventions

Where a PyTorch user could expect PyTorch's behaviour, this is what Tessera does. "As PyTorch" means
checked against PyTorch 1.13 (Debian's) unless a newer version is named.

### Losses

- `cross_entropy(logits, targets, {.label_smoothing = eps})`: each counted target's loss is
  `(1 - eps) * -log p[target] + (eps / C) * sum_c -log p[c]`, i.e. the target distribution is
  `(1 - eps) * one_hot + eps / C`, as PyTorch.
- Targets equal to `ignore_index` (default -100) add nothing to either term and are left out of the
  mean's denominator: `Reduction::Mean` is the sum over targets not ignored divided by their number, as
  PyTorch (all ignored: 0 / 0 = NaN; `Reduction::Sum` gives 0). There are no class weights.
  Tests: `CrossEntropy.LabelSmoothingWithIgnoredTargetsMatchesPyTorch`, `CrossEntropy.IgnoreIndex`.

### Attention heads (GQA)

- `scaled_dot_product_attention` with `Hq = g * Hk` query heads: query head `h` reads key/value head
  `h / g` (consecutive groups; PyTorch's `enable_gqa`, i.e. k and v `repeat_interleave`d, not tiled).
  With `Hq = 4, Hk = 2`, query heads 0 and 1 read kv head 0, heads 2 and 3 kv head 1.
  Tests: `Attention.GqaGroupsConsecutiveQueryHeads`, `Attention.GroupedQueryHeads`.

### Gradients at ties and kinks

| op | where | gradient | PyTorch |
|---|---|---|---|
| `max`, `min` (reductions) | several elements equal the result | split evenly between them | same as `amax` / `amin` (`torch.max(x, dim)`, which returns indices, routes it all to one) |
| `argmax`, `argmin` | ties | the first index; no gradient | same |
| `maximum`, `minimum` | `a == b` | half to each operand | same |
| `clamp(x, lo, hi)` | `x == lo` or `x == hi` | 1 (the closed interval passes it), 0 outside | same |
| `relu` | `x == 0` | 0 | same |
| `leaky_relu` | `x == 0` | `negative_slope` | same |
| `elu` | `x == 0` | `alpha` | same |
| `abs` | `x == 0` | 0 (`g * sign(x)`) | same |
| `max_pool2d` | ties in a window | all to the first maximum in row-major scan order | same |

Tests: `Subgradients.*` (tests/autodiff/test_subgradients.cpp).

### Defaults

- `rms_norm` / `nn::RMSNorm` without an eps add the machine epsilon of the compute dtype: 2^-23
  (1.19e-7) for f32, 2^-52 for f64, and f32's for f16 and bf16, which compute in f32. This is PyTorch's
  `eps=None` (PyTorch 2.4+; checked against 2.11, whose `F.rms_norm` and `nn.RMSNorm` take f32's
  epsilon for f16 and bf16 too, not `torch.finfo(dtype).eps`; `tools/torch_values/rms_norm_eps.py`).
  Tessera's default was 1e-6 before; models trained with an explicit eps (LLaMA's 1e-5 or 1e-6) must
  pass it. Tests: `RmsNorm.DefaultEpsIsTheMachineEpsilon`.
- `layer_norm`, `batch_norm`, `group_norm`: eps 1e-5, as PyTorch.

### Argument orders that differ from PyTorch

- `embedding(weight, indices)`: the table first; PyTorch's `F.embedding(input, weight)` takes the
  indices first.
- `pad(x, {{before, after}, ...})`: one pair per axis from the first axis on; PyTorch's `F.pad` takes a
  flat list from the last axis backwards (`F.pad(x, (l, r, t, b))` on `[N, C, H, W]` is
  `pad(x, {{0, 0}, {0, 0}, {t, b}, {l, r}})`).
- `avg_pool2d(x, kernel, stride, padding, count_include_pad, ceil_mode)`: `count_include_pad` before
  `ceil_mode`; PyTorch has `ceil_mode` first. `max_pool2d(x, kernel, stride, padding, dilation,
  ceil_mode)` is in PyTorch's order.
- `linear(x, weight, bias)` is PyTorch's: `weight` is `[out, in]` and `y = x @ weight^T + bias`.

### Slicing

- `slice(x, axis, start, stop, step)` is Python's `x[start:stop:step]` along one axis; `ops::kEnd`
  (past the last element) and `ops::kBegin` (before the first) stand for omitted bounds:
  `x[2:]` is `slice(x, axis, 2, kEnd)` or `slice(x, axis, 2)`, `x[::-1]` is
  `slice(x, axis, kEnd, kBegin, -1)`. Tests: `Slice.NamedBoundsAndToTheEnd`.

### Pooling and resampling

- `ceil_mode` (max and average pooling): the output size is the ceiling of
  `(in + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1`, less one when that last window would
  start in the right padding (a window must start inside the input or the left padding), as PyTorch.
  With `count_include_pad` the average divides by the window clipped to the padded input, so a partial
  last window counts only the padding inside `in + padding`; without it, by the taps inside the input.
  Tests: `PoolCeilMode.*`.
- `upsample2d` by size, modes `Nearest` (`src = floor(dst * in / out)`) and `NearestExact`
  (`src = floor((dst + 0.5) * in / out)`), both clamped to `in - 1`: computed exactly in integers.
  PyTorch computes them with an f32 ratio, which picks the neighbour in a few cases (`nearest` from 2 to
  82 at dst 41, `nearest-exact` from 2 to 41 at dst 20).
- `upsample2d_scaled(x, {sh, sw})` / `upsample2d(x, s)`: PyTorch's `scale_factor`. The output size is
  `floor(in * scale)`, and coordinates use the ratio `1 / scale` (PyTorch's default
  `recompute_scale_factor=False`), in f32 for the nearest modes exactly as PyTorch, so indices match
  PyTorch's. `align_corners` maps corners by size and ignores the factors, as PyTorch.
  Tests: `UpsamplePyTorch.*`.
)md";
}

}  // namespace tessera::cli
