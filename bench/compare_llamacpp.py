#!/usr/bin/python3
"""Runs `tessera bench llm` and llama.cpp (bench/llamacpp/bench.mjs) on the same GGUF files, in the same run,
and prints prefill and decode tokens/s with their ratios.

    /usr/bin/python3 bench/compare_llamacpp.py [--types q4_0,q8_0,q4_k_m,f16 | --model FILE.gguf]
        [--tessera build/tessera] [--rounds 1] [--repeat 5] [--prompt-tokens 128] [--gen-tokens 32]
        [--threads 2] [--only tessera|llamacpp] [--json OUT.json]

Models: without --model, one random-weight Llama of the 1B shape per type (dim 2048, 16 layers, 32 heads,
8 KV heads, FFN 8192, vocab 32000, tied embeddings), made once with `tessera init-model` into
${TESSERA_BENCH_MODELS:-$HOME/.cache/tessera/models}/llama1b-<type>.gguf.

llama.cpp runs through node-llama-cpp's prebuilt CPU binaries, installed on first use with npm into
${TESSERA_PEER_DIR:-$HOME/.cache/tessera/peers}/llamacpp ($TESSERA_LLAMACPP_DIR or --peer-dir override it).

Both sides: a prompt of p tokens evaluated in one batch (prefill, p / seconds), then n greedy one-token
steps (decode, n / seconds), each repetition from an empty KV cache, one warm-up run, medians of --repeat
runs. The sides alternate (Tessera, llama.cpp, Tessera, ...) for --rounds rounds per model, so drifts of a
shared machine hit both; the table's medians pool every round's runs. Ratios are Tessera / llama.cpp
(> 1: Tessera faster).
"""
import argparse, json, os, platform, shutil, statistics, subprocess, sys, time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH_MJS = os.path.join(REPO, "bench", "llamacpp", "bench.mjs")
NODE_LLAMA_CPP = "3.22.1"
TYPES = ["q4_0", "q8_0", "q4_k_m", "f16"]
INIT_MODEL = ["--arch", "llama", "--dim", "2048", "--layers", "16", "--heads", "32", "--kv-heads", "8",
              "--ffn", "8192", "--vocab", "32000", "--tied", "--ctx", "4096", "--seed", "1"]
KEYS = ["prefill_tokens_per_s", "decode_tokens_per_s", "prefill_runs", "decode_runs", "load_s", "peak_rss_bytes"]
SIDES = {"tessera": "Tessera", "llamacpp": "llama.cpp"}

T0 = time.monotonic()


def log(msg):
    print(f"[{time.monotonic() - T0:7.1f} s] {msg}", file=sys.stderr, flush=True)


def tail(text, lines=25):
    return "\n".join(("    " + l) for l in (text or "").rstrip().splitlines()[-lines:])


def peer_dir(arg):
    if arg:
        return os.path.abspath(arg)
    if os.environ.get("TESSERA_LLAMACPP_DIR"):
        return os.path.abspath(os.environ["TESSERA_LLAMACPP_DIR"])
    base = os.environ.get("TESSERA_PEER_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "tessera", "peers")
    return os.path.join(os.path.abspath(base), "llamacpp")


def ensure_node_llama_cpp(directory):
    """Installs node-llama-cpp (CPU prebuilt binaries only) into `directory` unless it is there already."""
    if os.path.isfile(os.path.join(directory, "node_modules", "node-llama-cpp", "package.json")):
        return True
    npm = shutil.which("npm")
    if npm is None:
        log("npm not found: install Node.js 20+ and npm (Debian: apt-get install nodejs npm)")
        return False
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower(),
                                                                                         platform.machine())
    os_name = {"linux": "linux", "darwin": "mac", "win32": "win"}.get(sys.platform, sys.platform)
    cmd = [npm, "install", "--no-audit", "--no-fund", "--omit=optional", f"node-llama-cpp@{NODE_LLAMA_CPP}",
           f"@node-llama-cpp/{os_name}-{arch}@{NODE_LLAMA_CPP}"]
    os.makedirs(directory, exist_ok=True)
    log(f"installing llama.cpp's peer into {directory}: {' '.join(cmd[1:])}")
    r = subprocess.run(cmd, cwd=directory, capture_output=True, text=True)
    if r.returncode != 0:
        log(f"npm install failed (exit {r.returncode}):\n{tail(r.stdout + r.stderr)}")
        return False
    log("installed node-llama-cpp " + NODE_LLAMA_CPP)
    return True


def ensure_model(tessera, models_dir, qtype):
    path = os.path.join(models_dir, f"llama1b-{qtype}.gguf")
    if os.path.isfile(path):
        return path, None
    os.makedirs(models_dir, exist_ok=True)
    partial = os.path.join(models_dir, f".llama1b-{qtype}.partial.gguf")
    cmd = [tessera, "init-model", *INIT_MODEL, "--type", qtype, "-o", partial]
    log(f"[{qtype}] making {path}: {' '.join(cmd)}")
    t = time.monotonic()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        return None, f"cannot run {tessera}: {e}"
    if r.returncode != 0 or not os.path.isfile(partial):
        if os.path.exists(partial):
            os.remove(partial)
        return None, f"tessera init-model failed (exit {r.returncode}):\n{tail(r.stdout + r.stderr)}"
    os.replace(partial, path)
    log(f"[{qtype}] made {os.path.getsize(path) / 2**20:.0f} MiB in {time.monotonic() - t:.1f} s")
    return path, None


def run_side(side, cmd, label, round_no, rounds, timeout):
    log(f"[{label}] round {round_no}/{rounds}: {SIDES[side]} ...")
    t = time.monotonic()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        err = (e.stderr or b"").decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        return None, f"{SIDES[side]} timed out after {timeout} s: {' '.join(cmd)}\n{tail(err)}"
    except OSError as e:
        return None, f"cannot run {cmd[0]}: {e}"
    elapsed = time.monotonic() - t
    lines = r.stdout.strip().splitlines()
    result = None
    if r.returncode == 0 and lines:
        try:
            result = json.loads(lines[-1])
        except json.JSONDecodeError:
            result = None
    missing = [k for k in KEYS if result is not None and k not in result]
    if r.returncode != 0 or result is None or missing:
        why = (f"exit {r.returncode}" if r.returncode != 0 else
               "no JSON object on the last stdout line" if result is None else f"JSON lacks {', '.join(missing)}")
        return None, (f"{SIDES[side]} failed ({why}): {' '.join(cmd)}\n  stderr:\n{tail(r.stderr)}"
                      + (f"\n  stdout:\n{tail(r.stdout, 5)}" if r.stdout.strip() else ""))
    result["wall_s"] = elapsed
    log(f"[{label}] round {round_no}/{rounds}: {SIDES[side]} prefill {result['prefill_tokens_per_s']:.2f} tok/s, "
        f"decode {result['decode_tokens_per_s']:.2f} tok/s ({elapsed:.1f} s)")
    return result, None


def pool(rounds_results):
    """Pools the rounds of one side: medians over every run of every round, worst RSS, median load."""
    if not rounds_results:
        return None
    pre = [v for r in rounds_results for v in r["prefill_runs"]]
    dec = [v for r in rounds_results for v in r["decode_runs"]]
    return {"prefill_tokens_per_s": statistics.median(pre), "decode_tokens_per_s": statistics.median(dec),
            "prefill_runs": pre, "decode_runs": dec,
            "load_s": statistics.median(r["load_s"] for r in rounds_results),
            # Tessera: load + compile + the first prompt's prefill; llama.cpp's bench.mjs reports the same
            # as load_to_first_token_s.
            "first_token_s": statistics.median(r.get("first_token_s", r.get("load_to_first_token_s", 0))
                                               for r in rounds_results),
            "peak_rss_bytes": max(r["peak_rss_bytes"] for r in rounds_results),
            "rounds": rounds_results}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--types", default=",".join(TYPES), help="comma-separated init-model types (default %(default)s)")
    ap.add_argument("--model", help="bench this GGUF file instead of the generated set")
    ap.add_argument("--tessera", default=os.path.join(REPO, "build", "tessera"), help="the Tessera CLI")
    ap.add_argument("--rounds", type=int, default=1, help="alternating Tessera/llama.cpp rounds per model")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per side per round")
    ap.add_argument("--prompt-tokens", type=int, default=128)
    ap.add_argument("--gen-tokens", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", choices=["tessera", "llamacpp"], help="run one side only")
    ap.add_argument("--json", help="also write every number to this file")
    ap.add_argument("--models-dir", default=os.environ.get("TESSERA_BENCH_MODELS") or
                    os.path.join(os.path.expanduser("~"), ".cache", "tessera", "models"))
    ap.add_argument("--peer-dir", help="node-llama-cpp's folder (default ${TESSERA_PEER_DIR:-~/.cache/tessera/peers}/llamacpp)")
    ap.add_argument("--node", default=shutil.which("node") or "/usr/bin/node")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds one side's run may take")
    a = ap.parse_args()
    if a.rounds < 1 or a.repeat < 1:
        ap.error("--rounds and --repeat must be at least 1")

    sides = [a.only] if a.only else ["tessera", "llamacpp"]
    tessera = os.path.abspath(a.tessera)
    peers = peer_dir(a.peer_dir)
    failures = []
    if "llamacpp" in sides and not ensure_node_llama_cpp(peers):
        failures.append("llama.cpp: node-llama-cpp is not installed")
        sides.remove("llamacpp")

    if a.model:
        jobs = [(os.path.splitext(os.path.basename(a.model))[0], os.path.abspath(a.model))]
    else:
        jobs = [(t, None) for t in a.types.split(",") if t]

    common = ["-p", str(a.prompt_tokens), "-n", str(a.gen_tokens), "--threads", str(a.threads),
              "--repeat", str(a.repeat), "--json"]
    results = []
    for label, path in jobs:
        entry = {"type": label, "model": path}
        results.append(entry)
        if path is None:
            path, err = ensure_model(tessera, os.path.abspath(a.models_dir), label)
            if err:
                log(f"[{label}] {err}")
                failures.append(f"{label}: model: {err.splitlines()[0]}")
                continue
            entry["model"] = path
        if not os.path.isfile(path):
            log(f"[{label}] no such file: {path}")
            failures.append(f"{label}: no such file {path}")
            continue
        entry["file_bytes"] = os.path.getsize(path)
        cmds = {"tessera": [tessera, "bench", "llm", "-m", path, *common],
                "llamacpp": [a.node, BENCH_MJS, "--model", path, "--peer-dir", peers,
                             "--prompt-tokens", str(a.prompt_tokens), "--gen-tokens", str(a.gen_tokens),
                             "--threads", str(a.threads), "--repeat", str(a.repeat), "--json"]}
        per_side = {s: [] for s in sides}
        for rnd in range(1, a.rounds + 1):
            for side in sides:
                res, err = run_side(side, cmds[side], label, rnd, a.rounds, a.timeout)
                if err:
                    log(f"[{label}] {err}")
                    failures.append(f"{label}: {SIDES[side]} round {rnd}: {err.splitlines()[0]}")
                else:
                    per_side[side].append(res)
        for side in sides:
            entry[side] = pool(per_side[side])
        t, l = entry.get("tessera"), entry.get("llamacpp")
        if t and l:
            entry["prefill_ratio"] = t["prefill_tokens_per_s"] / l["prefill_tokens_per_s"]
            entry["decode_ratio"] = (t["decode_tokens_per_s"] / l["decode_tokens_per_s"]
                                     if l["decode_tokens_per_s"] else None)

    def num(v, digits=2):
        return "-" if v is None else f"{v:.{digits}f}"

    def get(entry, side, key):
        return (entry.get(side) or {}).get(key)

    def mib(v):
        return "-" if v is None else f"{v / 2**20:.0f}"

    print(f"\nprefill {a.prompt_tokens} tokens, decode {a.gen_tokens} tokens, {a.threads} threads, "
          f"{a.rounds} round(s) x {a.repeat} runs per side; tok/s medians, ratio = Tessera / llama.cpp")
    w = max([4] + [len(e["type"]) for e in results]) + 2
    head = (f"{'type':<{w}}{'MiB':>7}  {'prefill T':>10}{'llama.cpp':>10}{'ratio':>7}  "
            f"{'decode T':>9}{'llama.cpp':>10}{'ratio':>7}  {'RSS T':>7}{'RSS L':>7}  {'1st tok T':>9}{'1st tok L':>10}")
    print(head)
    for e in results:
        print(f"{e['type']:<{w}}{mib(e.get('file_bytes')):>7}  "
              f"{num(get(e, 'tessera', 'prefill_tokens_per_s')):>10}{num(get(e, 'llamacpp', 'prefill_tokens_per_s')):>10}"
              f"{num(e.get('prefill_ratio')):>7}  "
              f"{num(get(e, 'tessera', 'decode_tokens_per_s')):>9}{num(get(e, 'llamacpp', 'decode_tokens_per_s')):>10}"
              f"{num(e.get('decode_ratio')):>7}  "
              f"{mib(get(e, 'tessera', 'peak_rss_bytes')):>7}{mib(get(e, 'llamacpp', 'peak_rss_bytes')):>7}  "
              f"{num(get(e, 'tessera', 'first_token_s')):>9}{num(get(e, 'llamacpp', 'first_token_s')):>10}")
    print("RSS: peak resident set in MiB (T: Tessera, L: llama.cpp); 1st tok: seconds from the start of loading to the first prompt's logits (load, compile, one prefill)")
    build = next((r for e in results for r in ((e.get("llamacpp") or {}).get("rounds") or [])), None)
    if build:
        fa = {True: "on", False: "off"}
        print(f"llama.cpp {build.get('llama_cpp_release')} via node-llama-cpp {build.get('node_llama_cpp_version')} "
              f"({build.get('build_type')}, flash attention {fa.get(build.get('flash_attention'), build.get('flash_attention'))}); "
              f"llama.cpp load (mmap + context) {num(build.get('load_s'))} s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"prompt_tokens": a.prompt_tokens, "gen_tokens": a.gen_tokens, "threads": a.threads,
                       "rounds": a.rounds, "repeat": a.repeat, "sides": sides, "results": results,
                       "failures": failures}, f, indent=1)
        log(f"wrote {a.json}")
    if failures:
        print("\nfailures:\n  " + "\n  ".join(failures), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
