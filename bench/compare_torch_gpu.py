#!/usr/bin/env python3
"""Runs Tessera's GPU benchmark workloads and the same jobs in PyTorch and JAX, in the same call, and prints ratios.

    python3 bench/compare_torch_gpu.py [--tessera .device/bin/tessera] [--repeat 5] [--seconds 0.5]
                                       [--workloads mlp_train_b64 ...] [--json OUT.json]
                                       [--skip-jax] [--skip-compile]
    python3 bench/compare_torch_gpu.py --train-fashion-mnist DATA_DIR [--epochs 3] [--json OUT.json]

For the machine with one NVIDIA GPU (written for an H200 with PyTorch 2.x on CUDA and JAX with its CUDA
plugin). Tessera runs first, as `tessera bench WORKLOAD... --backend cuda --repeat R --seconds S --json`
(TESSERA_TF32=1 in its environment for the *_tf32 workloads); a workload that this build of Tessera
does not know is reported as "not in this build". Then every peer runs in a worker process of its own,
one per (framework, workload), so that precision settings, compile caches and GPU memory never leak
from one workload into the next, and a peer that crashes costs only its own rows:

  training steps (mlp_train_b64, mlp_train_b4096_tf32, cnn_train_b256; µs per step, lower is better)
    PyTorch eager                 zero_grad(set_to_none=True); loss.backward(); Adam.step()  (default Adam)
    PyTorch eager, fused Adam     the same with Adam(fused=True)
    PyTorch torch.compile         the whole step function through torch.compile (default mode)
    PyTorch CUDA graph            the whole step (forward, backward, Adam(capturable=True)) captured once
                                  with torch.cuda.graph after 3 warm-up steps on a side stream, replayed
    JAX jit                       hand-written model, optax Adam (or a written-out Adam), donate_argnums
  gpu_fused_axpb_256m (GB/s, 8 bytes per element): PyTorch eager (3 kernels), torch.compile, JAX jit;
    each row also shows its share of gpu_copy_256m, PyTorch's y.copy_(x) bandwidth over 256M floats.
  gpu_bf16_gemm_8192 (TFLOP/s): torch.matmul (cuBLAS), JAX jit dot.
  compile_mlp_step_cold/_cached (ms): the first call of the torch.compile'd MLP step (cold: inductor's
    caches disabled; cached: after torch._dynamo.reset() with the caches filled) and JAX's
    lower().compile() of its step (cold: no persistent cache; cached: from a persistent cache).
    These are not comparable exactly: each framework compiles a different amount of work.

Matmul precision is explicit: IEEE float32 for the plain workloads (PyTorch's cuDNN would otherwise use
TF32 for the convolutions; JAX gets default_matmul_precision("float32")), TF32 for the *_tf32 one.
Every number is the median of `repeat` timed runs of about `seconds` each after warm-up, with the GPU
synchronised at the end of every run (torch.cuda.synchronize / block_until_ready), as Tessera measures.
The ratio column is "Tessera vs this row", oriented so that > 1 means Tessera is faster. The issue's
targets are printed beside the Tessera rows and summarised at the end as met / not met.

--train-fashion-mnist DATA_DIR runs `tessera train --device cuda --epochs 3 --data-dir DATA_DIR` (timing
its wall clock, reading its test accuracy) and then the same recipe in PyTorch on the GPU (MLP
784-1024-512-256-10, Adam lr 1e-3, batch 64, shuffled each epoch, pixels / 255; Fashion-MNIST IDX files,
gzip or raw), and prints both wall times, both accuracies and the ratio.
"""
import argparse, contextlib, gc, gzip, json, os, re, statistics, struct, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULT_MARK = "@@COMPARE_TORCH_GPU_RESULT@@ "
WORKER_TIMEOUT_S = 1200
DEVICE = "cuda"  # where the PyTorch peers run

# What each workload is; `unit` is the unit every row of it is shown in.
SPECS = {
    "mlp_train_b64": {"kind": "train", "model": "mlp", "batch": 64, "tf32": False, "unit": "us",
                      "target": ("max", 80.0)},
    "mlp_train_b4096_tf32": {"kind": "train", "model": "mlp", "batch": 4096, "tf32": True, "unit": "us",
                             "target": ("max", 150.0)},
    "cnn_train_b256": {"kind": "train", "model": "cnn", "batch": 256, "tf32": False, "unit": "us",
                       "target": ("max", 400.0)},
    "gpu_fused_axpb_256m": {"kind": "fused", "n": 256 * 2 ** 20, "unit": "GB/s",
                            "target": ("fraction_of", 0.95, "gpu_copy_256m", "PyTorch y.copy_(x)")},
    "gpu_bf16_gemm_8192": {"kind": "gemm", "n": 8192, "unit": "TFLOP/s",
                           "target": ("fraction_of", 0.95, "gpu_bf16_gemm_8192", "PyTorch torch.matmul (cuBLAS)")},
    "compile_mlp_step_cold": {"kind": "compile", "cold": True, "unit": "ms", "target": None},
    "compile_mlp_step_cached": {"kind": "compile", "cold": False, "unit": "ms", "target": None},
}
WORKLOADS = list(SPECS)
COPY_WORKLOAD = "gpu_copy_256m"  # measured by the PyTorch worker of gpu_fused_axpb_256m
NOT_COMPARABLE = "not comparable exactly"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def unavailable(reason):
    return {"unavailable": str(reason)}


def describe(exc):
    text = f"{type(exc).__name__}: {exc}".strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__


# ---------------------------------------------------------------------------------------------------
# Measurement, mirroring tessera/bench/measure.cpp


def measure(body, repeat, seconds, finish=None, warmup=0, rate_units=None, scale=1e6):
    """Median over `repeat` timed runs of about `seconds` each; `finish` (a GPU sync) ends every run.

    `warmup` untimed calls first (compiles, captures, lazy optimizer state), then two calls that size
    the runs, as Tessera does. Returns units per second when `rate_units` (work per call) is given,
    else the time per call times `scale` (1e6: µs)."""
    finish = finish or (lambda: None)
    for _ in range(warmup):
        body()
    finish()
    sizing = []
    for _ in range(2):
        t = time.perf_counter(); body(); finish(); sizing.append(time.perf_counter() - t)
    calls = max(1, int(seconds / max(1e-7, min(sizing))))
    values = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(calls):
            body()
        finish()
        dt = time.perf_counter() - t
        values.append(rate_units * calls / dt if rate_units is not None else dt / calls * scale)
    return summary(values, calls_per_run=calls)


def summary(values, **extra):
    out = {"median": statistics.median(values), "min": min(values), "max": max(values), "runs": len(values)}
    out.update(extra)
    return out


def guarded(label, fn, *args, **kwargs):
    """Runs one peer setting; any failure becomes an "unavailable" entry instead of ending the run."""
    log(f"  {label}...")
    try:
        result = fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 -- every failure of a peer is reported, none is fatal
        log(f"  {label}: unavailable: {describe(e)}")
        return unavailable(describe(e))
    if "median" in result:
        log(f"  {label}: {fmt_value(result['median'])}")
    return result


# ---------------------------------------------------------------------------------------------------
# PyTorch worker


def torch_set_precision(torch, tf32):
    """TF32 on or off for cuBLAS matmuls and cuDNN convolutions.

    Through the legacy allow_tf32 flags, which keep the legacy and the per-backend state in step: in
    PyTorch 2.9-2.11, inductor still reads the legacy getters, which raise once only the new
    fp32_precision API was written. The new API is the fallback where the legacy flags are gone."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Please use the new API settings to control TF32 behavior"
        try:
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.backends.cudnn.allow_tf32 = tf32
        except (AttributeError, AssertionError, RuntimeError):
            mode = "tf32" if tf32 else "ieee"
            torch.backends.cuda.matmul.fp32_precision = mode
            torch.backends.cudnn.conv.fp32_precision = mode


def torch_model(name):
    import torch.nn as nn
    if name == "mlp":
        return nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 512), nn.ReLU(),
                             nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10))
    return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(1600, 128), nn.ReLU(), nn.Linear(128, 10))


def torch_batch(torch, model, batch):
    shape = (batch, 784) if model == "mlp" else (batch, 1, 28, 28)
    return torch.rand(*shape, device=DEVICE), torch.randint(0, 10, (batch,), device=DEVICE)


def torch_step_fn(torch, model, opt, x, y):
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    return step


def torch_eager_step(torch, model, x, y, fused):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, **({"fused": True} if fused else {}))
    return torch_step_fn(torch, model, opt, x, y)


def torch_compiled_step(torch, model, x, y):
    torch._dynamo.reset()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return torch.compile(torch_step_fn(torch, model, opt, x, y))


def torch_graph_step(torch, model, x, y):
    """The whole-network capture recipe of PyTorch's CUDA graphs notes; x and y are the static inputs."""
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, capturable=True)
    step = torch_step_fn(torch, model, opt, x, y)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    loss_fn = torch.nn.CrossEntropyLoss()
    with torch.cuda.graph(graph):
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    return graph.replay


def torch_train_setting(torch, spec, make_step, args, detail):
    torch.manual_seed(0)
    model = torch_model(spec["model"]).to(DEVICE)
    x, y = torch_batch(torch, spec["model"], spec["batch"])
    step = make_step(torch, model, x, y)
    m = measure(step, args.repeat, args.seconds, torch.cuda.synchronize, warmup=3)
    m.update(unit="us", higher_is_better=False, detail=detail)
    return m


def torch_train_rows(torch, name, spec, args):
    precision = "TF32" if spec["tf32"] else "fp32"
    settings = [
        ("eager", lambda t, m, x, y: torch_eager_step(t, m, x, y, fused=False), "Adam (default: foreach)"),
        ("eager, fused Adam", lambda t, m, x, y: torch_eager_step(t, m, x, y, fused=True), "Adam(fused=True)"),
        ("torch.compile", torch_compiled_step, "whole step, default mode"),
        ("CUDA graph", torch_graph_step, "whole step captured, Adam(capturable=True)"),
    ]
    rows = {}
    for label, make_step, detail in settings:
        if label == "torch.compile" and args.skip_compile:
            rows[label] = unavailable("skipped (--skip-compile)")
            continue
        rows[label] = guarded(f"[torch] {name}: {label}", torch_train_setting, torch, spec, make_step, args,
                              f"{detail}, {precision}, batch {spec['batch']}")
        torch_free(torch)
    return {name: rows}


def torch_free(torch):
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def torch_fused_rows(torch, name, spec, args):
    n = spec["n"]
    gb = 8.0 * n / 1e9
    x = torch.rand(n, device=DEVICE)
    y = torch.empty_like(x)

    def eager():
        torch.mul(x, 1.5, out=y); y.add_(0.25); y.relu_()

    def compiled():
        torch._dynamo.reset()
        f = torch.compile(lambda t: torch.relu(t * 1.5 + 0.25))
        return rate(lambda: f(x))

    def rate(body):
        return measure(body, args.repeat, args.seconds, torch.cuda.synchronize, warmup=3, rate_units=gb)

    def tagged(m, detail):
        m.update(unit="GB/s", higher_is_better=True, detail=detail)
        return m

    rows = {"eager (3 kernels)": guarded(f"[torch] {name}: eager", lambda: tagged(rate(eager), "mul, add_, relu_"))}
    if args.skip_compile:
        rows["torch.compile"] = unavailable("skipped (--skip-compile)")
    else:
        rows["torch.compile"] = guarded(f"[torch] {name}: torch.compile",
                                        lambda: tagged(compiled(), "relu(x*1.5+0.25), one fused kernel"))
    copy = guarded(f"[torch] {COPY_WORKLOAD}: y.copy_(x)",
                   lambda: tagged(rate(lambda: y.copy_(x)), "device-to-device copy, read + write"))
    return {name: rows, COPY_WORKLOAD: {"y.copy_(x)": copy}}


def torch_gemm_rows(torch, name, spec, args):
    n = spec["n"]

    def run():
        a = torch.randn(n, n, device=DEVICE, dtype=torch.bfloat16)
        b = torch.randn(n, n, device=DEVICE, dtype=torch.bfloat16)
        c = torch.empty(n, n, device=DEVICE, dtype=torch.bfloat16)
        m = measure(lambda: torch.matmul(a, b, out=c), args.repeat, args.seconds, torch.cuda.synchronize,
                    warmup=3, rate_units=2.0 * n ** 3 / 1e12)
        m.update(unit="TFLOP/s", higher_is_better=True, detail=f"bf16 {n}^3, out=")
        return m
    return {name: {"torch.matmul (cuBLAS)": guarded(f"[torch] {name}: torch.matmul", run)}}


def torch_compile_first_call(torch, cold, runs):
    """ms of the first call of the torch.compile'd MLP step (batch 64, Adam state already created)."""
    import torch._inductor.config as inductor_config
    inductor_config.force_disable_caches = cold
    torch.manual_seed(0)
    model = torch_model("mlp").to(DEVICE)
    x, y = torch_batch(torch, "mlp", 64)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    step = torch_step_fn(torch, model, opt, x, y)
    step()  # eager: creates Adam's state and loads the CUDA libraries, as Tessera's first eager step does
    if not cold:  # fill the caches the timed compiles then read
        torch._dynamo.reset()
        torch.compile(step)()
    times = []
    for _ in range(runs):
        torch._dynamo.reset()
        compiled = torch.compile(step)
        torch.cuda.synchronize()
        t = time.perf_counter()
        compiled()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t) * 1e3)
    m = summary(times)
    caches = "inductor caches disabled" if cold else "after torch._dynamo.reset(), inductor caches filled"
    m.update(unit="ms", higher_is_better=False, detail=f"{NOT_COMPARABLE}: first call, {caches}")
    return m


def torch_compile_rows(torch, name, spec, args):
    label = "torch.compile first call"
    if args.skip_compile:
        return {name: {label: unavailable("skipped (--skip-compile)")}}
    runs = 1 if spec["cold"] else min(args.repeat, 3)
    return {name: {label: guarded(f"[torch] {name}: {label}", torch_compile_first_call, torch, spec["cold"], runs)}}


def torch_setup(spec):
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError(f"torch {torch.__version__}: CUDA not available")
    torch_set_precision(torch, spec.get("tf32", False))
    return torch, {"torch": torch.__version__, "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0)}


TORCH_HANDLERS = {"train": torch_train_rows, "fused": torch_fused_rows, "gemm": torch_gemm_rows,
                  "compile": torch_compile_rows}


# ---------------------------------------------------------------------------------------------------
# JAX worker


def jax_adam(jax, lr):
    """optax.adam when optax is installed, else Adam written out with optax's (init, update) interface."""
    try:
        import optax
        return optax.adam(lr), optax.apply_updates, "optax.adam"
    except ImportError:
        pass
    jnp, tree = jax.numpy, jax.tree_util.tree_map
    b1, b2, eps = 0.9, 0.999, 1e-8

    class Adam:
        @staticmethod
        def init(params):
            return (jnp.zeros([], jnp.int32), tree(jnp.zeros_like, params), tree(jnp.zeros_like, params))

        @staticmethod
        def update(grads, state, params=None):
            t, m, v = state
            t = t + 1
            m = tree(lambda m_, g: b1 * m_ + (1 - b1) * g, m, grads)
            v = tree(lambda v_, g: b2 * v_ + (1 - b2) * g * g, v, grads)
            c1, c2 = 1 - b1 ** t.astype(jnp.float32), 1 - b2 ** t.astype(jnp.float32)
            updates = tree(lambda m_, v_: -lr * (m_ / c1) / (jnp.sqrt(v_ / c2) + eps), m, v)
            return updates, (t, m, v)
    return Adam, (lambda p, u: tree(lambda a, b: a + b, p, u)), "Adam written out"


def jax_init_params(jax, model, seed=0):
    """PyTorch's default initialisation bounds: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weights and biases."""
    import numpy as np
    rng = np.random.default_rng(seed)
    if model == "mlp":
        shapes = [((784, 1024), 784), ((1024, 512), 1024), ((512, 256), 512), ((256, 10), 256)]
        layers = [(s, (s[1],), fan) for s, fan in shapes]
    else:
        layers = [((32, 1, 3, 3), (32,), 9), ((64, 32, 3, 3), (64,), 288), ((1600, 128), (128,), 1600),
                  ((128, 10), (10,), 128)]
    params = []
    for w_shape, b_shape, fan_in in layers:
        bound = 1.0 / np.sqrt(fan_in)
        params.append((jax.numpy.asarray(rng.uniform(-bound, bound, w_shape).astype(np.float32)),
                       jax.numpy.asarray(rng.uniform(-bound, bound, b_shape).astype(np.float32))))
    return params


def jax_apply(jax, model):
    jnp, lax = jax.numpy, jax.lax

    def mlp(params, x):
        for i, (w, b) in enumerate(params):
            x = x @ w + b
            if i + 1 < len(params):
                x = jax.nn.relu(x)
        return x

    def conv_relu_pool(x, w, b):
        x = lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=("NCHW", "OIHW", "NCHW"))
        x = jax.nn.relu(x + b[None, :, None, None])
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    def cnn(params, x):
        (w1, b1), (w2, b2), (w3, b3), (w4, b4) = params
        x = conv_relu_pool(conv_relu_pool(x, w1, b1), w2, b2)
        x = jax.nn.relu(x.reshape(x.shape[0], -1) @ w3 + b3)
        return x @ w4 + b4
    return mlp if model == "mlp" else cnn


def jax_train_step(jax, model):
    """A jitted (params, opt_state, x, y) -> (params, opt_state, loss) step that donates params and state."""
    jnp = jax.numpy
    apply = jax_apply(jax, model)
    tx, apply_updates, adam_name = jax_adam(jax, 1e-3)

    def loss_fn(params, x, y):
        logp = jax.nn.log_softmax(apply(params, x))
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = tx.update(grads, opt_state, params)
        return apply_updates(params, updates), opt_state, loss
    return jax.jit(step, donate_argnums=(0, 1)), tx, adam_name


def jax_batch(jax, model, batch):
    import numpy as np
    rng = np.random.default_rng(1)
    shape = (batch, 784) if model == "mlp" else (batch, 1, 28, 28)
    return (jax.numpy.asarray(rng.random(shape, dtype=np.float32)),
            jax.numpy.asarray(rng.integers(0, 10, batch).astype(np.int32)))


def jax_precision(jax, precision):
    """A context with this default matmul precision ("float32", "tensorfloat32") for tracing and calls."""
    if hasattr(jax, "default_matmul_precision"):
        return jax.default_matmul_precision(precision)
    jax.config.update("jax_default_matmul_precision", precision)
    return contextlib.nullcontext()


def jax_key(jax, seed):
    return getattr(jax.random, "key", jax.random.PRNGKey)(seed)


def jax_train_rows(jax, name, spec, args):
    precision = "tensorfloat32" if spec["tf32"] else "float32"

    def run():
        with jax_precision(jax, precision):
            step, tx, adam_name = jax_train_step(jax, spec["model"])
            params = jax_init_params(jax, spec["model"])
            state = [params, tx.init(params)]
            x, y = jax_batch(jax, spec["model"], spec["batch"])

            def body():
                state[0], state[1], _ = step(state[0], state[1], x, y)
            m = measure(body, args.repeat, args.seconds, lambda: jax.block_until_ready(state), warmup=3)
        m.update(unit="us", higher_is_better=False,
                 detail=f"{adam_name}, donate_argnums, precision {precision}, batch {spec['batch']}")
        return m
    return {name: {"jit": guarded(f"[jax] {name}: jit", run)}}


def jax_fused_rows(jax, name, spec, args):
    jnp = jax.numpy

    def run():
        x = jax.random.uniform(jax_key(jax, 0), (spec["n"],), jnp.float32)
        f = jax.jit(lambda t: jnp.maximum(t * 1.5 + 0.25, 0.0))
        out = [None]

        def body():
            out[0] = f(x)
        m = measure(body, args.repeat, args.seconds, lambda: out[0].block_until_ready(), warmup=3,
                    rate_units=8.0 * spec["n"] / 1e9)
        m.update(unit="GB/s", higher_is_better=True, detail="jnp.maximum(x*1.5+0.25, 0)")
        return m
    return {name: {"jit": guarded(f"[jax] {name}: jit", run)}}


def jax_gemm_rows(jax, name, spec, args):
    jnp, n = jax.numpy, spec["n"]

    def run():
        ka, kb = jax.random.split(jax_key(jax, 0))
        a = jax.random.normal(ka, (n, n), jnp.bfloat16)
        b = jax.random.normal(kb, (n, n), jnp.bfloat16)
        f = jax.jit(jnp.dot)
        out = [None]

        def body():
            out[0] = f(a, b)
        m = measure(body, args.repeat, args.seconds, lambda: out[0].block_until_ready(), warmup=3,
                    rate_units=2.0 * n ** 3 / 1e12)
        m.update(unit="TFLOP/s", higher_is_better=True, detail=f"bf16 {n}^3, jit(jnp.dot)")
        return m
    return {name: {"jit dot": guarded(f"[jax] {name}: jit dot", run)}}


def jax_compile_time(jax, cold, runs):
    """ms of lower().compile() of the MLP step (batch 64); cached: from a persistent compilation cache."""
    if not cold:
        jax.config.update("jax_compilation_cache_dir", tempfile.mkdtemp(prefix="jax_cache_"))
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    step, tx, _ = jax_train_step(jax, "mlp")
    params = jax_init_params(jax, "mlp")
    opt_state = tx.init(params)
    x, y = jax_batch(jax, "mlp", 64)
    with jax_precision(jax, "float32"):
        if not cold:
            step.lower(params, opt_state, x, y).compile()  # fills the persistent cache
        times = []
        for _ in range(runs):
            jax.clear_caches()
            t = time.perf_counter()
            step.lower(params, opt_state, x, y).compile()
            times.append((time.perf_counter() - t) * 1e3)
    m = summary(times)
    how = "no persistent cache" if cold else "from the persistent compilation cache"
    m.update(unit="ms", higher_is_better=False, detail=f"{NOT_COMPARABLE}: lower().compile(), {how}")
    return m


def jax_compile_rows(jax, name, spec, args):
    runs = 1 if spec["cold"] else min(args.repeat, 3)
    return {name: {"lower().compile()": guarded(f"[jax] {name}: compile", jax_compile_time, jax, spec["cold"], runs)}}


def jax_setup(spec):
    import jax
    devices = jax.devices()
    if devices[0].platform != "gpu":
        raise RuntimeError(f"jax {jax.__version__}: no GPU device (got {devices[0].platform})")
    return jax, {"jax": jax.__version__, "jax_device": str(devices[0])}


JAX_HANDLERS = {"train": jax_train_rows, "fused": jax_fused_rows, "gemm": jax_gemm_rows, "compile": jax_compile_rows}

# framework -> (setup, handlers by workload kind, prefix of its rows' names)
FRAMEWORKS = {"torch": (torch_setup, TORCH_HANDLERS, "PyTorch"), "jax": (jax_setup, JAX_HANDLERS, "JAX")}


def worker_main(args):
    """Inside a worker process: runs one framework's settings of one workload, prints one result line."""
    real_stdout, sys.stdout = sys.stdout, sys.stderr  # library chatter goes to stderr, the result to stdout
    setup, handlers, prefix = FRAMEWORKS[args.worker]
    name = args.worker_workload
    spec = SPECS[name]
    try:
        module, env = setup(spec)
    except Exception as e:  # noqa: BLE001 -- the framework itself is unusable (import, no GPU)
        result = {"error": describe(e), "framework_unusable": True}
    else:
        try:
            rows = handlers[spec["kind"]](module, name, spec, args)
            result = {"env": env, "rows": {w: {f"{prefix} {k}": v for k, v in r.items()} for w, r in rows.items()}}
        except Exception as e:  # noqa: BLE001 -- e.g. out of memory while making the inputs
            result = {"error": describe(e)}
    real_stdout.write(RESULT_MARK + json.dumps(result) + "\n")
    real_stdout.flush()


def run_worker(framework, name, args):
    """Starts a worker process; returns {"env": ..., "rows": {workload: {impl: result}}} or {"error": ...}."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", framework, "--worker-workload", name,
           "--repeat", str(args.repeat), "--seconds", str(args.seconds)]
    if args.skip_compile:
        cmd.append("--skip-compile")
    env = dict(os.environ)
    if framework == "jax":
        env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # leave the GPU's memory to the others
    try:
        out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, timeout=WORKER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"error": f"worker timed out after {WORKER_TIMEOUT_S} s"}
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith(RESULT_MARK)]
    if not lines:
        return {"error": f"worker exited with status {out.returncode} and no result (its stderr is above)"}
    return json.loads(lines[-1][len(RESULT_MARK):])


# ---------------------------------------------------------------------------------------------------
# Tessera


def default_tessera():
    for path in (os.path.join(ROOT, ".device", "bin", "tessera"), os.path.join(ROOT, "build", "tessera")):
        if os.path.exists(path):
            return path
    return os.path.join(ROOT, ".device", "bin", "tessera")


def needs_tf32(name):
    return bool(SPECS.get(name, {}).get("tf32")) or name.endswith("_tf32")


def tessera_env(name):
    env = dict(os.environ)
    if needs_tf32(name):
        env["TESSERA_TF32"] = "1"
    return env


def run_tee(cmd, env=None):
    """Runs cmd, passing its stderr through as it comes; returns (status, stdout, stderr)."""
    with tempfile.TemporaryFile("w+b") as stdout:
        proc = subprocess.Popen(cmd, env=env, stdout=stdout, stderr=subprocess.PIPE)
        err = bytearray()
        for chunk in iter(lambda: proc.stderr.read1(4096), b""):
            sys.stderr.buffer.write(chunk)
            sys.stderr.flush()
            err += chunk
        status = proc.wait()
        stdout.seek(0)
        return status, stdout.read().decode(errors="replace"), err.decode(errors="replace")


def tessera_bench(tessera, names, args):
    """One `tessera bench ... --json` call: returns ({name: measurement}, None) or (None, error text)."""
    cmd = [tessera, "bench", *names, "--backend", "cuda", "--repeat", str(args.repeat), "--seconds",
           str(args.seconds), "--json"]
    log("[tessera] " + " ".join(cmd))
    try:
        status, stdout, stderr = run_tee(cmd, env=tessera_env(names[0]))
    except OSError as e:
        return None, describe(e)
    if status != 0:
        tail = (stderr.strip().splitlines() or [f"exit status {status}"])[-1]
        return None, f"tessera bench failed: {tail[:300]}"
    try:
        doc = json.loads(stdout.strip().splitlines()[-1])
    except (ValueError, IndexError) as e:
        return None, f"unreadable JSON from tessera bench: {describe(e)}"
    if doc.get("backend") != "cuda":
        log(f"[tessera] warning: backend in its JSON is {doc.get('backend')!r}, not 'cuda'")
    return {w["name"]: w for w in doc.get("workloads", [])}, None


def tessera_known(tessera):
    """The workload names `tessera bench --list` prints, or None when it cannot say."""
    try:
        out = subprocess.run([tessera, "bench", "--list", "--backend", "cuda"], capture_output=True, text=True,
                             timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    return {line.split()[0] for line in out.stdout.splitlines() if line.strip()}


def run_tessera(tessera, names, args):
    """{name: Tessera's measurement or unavailable}; TF32 workloads run in their own call (TESSERA_TF32=1)."""
    if not os.path.exists(tessera):
        return {n: unavailable(f"no Tessera binary at {tessera}") for n in names}
    results = {}
    groups = [[n for n in names if not needs_tf32(n)], [n for n in names if needs_tf32(n)]]
    for group in (g for g in groups if g):
        found, error = tessera_bench(tessera, group, args)
        if found is None:
            log(f"[tessera] {error}; running the workloads one by one")
            found = run_tessera_one_by_one(tessera, group, args)
        for n in group:
            results[n] = found.get(n, unavailable("missing from tessera bench's JSON"))
    return results


def run_tessera_one_by_one(tessera, names, args):
    known = tessera_known(tessera)
    results = {}
    for n in names:
        if known is not None and n not in known:
            results[n] = unavailable("not in this build")
            continue
        found, error = tessera_bench(tessera, [n], args)
        if found is None:
            results[n] = unavailable("not in this build" if known is None and "unknown" in error.lower() else error)
        else:
            results.update(found)
    return results


UNIT_FACTORS = {("GFLOP/s", "TFLOP/s"): 1e-3, ("us", "ms"): 1e-3, ("ms", "us"): 1e3, ("MB/s", "GB/s"): 1e-3}


def in_unit(m, unit, batch=None):
    """Tessera's measurement converted to `unit` (samples/s -> µs per step, GFLOP/s -> TFLOP/s, ...)."""
    have = m.get("unit")
    if "median" not in m or unit is None or have == unit:
        return m
    keys = ("median", "min", "max")
    if have == "samples/s" and unit == "us" and batch:
        conv = {k: batch / m[k] * 1e6 for k in keys}
        conv["min"], conv["max"] = conv["max"], conv["min"]  # the fastest rate is the shortest step
    elif (have, unit) in UNIT_FACTORS:
        conv = {k: m[k] * UNIT_FACTORS[(have, unit)] for k in keys}
    else:
        return dict(m, note=f"unit {have} not converted to {unit}")
    return dict(m, **conv, unit=unit, higher_is_better=unit not in ("us", "ms"), tessera_unit=have,
                tessera_median=m["median"])


# ---------------------------------------------------------------------------------------------------
# Table, ratios, targets


def fmt_value(v):
    return "-" if v is None else (f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}")


def ratio_of(tessera, peer, unit):
    """Tessera vs the peer, > 1 when Tessera is faster."""
    if "median" not in tessera or "median" not in peer or not peer["median"] or not tessera["median"]:
        return None
    higher_is_better = unit not in ("us", "ms")
    return tessera["median"] / peer["median"] if higher_is_better else peer["median"] / tessera["median"]


def target_check(name, tessera, peers):
    """(text, met) for the issue's target of this workload, met None when it cannot be decided."""
    spec = SPECS.get(name) or {}
    target = spec.get("target")
    if not target:
        return None
    if target[0] == "max":
        text = f"<= {target[1]:g} {spec['unit']}"
        met = tessera["median"] <= target[1] if "median" in tessera else None
        return text, met
    fraction, ref_workload, ref_impl = target[1:]
    text = f">= {fraction:.0%} of {ref_impl}"
    ref = peers.get(ref_workload, {}).get(ref_impl, {})
    if "median" not in tessera or "median" not in ref:
        return text, None
    return f"{text} ({tessera['median'] / ref['median']:.1%})", tessera["median"] >= fraction * ref["median"]


def build_rows(names, tessera, peers):
    copy = peers.get(COPY_WORKLOAD, {}).get("PyTorch y.copy_(x)", {})
    rows = []
    for name in names + ([COPY_WORKLOAD] if COPY_WORKLOAD in peers else []):
        spec = SPECS.get(name, {})
        unit = spec.get("unit", "GB/s" if name == COPY_WORKLOAD else None)
        t = in_unit(tessera[name], unit, spec.get("batch")) if name in tessera else None
        impls = ([("Tessera", t)] if t is not None else []) + list(peers.get(name, {}).items())
        for impl, m in impls:
            notes = []
            if name == "gpu_fused_axpb_256m" and "median" in m and "median" in copy:
                notes.append(f"{m['median'] / copy['median']:.0%} of copy bandwidth")
            if spec.get("kind") == "compile" and impl != "Tessera":
                notes.append(NOT_COMPARABLE)
            row = {"workload": name, "implementation": impl, "unit": m.get("unit", unit), "result": m,
                   "ratio": None if impl == "Tessera" or t is None else ratio_of(t, m, unit), "notes": notes}
            if impl == "Tessera":
                check = target_check(name, m, peers)
                if check:
                    row["target"], row["target_met"] = check
            rows.append(row)
    return rows


def print_table(rows, repeat):
    print(f"{'workload':<24}{'implementation':<33}{'median':>10} {'unit':<8}{'min .. max':>19}{'tessera vs':>11}"
          "  notes")
    last = None
    for r in rows:
        m = r["result"]
        workload = r["workload"] if r["workload"] != last else ""
        last = r["workload"]
        notes = list(r["notes"])
        if "target" in r:
            verdict = {True: "met", False: "not met", None: "unknown"}[r["target_met"]]
            notes.insert(0, f"target {r['target']}: {verdict}")
        if "median" in m:
            spread = f"{fmt_value(m['min'])} .. {fmt_value(m['max'])}"
            ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}x"
            print(f"{workload:<24}{r['implementation']:<33}{fmt_value(m['median']):>10} {r['unit'] or '':<8}"
                  f"{spread:>19}{ratio:>11}  {'; '.join(notes)}")
        else:
            print(f"{workload:<24}{r['implementation']:<33}  unavailable: {m.get('unavailable', '?')}")
    print(f"tessera vs: > 1 means Tessera is faster than that row (medians of {repeat} runs; "
          "training steps in us per step)")


def print_targets(rows):
    checks = [r for r in rows if "target" in r]
    if not checks:
        return
    print("\ntargets (issue 13):")
    for r in checks:
        verdict = {True: "met", False: "NOT MET", None: "unknown (a number is missing)"}[r["target_met"]]
        value = fmt_value(r["result"].get("median"))
        print(f"  {r['workload']:<24} Tessera {value} {r['unit'] or '':<8} target {r['target']}: {verdict}")


# ---------------------------------------------------------------------------------------------------
# Fashion-MNIST training comparison


def read_idx(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    magic, = struct.unpack(">I", raw[:4])
    rank = magic & 0xFF
    dims = struct.unpack(">" + "I" * rank, raw[4:4 + 4 * rank])
    import numpy as np
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * rank).reshape(dims)


def idx_file(data_dir, stem):
    for candidate in (stem, stem + ".gz"):
        path = os.path.join(data_dir, candidate)
        if os.path.exists(path):
            return path
    raise FileNotFoundError(f"neither {stem} nor {stem}.gz in {data_dir}")


def load_fashion_mnist(data_dir, split):
    import numpy as np
    x = read_idx(idx_file(data_dir, f"{split}-images-idx3-ubyte")).astype(np.float32) / 255.0
    y = read_idx(idx_file(data_dir, f"{split}-labels-idx1-ubyte")).astype(np.int64)
    return x.reshape(len(x), -1), y


def torch_train_fashion_mnist(data_dir, epochs, batch=64, seed=0):
    import torch
    torch_set_precision(torch, False)
    torch.manual_seed(seed)
    start = time.perf_counter()
    xtr, ytr = (torch.from_numpy(a).to(DEVICE) for a in load_fashion_mnist(data_dir, "train"))
    xte, yte = (torch.from_numpy(a).to(DEVICE) for a in load_fashion_mnist(data_dir, "t10k"))
    model = torch_model("mlp").to(DEVICE)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    gen = torch.Generator(device=DEVICE).manual_seed(seed)
    train_s, acc = 0.0, 0.0
    for epoch in range(1, epochs + 1):
        model.train()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        order = torch.randperm(len(xtr), device=DEVICE, generator=gen)
        for i in range(0, len(xtr), batch):
            idx = order[i:i + batch]
            opt.zero_grad(set_to_none=True)
            loss_fn(model(xtr[idx]), ytr[idx]).backward()
            opt.step()
        torch.cuda.synchronize()
        train_s += time.perf_counter() - t0
        model.eval()
        with torch.no_grad():
            correct = sum(int((model(xte[i:i + 1000]).argmax(1) == yte[i:i + 1000]).sum())
                          for i in range(0, len(xte), 1000))
        acc = correct / len(xte)
        log(f"[torch] epoch {epoch}: test accuracy {100 * acc:.2f}%, {epoch * len(xtr) / train_s:.0f} samples/s")
    return {"wall_s": time.perf_counter() - start, "train_s": train_s, "test_accuracy": acc,
            "samples_per_s": epochs * len(xtr) / train_s, "torch": torch.__version__}


def tessera_train(tessera, data_dir, epochs, out_dir="/tmp/tessera-train"):
    """Wall clock and test accuracy of `tessera train` (its --json line, else its "test accuracy N%" text)."""
    cmd = [tessera, "train", "--device", "cuda", "--epochs", str(epochs), "--data-dir", data_dir, "--out", out_dir,
           "--json"]
    log("[tessera] " + " ".join(cmd))
    t0 = time.perf_counter()
    try:
        status, stdout, stderr = run_tee(cmd)
    except OSError as e:
        return unavailable(describe(e))
    result = {"wall_s": time.perf_counter() - t0, "returncode": status}
    for line in reversed(stdout.strip().splitlines()):
        with contextlib.suppress(ValueError):
            doc = json.loads(line)
            if isinstance(doc, dict) and "test_accuracy" in doc:
                result.update(report=doc, test_accuracy=doc["test_accuracy"])
                break
    if "test_accuracy" not in result:
        found = re.findall(r"test accuracy ([0-9.]+)%", stdout + "\n" + stderr)
        if found:
            result["test_accuracy"] = float(found[-1]) / 100
    if status != 0 or "test_accuracy" not in result:
        result["last_lines"] = (stdout + stderr).strip().splitlines()[-10:]
    if status != 0:
        result["unavailable"] = f"tessera train exited with status {status}"
    return result


def train_mode(args):
    tessera = tessera_train(args.tessera, args.train_fashion_mnist, args.epochs)
    try:
        torch_res = torch_train_fashion_mnist(args.train_fashion_mnist, args.epochs)
    except Exception as e:  # noqa: BLE001
        torch_res = unavailable(describe(e))
    acc = lambda r: "-" if r.get("test_accuracy") is None else f"{100 * r['test_accuracy']:.2f}%"
    print(f"Fashion-MNIST MLP, {args.epochs} epochs, batch 64, Adam lr 1e-3, on the GPU")
    for label, r in (("Tessera (tessera train, process wall clock)", tessera),
                     ("PyTorch eager (in-process)", torch_res)):
        if "wall_s" in r:
            extra = f", PyTorch training loop {r['train_s']:.1f} s" if "train_s" in r else ""
            if "report" in r and "wall_s" in r["report"]:
                extra = f", its own report: {r['report']['wall_s']:.1f} s"
            print(f"  {label:<46} wall {r['wall_s']:.1f} s, test accuracy {acc(r)}{extra}")
        if "unavailable" in r:
            print(f"  {label:<46} unavailable: {r['unavailable']}")
        for line in r.get("last_lines", []):
            print(f"    | {line}")
    if "wall_s" in tessera and "wall_s" in torch_res and "unavailable" not in tessera:
        ratio = torch_res["wall_s"] / tessera["wall_s"]
        print(f"  ratio (PyTorch wall / Tessera wall, > 1: Tessera faster): {ratio:.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"mode": "train-fashion-mnist", "epochs": args.epochs, "tessera": tessera, "pytorch": torch_res},
                      f, indent=1)


# ---------------------------------------------------------------------------------------------------


def bench_mode(args):
    names = args.workloads
    tessera = run_tessera(args.tessera, names, args)
    peers, env = {}, {}
    frameworks = ["torch"] + ([] if args.skip_jax else ["jax"])
    unusable = {}  # framework -> why: once it cannot even start, its other workloads are not tried
    for name in (n for n in names if n in SPECS):
        for framework in frameworks:
            label = FRAMEWORKS[framework][2]
            if framework in unusable:
                peers.setdefault(name, {})[label] = unavailable(unusable[framework])
                continue
            log(f"[{framework}] {name}: starting a worker")
            got = run_worker(framework, name, args)
            if "error" in got:
                log(f"[{framework}] {name}: unavailable: {got['error']}")
                peers.setdefault(name, {})[label] = unavailable(got["error"])
                if got.get("framework_unusable"):
                    unusable[framework] = got["error"]
                continue
            env.update(got.get("env", {}))
            for workload, rows in got["rows"].items():
                peers.setdefault(workload, {}).update(rows)
    if args.skip_jax:
        for name in (n for n in names if n in SPECS):
            peers.setdefault(name, {})["JAX"] = unavailable("skipped (--skip-jax)")
    rows = build_rows(names, tessera, peers)
    print()
    print_table(rows, args.repeat)
    print_targets(rows)
    if env:
        print("\n" + ", ".join(f"{k} {v}" for k, v in env.items()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"repeat": args.repeat, "seconds": args.seconds, "tessera_binary": args.tessera,
                       "environment": env, "tessera": tessera, "rows": rows}, f, indent=1)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessera", default=default_tessera(),
                    help="the Tessera CLI (default: .device/bin/tessera, else build/tessera)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per measurement (the median is reported)")
    ap.add_argument("--seconds", type=float, default=0.5, help="approximate length of one timed run")
    ap.add_argument("--workloads", nargs="+", default=WORKLOADS, metavar="NAME",
                    help="subset to run (default: %s)" % " ".join(WORKLOADS))
    ap.add_argument("--json", metavar="OUT", help="also write every number to this file")
    ap.add_argument("--skip-jax", action="store_true", help="no JAX rows")
    ap.add_argument("--skip-compile", action="store_true", help="no torch.compile rows")
    ap.add_argument("--train-fashion-mnist", metavar="DATA_DIR",
                    help="instead: tessera train vs PyTorch on Fashion-MNIST from DATA_DIR (IDX, gzip or raw)")
    ap.add_argument("--epochs", type=int, default=3, help="epochs for --train-fashion-mnist (default 3)")
    ap.add_argument("--worker", choices=["torch", "jax"], help=argparse.SUPPRESS)
    ap.add_argument("--worker-workload", choices=WORKLOADS, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.repeat < 1 or args.seconds <= 0:
        ap.error("--repeat must be at least 1 and --seconds positive")
    return args


def main():
    args = parse_args()
    if args.worker:
        worker_main(args)
    elif args.train_fashion_mnist:
        train_mode(args)
    else:
        bench_mode(args)


if __name__ == "__main__":
    main()
