#!/usr/bin/python3
"""Runs Tessera's benchmark workloads and the same jobs in PyTorch, in the same run, and prints ratios.

    /usr/bin/python3 bench/compare_pytorch.py [--tessera build/tessera] [--repeat 5] [--seconds 0.5]
                                              [--workloads mlp_train_b64 ...] [--json OUT.json]

PyTorch (Debian's python3-torch) runs in two settings, each in its own process because the thread
settings must be made before torch starts its pools:
  tuned:   torch.set_num_threads(2) with OPENBLAS_NUM_THREADS=1 (its two pools otherwise fight over the cores)
  default: torch as installed, no settings
The ratio column is Tessera / PyTorch-tuned for rates (higher is better for Tessera) and
PyTorch-tuned / Tessera for latencies, so > 1 always means Tessera is faster.
"""
import argparse, json, os, statistics, subprocess, sys, time

WORKLOADS = ["mlp_train_b64", "mlp_train_b256", "cnn_train_b64", "mlp_infer_b1", "sgemm_1024", "fused_relu_axpb_16m"]


def measure(body, units, repeat, seconds, latency=False):
    """Median over `repeat` timed runs of about `seconds` each, after warm-up; mirrors tessera/bench/measure.cpp."""
    times = []
    for _ in range(2):
        t = time.perf_counter(); body(); times.append(time.perf_counter() - t)
    calls = max(1, int(seconds / max(1e-7, min(times))))
    values = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(calls):
            body()
        dt = time.perf_counter() - t
        values.append(dt / calls * 1e6 if latency else units * calls / dt)
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "runs": repeat}


def torch_workloads(names, repeat, seconds):
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    results = {}

    def mlp():
        return nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 512), nn.ReLU(),
                             nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10))

    def cnn():
        return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Flatten(), nn.Linear(1600, 128), nn.ReLU(), nn.Linear(128, 10))

    def train(model, x_shape, batch):
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        loss_fn = nn.CrossEntropyLoss()
        x = torch.rand(batch, *x_shape)
        y = torch.randint(0, 10, (batch,))

        def step():
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
        return measure(step, batch, repeat, seconds)

    for name in names:
        if name == "mlp_train_b64":
            results[name] = train(mlp(), (784,), 64)
        elif name == "mlp_train_b256":
            results[name] = train(mlp(), (784,), 256)
        elif name == "cnn_train_b64":
            results[name] = train(cnn(), (1, 28, 28), 64)
        elif name == "mlp_infer_b1":
            model = mlp().eval()
            x = torch.rand(1, 784)
            def forward():
                with torch.no_grad():
                    model(x)
            results[name] = measure(forward, 1, repeat, seconds, latency=True)
        elif name == "sgemm_1024":
            a, b = torch.rand(1024, 1024), torch.rand(1024, 1024)
            c = torch.empty(1024, 1024)
            results[name] = measure(lambda: torch.mm(a, b, out=c), 2 * 1024 ** 3 / 1e9, repeat, seconds)
        elif name == "fused_relu_axpb_16m":
            n = 16 * 1024 * 1024
            x, y = torch.rand(n), torch.empty(n)
            # Eager PyTorch: three passes (mul, add, relu); bytes counted as one read + one write, as for Tessera.
            def body():
                torch.mul(x, 1.5, out=y); y.add_(0.25); y.relu_()
            results[name] = measure(body, 8 * n / 1e9, repeat, seconds)
    return results


def run_torch(setting, names, repeat, seconds):
    env = dict(os.environ)
    if setting == "tuned":
        env["OPENBLAS_NUM_THREADS"] = "1"
    code = ("import json, sys; sys.path.insert(0, %r); import compare_pytorch as c; import torch; "
            "%s print(json.dumps(c.torch_workloads(%r, %d, %r)))"
            % (os.path.dirname(os.path.abspath(__file__)), "torch.set_num_threads(2);" if setting == "tuned" else "",
               names, repeat, seconds))
    out = subprocess.run(["/usr/bin/python3", "-c", code], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("PyTorch run failed (is python3-torch installed? apt-get install python3-torch):\n" + out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessera", default=os.path.join(os.path.dirname(__file__), "..", "build", "tessera"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=0.5)
    ap.add_argument("--workloads", nargs="*", default=WORKLOADS)
    ap.add_argument("--json", help="also write every number to this file")
    a = ap.parse_args()

    print(f"running Tessera: {a.tessera} bench {' '.join(a.workloads)}", file=sys.stderr)
    t = subprocess.run([a.tessera, "bench", "--json", "--repeat", str(a.repeat), "--seconds", str(a.seconds),
                        *a.workloads], capture_output=True, text=True)
    if t.returncode != 0:
        sys.exit("tessera bench failed:\n" + t.stderr[-2000:])
    tessera = {w["name"]: w for w in json.loads(t.stdout.strip().splitlines()[-1])["workloads"]}
    torch_names = [n for n in a.workloads if n in WORKLOADS]
    print("running PyTorch (tuned: 2 threads, OPENBLAS_NUM_THREADS=1)", file=sys.stderr)
    tuned = run_torch("tuned", torch_names, a.repeat, a.seconds)
    print("running PyTorch (default settings)", file=sys.stderr)
    default = run_torch("default", torch_names, a.repeat, a.seconds)

    rows = []
    print(f"{'workload':<22}{'unit':<11}{'Tessera':>11}{'PyTorch':>11}{'PT default':>12}{'ratio':>8}")
    for name in a.workloads:
        tw = tessera.get(name)
        if tw is None:
            continue
        pt, pd = tuned.get(name), default.get(name)
        ratio = None
        if pt:
            ratio = tw["median"] / pt["median"] if tw["higher_is_better"] else pt["median"] / tw["median"]
        rows.append({"workload": name, "unit": tw["unit"], "tessera": tw, "pytorch_tuned": pt, "pytorch_default": pd,
                     "ratio": ratio})
        fmt = lambda v: "-" if v is None else (f"{v:.0f}" if v >= 100 else f"{v:.3g}")
        print(f"{name:<22}{tw['unit']:<11}{fmt(tw['median']):>11}{fmt(pt and pt['median']):>11}"
              f"{fmt(pd and pd['median']):>12}{('-' if ratio is None else f'{ratio:.2f}x'):>8}")
    print("ratio > 1: Tessera faster than tuned PyTorch (medians of %d runs)" % a.repeat)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
