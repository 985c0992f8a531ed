"""Runs on a machine with PyTorch and the safetensors package: checks that a file written by Tessera
loads with safetensors (torch and numpy front ends) and holds the expected pattern, then writes a file
with torch for Tessera's tests to read (tests/io/fixtures/torch_written.safetensors)."""
import sys

import numpy as np
import safetensors
import safetensors.numpy
import safetensors.torch
import torch

src, out = sys.argv[1], sys.argv[2]

TORCH = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16,
         "i8": torch.int8, "i32": torch.int32, "i64": torch.int64, "u8": torch.uint8, "bool": torch.bool}

loaded = safetensors.torch.load_file(src)
with safetensors.safe_open(src, "pt") as f:
    meta = f.metadata()
assert meta == {"producer": "tessera", "pattern": "i*0.5-3"}, meta
for name, dt in TORCH.items():
    t = loaded["t_" + name]
    assert t.dtype == dt, (name, t.dtype)
    n = t.numel()
    ref = torch.arange(n, dtype=torch.float64) * 0.5 - 3.0
    if name == "u8":
        ref = ref + 3.0
    want = ref.to(dt).reshape(t.shape)
    assert torch.equal(t, want), (name, t, want)
    print(f"tessera -> torch ok: t_{name} {tuple(t.shape)} {t.dtype}")
assert loaded["scalar"].shape == () and loaded["scalar"].item() == 1.25
with safetensors.safe_open(src, "np") as f:  # numpy has no bf16: read the other tensors one by one
    names = [k for k in f.keys() if k != "t_bf16"]
    arrays = {k: f.get_tensor(k) for k in names}
assert np.array_equal(arrays["t_f32"].ravel(), np.arange(24) * 0.5 - 3.0)
print("tessera -> numpy ok:", sorted(arrays))

tensors = {}
for name, dt in TORCH.items():
    vals = torch.arange(12, dtype=torch.float64).reshape(3, 4) * 0.25 - 1.0
    if name == "u8":
        vals = vals + 1.0
    tensors["w_" + name] = vals.to(dt)
tensors["matrix_t"] = (torch.arange(6, dtype=torch.float32).reshape(2, 3)).t().contiguous()
tensors["empty"] = torch.zeros(0, 3)
safetensors.torch.save_file(tensors, out, metadata={"producer": "torch " + torch.__version__})
print("wrote", out, "with torch", torch.__version__, "safetensors", safetensors.__version__)
