#!/usr/bin/env python3
"""F.interpolate values and gradients for tests/ops_conv/test_upsample_pytorch.cpp: 'nearest-exact' by
size, and 'nearest', 'nearest-exact' and 'bilinear' by scale factor (recompute_scale_factor=False).

x[i] = ((i * 7919) % 97) / 8 - 6 over the flat input; the gradient is that of sum(y * w) with
w[i] = ((i * 31) % 11) / 4 - 1 over the flat output.
"""
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


def ramp(shape, mul, mod, div, sub):
    n = 1
    for d in shape:
        n *= d
    return torch.tensor([((i * mul) % mod) / div - sub for i in range(n)]).reshape(shape)


# mode, input shape, size or None, scale factors or None, align_corners
CASES = [
    ("nearest-exact", (1, 2, 3, 4), (5, 7), None, False),
    ("nearest-exact", (1, 1, 5, 7), (2, 3), None, False),
    ("nearest-exact", (1, 1, 4, 6), (9, 13), None, False),
    ("nearest", (1, 1, 5, 7), None, (1.5, 1.5), False),
    ("nearest", (1, 1, 10, 6), None, (1.2, 0.6), False),
    ("nearest-exact", (1, 1, 5, 7), None, (1.7, 0.75), False),
    ("nearest-exact", (1, 2, 3, 4), None, (2.0, 2.0), False),
    ("bilinear", (1, 1, 4, 5), None, (1.5, 2.5), False),
    ("bilinear", (1, 1, 6, 5), None, (1.2, 0.7), False),
    ("bilinear", (1, 1, 4, 5), None, (1.5, 1.3), True),
]


def cpp_list(values):
    return "{" + ", ".join(repr(float(v)) for v in values) + "}"


MODES = {"nearest": "ops::UpsampleMode::Nearest", "nearest-exact": "ops::UpsampleMode::NearestExact",
         "bilinear": "ops::UpsampleMode::Bilinear"}

for mode, shape, size, scale, align in CASES:
    x = ramp(shape, 7919, 97, 8.0, 6.0).requires_grad_()
    kwargs = {"align_corners": align} if mode == "bilinear" else {}
    if size is not None:
        y = F.interpolate(x, size=size, mode=mode, **kwargs)
    else:
        y = F.interpolate(x, scale_factor=scale, mode=mode, **kwargs)
    (y * ramp(y.shape, 31, 11, 4.0, 1.0)).sum().backward()
    print("    {%s, {%s}, {%s}, {%s}, %s, {%s}," % (
        MODES[mode], ", ".join(map(str, shape)), ", ".join(map(str, size or (0, 0))),
        ", ".join(repr(float(s)) for s in (scale or (0, 0))), "true" if align else "false",
        ", ".join(map(str, y.shape))))
    print("     %s," % cpp_list(y.flatten()))
    print("     %s}," % cpp_list(x.grad.flatten()))
