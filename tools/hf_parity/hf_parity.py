#!/usr/bin/env python3
"""`tessera convert` against Hugging Face transformers itself: random-weight GPT2LMHeadModel and
LlamaForCausalLM models (grouped-query attention, tied and untied heads, sharded, bf16 weights) are made
from small configs with a fixed seed and saved with save_pretrained (safetensors), each with a tokenizer
folder written here (GPT-2: vocab.json + merges.txt; Llama: a SentencePiece-style tokenizer.json in
HF's format). Each folder is converted with `tessera convert --type f32`, the logits of a fixed token
sequence come from `tessera generate --tokens ... -n 0 --dump-logits`, and they are compared with the
HF model's logits (max |tessera - hf| / max |hf|). The tokenizers are compared too: the ids of a few
texts from `tessera tokenize` against the HF tokenizer loaded from the same folder. A table is printed;
the exit status is 1 when any logits error exceeds --threshold (1e-4) or any tokenization differs.

Needs Python 3.8+, torch, transformers and numpy (the GPU machine has them; this project's own machine
does not have transformers, so this script has not been run there: treat its first run as its test).
No network: nothing is downloaded, every model and tokenizer is made here.

    python3 tools/hf_parity/hf_parity.py --tessera build/tessera [--work DIR] [--keep] [--seed 0]

On the GPU machine, after scripts/device/package.sh (whose bundle holds bin/tessera and lib/):
    LD_LIBRARY_PATH=lib python3 tools/hf_parity/hf_parity.py --tessera bin/tessera
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
    import transformers
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM
except ImportError as e:  # pragma: no cover - depends on the machine
    sys.stderr.write(f"hf_parity.py: needs numpy, torch and transformers ({e})\n")
    sys.exit(2)

SPACE = "\u2581"  # SentencePiece's "▁"
WORDS = ["hello", "world", "the", "model", "tessera", "convert", "token", "logits"]
TEXTS = ["hello world", "the model converts the tokens", "tessera hello! world?", "logits of the token model"]


# --- tokenizers ----------------------------------------------------------------------------------------

def bytes_to_unicode():
    """GPT-2's byte alphabet (the same table as transformers' and Tessera's byte_unicode)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + \
        list(range(ord("\xae"), ord("\xff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


def write_gpt2_tokenizer(folder):
    """Byte-level BPE: the 256 byte symbols in byte order, then merges building each word with and
    without its leading space (Ġ) left to right, then <|endoftext|>. Returns the token count."""
    alphabet = bytes_to_unicode()
    vocab = {alphabet[b]: b for b in range(256)}
    merges = []
    for word in WORDS:
        for piece in (alphabet[ord(" ")] + word, word):
            left = piece[0]
            for ch in piece[1:]:
                if left + ch not in vocab:
                    vocab[left + ch] = len(vocab)
                    merges.append(f"{left} {ch}")
                left = left + ch
    eot = len(vocab)
    vocab["<|endoftext|>"] = eot
    with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(folder, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "\n".join(merges) + "\n")
    with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump({"tokenizer_class": "GPT2Tokenizer", "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>",
                   "unk_token": "<|endoftext|>", "add_bos_token": False, "model_max_length": 64}, f)
    return len(vocab), eot


def write_llama_tokenizer(folder):
    """A tokenizer.json as LlamaTokenizerFast saves one: BPE with byte_fallback over <unk> <s> </s>, the
    256 <0xNN> tokens, ▁ and the lowercase letters, then each word's ▁-led prefixes (▁h, ▁he, ...), merged
    left to right (so SentencePiece's best-scored pair and BPE's lowest-ranked merge build the same
    tokens). Returns the token count."""
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for ch in SPACE + "abcdefghijklmnopqrstuvwxyz":
        vocab[ch] = len(vocab)
    merges = []
    for word in WORDS:
        piece = SPACE + word
        left = piece[0]
        for ch in piece[1:]:
            if left + ch not in vocab:
                vocab[left + ch] = len(vocab)
                merges.append(f"{left} {ch}")
            left = left + ch

    def added(i, text):
        return {"id": i, "content": text, "single_word": False, "lstrip": False, "rstrip": False,
                "normalized": False, "special": True}

    tokenizer = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [added(0, "<unk>"), added(1, "<s>"), added(2, "</s>")],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": SPACE},
            {"type": "Replace", "pattern": {"String": " "}, "content": SPACE}]},
        "pre_tokenizer": None,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "<s>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": SPACE}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "vocab": vocab,
                  "merges": merges},
    }
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer, f, ensure_ascii=False)
    with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<s>", "eos_token": "</s>",
                   "unk_token": "<unk>", "add_bos_token": True, "add_eos_token": False, "model_max_length": 128}, f)
    return len(vocab)


# --- models --------------------------------------------------------------------------------------------

def round_up(n, m):
    return (n + m - 1) // m * m


@torch.no_grad()
def randomize(model, seed):
    """Weights large enough that attention is far from uniform (so RoPE and the q/k layout matter):
    matrices N(0, s^2 / fan_in) with s = 3 for the query/key products, norms near 1, biases small."""
    g = torch.Generator().manual_seed(seed)
    seen = set()
    for name, p in sorted(model.named_parameters(), key=lambda kv: kv[0]):
        if id(p) in seen:  # a tied lm_head is the embedding
            continue
        seen.add(id(p))
        r = torch.randn(p.shape, generator=g, dtype=torch.float32)
        if p.dim() == 1:
            value = 1.0 + 0.1 * r if ("ln" in name or "norm" in name) and name.endswith("weight") else 0.1 * r
        elif "wte" in name or "wpe" in name or "embed_tokens" in name or "lm_head" in name:
            value = 0.5 * r
        else:
            # nn.Linear stores [out, in]; GPT-2's Conv1D [in, out].
            fan_in = p.shape[0] if ".c_" in name else p.shape[1]
            scale = 3.0 if ("q_proj" in name or "k_proj" in name or "c_attn" in name) else 1.0
            value = r * (scale / math.sqrt(fan_in))
        p.copy_(value.to(p.dtype))


def save(model, folder, max_shard_size=None):
    kwargs = {"max_shard_size": max_shard_size} if max_shard_size else {}
    try:
        model.save_pretrained(folder, safe_serialization=True, **kwargs)
    except TypeError:  # transformers versions that always write safetensors and dropped the argument
        model.save_pretrained(folder, **kwargs)
    if not any(f.endswith(".safetensors") for f in os.listdir(folder)):
        raise RuntimeError(f"{folder}: save_pretrained wrote no .safetensors file")


def make_gpt2(folder, seed):
    n_tokens, eot = write_gpt2_tokenizer(folder)
    config = GPT2Config(vocab_size=round_up(n_tokens, 16), n_positions=64, n_embd=64, n_layer=2, n_head=4,
                        n_inner=None, activation_function="gelu_new", resid_pdrop=0.0, embd_pdrop=0.0,
                        attn_pdrop=0.0, layer_norm_epsilon=1e-5, bos_token_id=eot, eos_token_id=eot,
                        tie_word_embeddings=True)
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(config).eval()
    randomize(model, seed)
    save(model, folder)
    return model


def make_llama(folder, seed, tied, kv_heads=2, dtype=torch.float32, max_shard_size=None):
    n_tokens = write_llama_tokenizer(folder)
    config = LlamaConfig(vocab_size=round_up(n_tokens, 64), hidden_size=64, intermediate_size=160,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=kv_heads,
                         max_position_embeddings=128, rms_norm_eps=1e-5, rope_theta=10000.0,
                         tie_word_embeddings=tied, bos_token_id=1, eos_token_id=2, hidden_act="silu",
                         attention_bias=False)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).eval()
    if tied:
        model.tie_weights()
    randomize(model, seed)
    if dtype != torch.float32:
        model = model.to(dtype)  # saved in dtype; the reference then runs the rounded weights in f32
    save(model, folder, max_shard_size)
    if dtype == torch.float32:
        return model
    # .to(dtype) also rounded the RoPE frequencies (a non-persistent buffer): the reference is a fresh f32
    # model holding the rounded weights, so only the weights' rounding is shared with the file.
    ref = LlamaForCausalLM(config).eval()
    ref.load_state_dict({k: v.to(torch.float32) for k, v in model.state_dict().items()})
    if tied:
        ref.tie_weights()
    return ref


# --- running tessera -----------------------------------------------------------------------------------

def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stderr.strip()}")
    return p.stdout


def last_json(out):
    for line in reversed(out.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError(f"no JSON line in: {out!r}")


def compare(case, args):
    folder = os.path.join(args.work, case["name"])
    gguf = os.path.join(args.work, case["name"] + ".gguf")
    npy = os.path.join(args.work, case["name"] + ".npy")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    model = case["make"](folder)
    files = sorted(f for f in os.listdir(folder) if f.endswith(".safetensors"))
    run([args.tessera, "convert", folder, "-o", gguf, "--type", "f32", "-q"])

    vocab = model.config.vocab_size
    g = torch.Generator().manual_seed(args.seed + 17)
    ids = torch.randint(0, vocab, (args.tokens,), generator=g).tolist()
    device = ["--device", args.device] if args.device else []
    run([args.tessera, "generate", "-m", gguf, "--tokens", ",".join(map(str, ids)), "-n", "0", "--dump-logits", npy,
         "--threads", str(args.threads)] + device)
    got = np.load(npy).astype(np.float64)
    with torch.no_grad():
        want = model(torch.tensor([ids])).logits[0].double().numpy()
    if got.shape != want.shape:
        raise RuntimeError(f"{case['name']}: tessera's logits are {got.shape}, HF's {want.shape}")
    diff = np.abs(got - want)
    rel = float(diff.max() / np.abs(want).max())

    hf_tok = AutoTokenizer.from_pretrained(folder)
    mismatches = []
    for text in TEXTS:
        hf_ids = hf_tok(text)["input_ids"]
        t_ids = last_json(run([args.tessera, "tokenize", "-m", gguf, "-p", text, "--json"]))["ids"]
        if list(hf_ids) != list(t_ids):
            mismatches.append(f"{text!r}: hf {hf_ids} tessera {t_ids}")
    return {"name": case["name"], "weights": case["weights"], "files": len(files), "max_abs": float(diff.max()),
            "rel": rel, "tok_ok": not mismatches, "tok_detail": mismatches}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tessera", required=True, help="the tessera executable")
    ap.add_argument("--work", help="folder for the models (default: a temporary one, removed unless --keep)")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tokens", type=int, default=24, help="length of the compared token sequence")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--device", help="tessera generate --device (default: its default backend)")
    ap.add_argument("--threshold", type=float, default=1e-4, help="largest max |diff| / max |hf| that passes")
    args = ap.parse_args()
    args.tessera = os.path.abspath(args.tessera)
    temporary = args.work is None
    if temporary:
        args.work = tempfile.mkdtemp(prefix="hf_parity_")
    os.makedirs(args.work, exist_ok=True)
    s = args.seed
    cases = [
        {"name": "gpt2-tied", "weights": "f32", "make": lambda d: make_gpt2(d, s)},
        {"name": "llama-gqa-untied", "weights": "f32", "make": lambda d: make_llama(d, s + 1, tied=False)},
        {"name": "llama-gqa-tied-sharded", "weights": "f32",
         "make": lambda d: make_llama(d, s + 2, tied=True, max_shard_size="100KB")},
        {"name": "llama-gqa-untied-bf16", "weights": "bf16",
         "make": lambda d: make_llama(d, s + 3, tied=False, dtype=torch.bfloat16)},
        {"name": "llama-mha-tied", "weights": "f32", "make": lambda d: make_llama(d, s + 4, tied=True, kv_heads=4)},
    ]
    print(f"transformers {transformers.__version__}, torch {torch.__version__}, tessera {args.tessera}")
    rows, failed = [], False
    for case in cases:
        try:
            rows.append(compare(case, args))
        except Exception as e:  # report every case, then fail
            rows.append({"name": case["name"], "weights": case["weights"], "error": str(e)})
    header = f"{'model':<26} {'weights':<7} {'files':>5} {'max_abs':>10} {'max_rel':>10} {'tokenizer':>9}  result"
    print(header)
    print("-" * len(header))
    for r in rows:
        if "error" in r:
            failed = True
            print(f"{r['name']:<26} {r['weights']:<7} {'':>5} {'':>10} {'':>10} {'':>9}  ERROR: {r['error']}")
            continue
        ok = r["rel"] <= args.threshold and r["tok_ok"]
        failed = failed or not ok
        print(f"{r['name']:<26} {r['weights']:<7} {r['files']:>5} {r['max_abs']:>10.2e} {r['rel']:>10.2e} "
              f"{'same' if r['tok_ok'] else 'DIFFERS':>9}  {'PASS' if ok else 'FAIL'}")
        for m in r["tok_detail"]:
            print(f"    tokenizer: {m}")
    print(f"threshold: max |tessera - hf| / max |hf| <= {args.threshold:g}; tokenizer: ids of {len(TEXTS)} texts")
    if temporary and not args.keep:
        shutil.rmtree(args.work, ignore_errors=True)
    elif args.keep or not temporary:
        print(f"models kept in {args.work}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
