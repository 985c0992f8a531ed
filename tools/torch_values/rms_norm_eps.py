#!/usr/bin/env python3
"""Which eps PyTorch's F.rms_norm / nn.RMSNorm use when eps is None (PyTorch 2.4+; Debian's 1.13 has
neither): prints, per dtype, the eps that reproduces PyTorch's output on inputs small enough for eps to
matter. The docs say torch.finfo(x.dtype).eps; the candidates are that and f32's epsilon.
"""
import torch
import torch.nn.functional as F

x64 = torch.tensor([[1e-4, -2e-4, 3e-4, 0.0]], dtype=torch.float64)
for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
    x = x64.to(dt)
    y = F.rms_norm(x, (4,)).double()
    nn_y = torch.nn.RMSNorm(4, dtype=dt)(x).double()
    xc = x.double()
    best = None
    for name, eps in (("finfo(dtype).eps", torch.finfo(dt).eps), ("finfo(float32).eps", torch.finfo(torch.float32).eps),
                      ("finfo(float64).eps", torch.finfo(torch.float64).eps)):
        ref = xc / torch.sqrt((xc * xc).mean(-1, keepdim=True) + eps)
        err = (ref - y).abs().max().item() / ref.abs().max().item()
        print(f"{dt}: candidate {name} = {eps:.3g}: rel err {err:.2e}")
        if best is None or err < best[1]:
            best = (name, err)
    print(f"{dt}: F.rms_norm uses {best[0]}; nn.RMSNorm agrees: {bool((nn_y - y).abs().max() == 0)}")
print("torch", torch.__version__)
