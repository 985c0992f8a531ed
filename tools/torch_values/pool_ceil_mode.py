#!/usr/bin/env python3
"""Values and gradients of max_pool2d / avg_pool2d with ceil_mode=True, for tests/ops_conv/test_pool_ceil_mode.cpp.

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


# kind, input shape, kernel, stride, padding, dilation (max) or count_include_pad (avg)
CASES = [
    ("max", (1, 2, 7, 6), (3, 3), (2, 2), (1, 1), (1, 1)),
    ("max", (1, 1, 5, 7), (2, 2), (2, 2), (0, 0), (1, 1)),  # odd sizes: partial last windows
    ("max", (1, 1, 5, 5), (3, 3), (3, 3), (1, 1), (1, 1)),  # a last window would start in the right padding
    ("max", (1, 1, 7, 6), (3, 2), (2, 3), (1, 0), (2, 1)),
    ("max", (1, 1, 2, 2), (3, 3), (2, 2), (0, 0), (1, 1)),  # kernel larger than the input
    ("avg", (1, 2, 6, 7), (3, 3), (2, 2), (1, 1), True),
    ("avg", (1, 2, 6, 7), (3, 3), (2, 2), (1, 1), False),
    ("avg", (1, 1, 5, 5), (2, 2), (2, 2), (0, 0), True),
    ("avg", (1, 1, 5, 5), (3, 3), (3, 3), (1, 1), True),
    ("avg", (1, 1, 2, 3), (3, 3), (2, 2), (0, 1), True),
]


def cpp_list(values):
    return "{" + ", ".join(repr(float(v)) for v in values) + "}"


def cpp_pair(p):
    return "{%d, %d}" % p


for kind, shape, k, s, p, extra in CASES:
    x = ramp(shape, 7919, 97, 8.0, 6.0).requires_grad_()
    if kind == "max":
        y = F.max_pool2d(x, k, s, p, extra, ceil_mode=True)
        dilation, include_pad = extra, False
    else:
        y = F.avg_pool2d(x, k, s, p, ceil_mode=True, count_include_pad=extra)
        dilation, include_pad = (1, 1), extra
    (y * ramp(y.shape, 31, 11, 4.0, 1.0)).sum().backward()
    print("    {%s, {%s}, %s, %s, %s, %s, %s, {%s}," % (
        "Pool::max" if kind == "max" else "Pool::avg", ", ".join(map(str, shape)), cpp_pair(k), cpp_pair(s),
        cpp_pair(p), cpp_pair(dilation), "true" if include_pad else "false", ", ".join(map(str, y.shape))))
    print("     %s," % cpp_list(y.flatten()))
    print("     %s}," % cpp_list(x.grad.flatten()))
