#!/usr/bin/env python3
"""LLM inference on one GPU: Tessera (`tessera bench llm --device cuda`, or vulkan with --device) beside Hugging Face transformers on
PyTorch (eager, and torch.compile with a static cache and CUDA graphs), on random-weight models of the same
shapes, in the same call. Prints decode tokens/s at batch 1, a 2,048-token bf16 prefill against the GEMM
rate cuBLAS reaches on that model's products, cold compile times, and the issue's targets as met / not met.

    python3 bench/compare_llm_gpu.py --tessera .device/bin/tessera [--device cuda|vulkan] [--models DIR] [--prompt 128] [--gen 128]
        [--repeat 5] [--skip-torch] [--skip-compile] [--json OUT.json]

Models (made once into --models with `tessera init-model`, seed 1): the Llama-3.2-1B shape (dim 2048, 16
layers, 32 heads, 8 KV heads, FFN 8192, vocab 32000, tied) in bf16, q4_0, q8_0 and q4_k_m, and the GPT-2
small shape (dim 768, 12 layers, 12 heads, FFN 3072, vocab 50257) in bf16. The PyTorch peers build the same
architectures with random weights (LlamaForCausalLM, GPT2LMHeadModel) in bf16: the rates depend on the
shapes and dtypes, not on the values.

Decode rate, both sides: a prompt of p tokens, then n greedy one-token steps; tokens/s = n / (time of the
n steps). For transformers, generate() of 1 and of n + 1 new tokens, timed apart: n / (T(n+1) - T(1)),
medians of --repeat runs after warm-up. Tessera's KV cache is f16, PyTorch's bf16 (the same bytes).
Prefill: the 2,048-token forward, keeping the last position's logits (Tessera's bench does the same).
Its GEMM efficiency is 2 * 2048 * (weights of the block products) / time, over the rate torch.matmul
(cuBLAS) reaches on the same [2048, k] x [k, n] products, weighted by their FLOPs.
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time

LLAMA = dict(dim=2048, layers=16, heads=32, kv_heads=8, ffn=8192, vocab=32000, ctx=4096)
GPT2 = dict(dim=768, layers=12, heads=12, kv_heads=12, ffn=3072, vocab=50257, ctx=1024)
TARGETS = {"llama1b-bf16": 1400.0, "gpt2s-bf16": 3500.0}
T0 = time.monotonic()


def log(msg):
    print(f"[{time.monotonic() - T0:7.1f} s] {msg}", file=sys.stderr, flush=True)


def init_args(arch, shape, t):
    a = ["--arch", arch, "--dim", str(shape["dim"]), "--layers", str(shape["layers"]), "--heads",
         str(shape["heads"]), "--ffn", str(shape["ffn"]), "--vocab", str(shape["vocab"]), "--ctx",
         str(shape["ctx"]), "--seed", "1", "--type", t]
    if arch == "llama":
        a += ["--kv-heads", str(shape["kv_heads"]), "--tied"]
    return a


def make_model(tessera, models, name, arch, shape, t):
    path = os.path.join(models, name + ".gguf")
    if not os.path.exists(path):
        log(f"init-model {name}")
        subprocess.run([tessera, "init-model", *init_args(arch, shape, t), "--out", path], check=True,
                       stdout=subprocess.DEVNULL)
    return path


def tessera_bench(tessera, path, p, n, repeat, device, env=None):
    cmd = [tessera, "bench", "llm", "-m", path, "--device", device, "-p", str(p), "-n", str(n), "-r", str(repeat),
           "--cache-type", "f16", "--ctx", str(p + n + 8), "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if r.returncode != 0:
        return {"error": r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"}
    return json.loads(r.stdout.strip().splitlines()[-1])


def torch_models(torch, transformers):
    def llama():
        cfg = transformers.LlamaConfig(vocab_size=LLAMA["vocab"], hidden_size=LLAMA["dim"],
                                       intermediate_size=LLAMA["ffn"], num_hidden_layers=LLAMA["layers"],
                                       num_attention_heads=LLAMA["heads"], num_key_value_heads=LLAMA["kv_heads"],
                                       max_position_embeddings=LLAMA["ctx"], tie_word_embeddings=True)
        return transformers.LlamaForCausalLM(cfg), LLAMA

    def gpt2():
        cfg = transformers.GPT2Config(vocab_size=GPT2["vocab"], n_embd=GPT2["dim"], n_layer=GPT2["layers"],
                                      n_head=GPT2["heads"], n_positions=GPT2["ctx"])
        return transformers.GPT2LMHeadModel(cfg), GPT2

    return {"llama1b-bf16": llama, "gpt2s-bf16": gpt2}


def timed(torch, fn):
    torch.cuda.synchronize()
    t = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return time.perf_counter() - t


def torch_decode(torch, model, vocab, p, n, repeat, compiled):
    ids = torch.randint(0, vocab, (1, p), device="cuda")
    kw = dict(do_sample=False, cache_implementation="static", pad_token_id=0)
    if not compiled:
        kw["disable_compile"] = True

    def gen(k):
        return lambda: model.generate(ids, max_new_tokens=k, min_new_tokens=k, **kw)

    first = timed(torch, gen(n + 1))  # compiles (torch.compile) or warms up
    timed(torch, gen(1))
    rates = []
    for _ in range(repeat):
        t1 = timed(torch, gen(1))
        tn = timed(torch, gen(n + 1))
        rates.append(n / max(tn - t1, 1e-9))
    steady = statistics.median(rates)
    return {"decode_tokens_per_s": steady, "decode_runs": rates, "first_call_s": first}


def gemm_peak(torch, shape, m):
    """FLOP-weighted rate of torch.matmul on the block products of one layer at m rows."""
    d, f = shape["dim"], shape["ffn"]
    kv = d * shape["kv_heads"] // shape["heads"]
    products = [(d, d), (d, kv), (d, kv), (d, d), (d, f), (d, f), (f, d)]  # (k, n)
    flops = secs = 0.0
    for k, nn in products:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, nn, device="cuda", dtype=torch.bfloat16)
        for _ in range(3):
            a @ b
        reps = 20
        t = timed(torch, lambda: [a @ b for _ in range(reps)])
        flops += 2.0 * m * k * nn
        secs += t / reps
    return flops / secs, flops * shape["layers"]


def torch_prefill(torch, model, vocab, m, repeat):
    ids = torch.randint(0, vocab, (1, m), device="cuda")
    with torch.no_grad():
        for _ in range(2):
            model(ids, logits_to_keep=1)
        times = [timed(torch, lambda: model(ids, logits_to_keep=1)) for _ in range(repeat)]
    return statistics.median(times)


def run_torch(args, results):
    try:
        import torch, transformers
    except Exception as e:  # noqa: BLE001 - a missing peer is a row, not a crash
        log(f"PyTorch peers unavailable: {e}")
        return
    torch.manual_seed(0)
    for name, build in torch_models(torch, transformers).items():
        try:
            with torch.device("cuda"):
                model, shape = build()
            model = model.to(torch.bfloat16).eval()
            row = results.setdefault(name, {})
            row["torch_eager"] = torch_decode(torch, model, shape["vocab"], args.prompt, args.gen, args.repeat, False)
            log(f"{name}: eager {row['torch_eager']['decode_tokens_per_s']:.1f} tok/s")
            if not args.skip_compile:
                row["torch_compile"] = torch_decode(torch, model, shape["vocab"], args.prompt, args.gen, args.repeat,
                                                    True)
                log(f"{name}: torch.compile {row['torch_compile']['decode_tokens_per_s']:.1f} tok/s "
                    f"(first call {row['torch_compile']['first_call_s']:.1f} s)")
            if name == "llama1b-bf16":
                rate, flops_total = gemm_peak(torch, shape, 2048)
                row["cublas_gemm_flops_per_s"] = rate
                row["block_gemm_flops_2048"] = flops_total
                row["torch_prefill_2048_s"] = torch_prefill(torch, model, shape["vocab"], 2048, args.repeat)
                log(f"cuBLAS on the block products at 2048 rows: {rate / 1e12:.0f} TFLOP/s; torch eager prefill "
                    f"{row['torch_prefill_2048_s'] * 1e3:.1f} ms")
            del model
            torch.cuda.empty_cache()
        except Exception as e:  # noqa: BLE001
            results.setdefault(name, {})["torch_error"] = f"{type(e).__name__}: {e}"
            log(f"{name}: PyTorch peer failed: {e}")


def fmt_rate(v):
    return f"{v:9.1f}" if isinstance(v, (int, float)) else f"{'-':>9}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tessera", default="build/tessera")
    ap.add_argument("--device", default="cuda", help="Tessera's GPU backend: cuda or vulkan (the peers run on CUDA)")
    ap.add_argument("--models", default=os.path.join(tempfile.gettempdir(), "tessera-llm-models"))
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--gen", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--types", default="bf16,q4_0,q8_0,q4_k_m")
    ap.add_argument("--skip-torch", action="store_true")
    ap.add_argument("--skip-compile", action="store_true", help="no torch.compile peer (it takes a minute)")
    ap.add_argument("--make-models-only", action="store_true", help="write the models into --models and stop")
    ap.add_argument("--json")
    args = ap.parse_args()
    os.makedirs(args.models, exist_ok=True)
    results = {}
    paths = {f"llama1b-{t}": make_model(args.tessera, args.models, f"llama1b-{t}", "llama", LLAMA, t)
             for t in args.types.split(",")}
    paths["gpt2s-bf16"] = make_model(args.tessera, args.models, "gpt2s-bf16", "gpt2", GPT2, "bf16")
    if args.make_models_only:
        return
    for name, path in paths.items():
        r = tessera_bench(args.tessera, path, args.prompt, args.gen, args.repeat, args.device)
        results.setdefault(name, {})["tessera"] = r
        log(f"{name}: Tessera {r.get('decode_tokens_per_s', r.get('error'))}")
    # A cold compile: an empty kernel cache (NVRTC runs for every kernel). With a one-token prompt the
    # first step compiles the decode graph itself (m = 1): compile = first token - load. On the bf16
    # 1B model, or the first 1B model of --types when bf16 is not among them.
    llama = "llama1b-bf16" if "llama1b-bf16" in paths else next((n for n in paths if n.startswith("llama1b")), None)
    if llama is not None:
        with tempfile.TemporaryDirectory() as cold_cache:
            env = dict(os.environ, TESSERA_CACHE_DIR=cold_cache)
            cold = tessera_bench(args.tessera, paths[llama], 1, 2, 1, args.device, env)
            if "first_token_s" in cold:
                cold["decode_compile_s"] = cold["first_token_s"] - cold["load_s"]
            results[llama]["tessera_cold"] = cold
        results[llama]["tessera_prefill_2048"] = tessera_bench(args.tessera, paths[llama], 2048, 2, args.repeat,
                                                               args.device)
    if not args.skip_torch:
        run_torch(args, results)

    print(f"\nDecode at batch 1, p {args.prompt}, n {args.gen} (tokens/s, medians of {args.repeat}):")
    print(f"{'model':<16}{'Tessera':>10}{'torch eager':>13}{'torch.compile':>15}{'vs compile':>12}  target")
    verdicts = []
    for name in paths:
        row = results[name]
        ours = row["tessera"].get("decode_tokens_per_s")
        eager = row.get("torch_eager", {}).get("decode_tokens_per_s")
        comp = row.get("torch_compile", {}).get("decode_tokens_per_s")
        ratio = f"{ours / comp:11.2f}x" if ours and comp else f"{'-':>12}"
        target = TARGETS.get(name)
        tgt = ""
        if target and ours:
            tgt = f">= {target:.0f}: {'met' if ours >= target else 'NOT met'}"
            verdicts.append((f"{name} decode >= {target:.0f} tok/s", ours >= target, f"{ours:.0f}"))
        print(f"{name:<16}{fmt_rate(ours):>10}{fmt_rate(eager):>13}{fmt_rate(comp):>15}{ratio}  {tgt}")
    bf16 = results.get("llama1b-bf16", {}).get("tessera", {}).get("decode_tokens_per_s")
    q4 = results.get("llama1b-q4_0", {}).get("tessera", {}).get("decode_tokens_per_s")
    if bf16 and q4:
        verdicts.append(("Q4_0 decode >= 1.5x Tessera bf16", q4 >= 1.5 * bf16, f"{q4 / bf16:.2f}x"))
    big = results.get(llama, {}) if llama is not None else {}
    pre = big.get("tessera_prefill_2048", {})
    peak = big.get("cublas_gemm_flops_per_s")
    flops = big.get("block_gemm_flops_2048")
    if pre.get("prefill_tokens_per_s"):
        secs = 2048 / pre["prefill_tokens_per_s"]
        line = f"\nPrefill 2048 tokens, {llama}: Tessera {secs * 1e3:.1f} ms"
        tp = big.get("torch_prefill_2048_s")
        if tp:
            line += f", PyTorch eager {tp * 1e3:.1f} ms ({tp / secs:.2f}x)"
        if peak and flops:
            eff = flops / secs / peak
            line += f"; block products at {flops / secs / 1e12:.0f} TFLOP/s = {eff * 100:.0f}% of cuBLAS's " \
                    f"{peak / 1e12:.0f} TFLOP/s on them"
            verdicts.append(("prefill 2048 >= 60% of cuBLAS GEMM rate", eff >= 0.6, f"{eff * 100:.0f}%"))
        print(line)
    cold = big.get("tessera_cold", {})
    if cold.get("decode_compile_s") is not None:
        comp_first = big.get("torch_compile", {}).get("first_call_s")
        print(f"Cold compile of the decode graph (empty kernel cache): Tessera {cold['decode_compile_s']:.2f} s"
              + (f"; torch.compile first generate() {comp_first:.1f} s" if comp_first else ""))
        verdicts.append(("cold decode-graph compile <= 1 s", cold["decode_compile_s"] <= 1.0,
                         f"{cold['decode_compile_s']:.2f} s"))
    print("\nTargets:")
    for what, ok, value in verdicts:
        print(f"  {'met    ' if ok else 'NOT met'}  {what}: {value}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
