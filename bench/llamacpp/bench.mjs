#!/usr/bin/env node
// llama.cpp's side of the LLM benchmark (bench/compare_llamacpp.py runs it next to `tessera bench llm`).
//
//   node bench/llamacpp/bench.mjs --model FILE.gguf [--prompt-tokens 128] [--gen-tokens 32] [--threads 2]
//                                 [--repeat 5] [--flash-attn auto|on|off] [--peer-dir DIR] [--verbose] [--json]
//
// llama.cpp runs through node-llama-cpp (its prebuilt CPU binaries, no GPU). It measures what llama-bench
// measures, after the prompt rather than from an empty context:
//   prefill: one batch of exactly p prompt tokens (BOS first, then a fixed English text, repeated and cut
//            to length), logits for the last token only; tokens/s = p / seconds.
//   decode:  then n forward passes of one token each, each token the greedy (temperature 0) choice from the
//            previous logits, the first one from the prompt's; tokens/s = n / seconds.
// Every repetition starts from an empty sequence (the KV cache is cleared); one untimed warm-up run comes
// first. Medians of --repeat runs and the per-run lists are reported.
//
// node-llama-cpp is looked up in, first to last: --peer-dir, $TESSERA_LLAMACPP_DIR,
// ${TESSERA_PEER_DIR:-$HOME/.cache/tessera/peers}/llamacpp, this script's folder. Install it with
//   npm install --prefix DIR --omit=optional node-llama-cpp@3.22.1 @node-llama-cpp/linux-x64@3.22.1
// (compare_llamacpp.py does that itself when the folder lacks it).
//
// With --json the last stdout line is one JSON object with the keys of `tessera bench llm --json`
// (backend "llama.cpp") plus llama.cpp's build information.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {fileURLToPath, pathToFileURL} from "node:url";

const USAGE = "usage: node bench.mjs --model FILE [--prompt-tokens 128] [--gen-tokens 32] [--threads 2] " +
    "[--repeat 5] [--flash-attn auto|on|off] [--peer-dir DIR] [--verbose] [--json]";

function parseArgs(argv) {
    const a = {model: null, promptTokens: 128, genTokens: 32, threads: 2, repeat: 5, flashAttn: "auto",
               peerDir: null, verbose: false, json: false};
    const intArg = (name, v) => {
        const n = Number(v);
        if (!Number.isInteger(n) || n < 0) fail(`${name} needs a non-negative integer, got ${v}`);
        return n;
    };
    for (let i = 0; i < argv.length; i++) {
        const k = argv[i];
        const next = () => {
            if (i + 1 >= argv.length) fail(`${k} needs a value`);
            return argv[++i];
        };
        if (k === "--model" || k === "-m") a.model = next();
        else if (k === "--prompt-tokens" || k === "-p") a.promptTokens = intArg(k, next());
        else if (k === "--gen-tokens" || k === "-n") a.genTokens = intArg(k, next());
        else if (k === "--threads" || k === "-t") a.threads = intArg(k, next());
        else if (k === "--repeat" || k === "-r") a.repeat = intArg(k, next());
        else if (k === "--flash-attn") a.flashAttn = next();
        else if (k === "--peer-dir") a.peerDir = next();
        else if (k === "--verbose") a.verbose = true;
        else if (k === "--json") a.json = true;
        else if (k === "--help" || k === "-h") { console.log(USAGE); process.exit(0); }
        else fail(`unknown argument ${k}\n${USAGE}`);
    }
    if (!a.model) fail(`--model is required\n${USAGE}`);
    if (a.promptTokens < 1) fail("--prompt-tokens must be at least 1");
    if (a.threads < 1) fail("--threads must be at least 1");
    if (a.repeat < 1) fail("--repeat must be at least 1");
    if (!["auto", "on", "off"].includes(a.flashAttn)) fail("--flash-attn is auto, on or off");
    return a;
}

function fail(msg) {
    console.error(`bench.mjs: ${msg}`);
    process.exit(2);
}

function log(msg) {
    console.error(`[llama.cpp] ${msg}`);
}

function candidateDirs(peerDir) {
    const here = path.dirname(fileURLToPath(import.meta.url));
    const peers = process.env.TESSERA_PEER_DIR || path.join(os.homedir(), ".cache", "tessera", "peers");
    return [peerDir, process.env.TESSERA_LLAMACPP_DIR, path.join(peers, "llamacpp"), here].filter(Boolean);
}

async function importNodeLlamaCpp(peerDir) {
    const tried = [];
    for (const dir of candidateDirs(peerDir)) {
        const pkgDir = path.join(path.resolve(dir), "node_modules", "node-llama-cpp");
        tried.push(pkgDir);
        const pkgJson = path.join(pkgDir, "package.json");
        if (!fs.existsSync(pkgJson)) continue;
        const pkg = JSON.parse(fs.readFileSync(pkgJson, "utf8"));
        const exp = pkg.exports?.["."];
        const entry = (typeof exp === "string" ? exp : exp?.import ?? exp?.default) ?? pkg.main ?? "./dist/index.js";
        const mod = await import(pathToFileURL(path.join(pkgDir, entry)).href);
        return {mod, version: pkg.version, dir: pkgDir};
    }
    fail("node-llama-cpp not found; looked in:\n  " + tried.join("\n  ") +
         "\ninstall it with: npm install --prefix DIR --omit=optional node-llama-cpp@3.22.1 " +
         "@node-llama-cpp/linux-x64@3.22.1 (and pass --peer-dir DIR)");
}

function median(xs) {
    const s = [...xs].sort((x, y) => x - y);
    const m = s.length >> 1;
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

const TEXT = "The quick brown fox jumps over the lazy dog. In the beginning the Universe was created. " +
    "This has made a lot of people very angry and been widely regarded as a bad move. It was the best of " +
    "times, it was the worst of times, it was the age of wisdom, it was the age of foolishness, it was the " +
    "epoch of belief, it was the epoch of incredulity, it was the season of Light, it was the season of " +
    "Darkness, it was the spring of hope, it was the winter of despair. ";

// Exactly p token ids: BOS (when the model has one), then the text's tokens repeated and cut to length.
function buildPrompt(model, p) {
    const bos = model.tokens.bos;
    let text = model.tokenize(TEXT, false);
    if (text.length === 0) {
        // A vocabulary that cannot spell English: any ids below the vocabulary size do for timing.
        const vocab = model.fileInfo?.metadata?.llama?.vocab_size ?? 256;
        text = Array.from({length: 64}, (_, i) => (i * 7 + 13) % Math.max(1, Number(vocab)));
    }
    const out = bos == null ? [] : [bos];
    while (out.length < p) out.push(...text.slice(0, p - out.length));
    return out;
}

async function main() {
    const a = parseArgs(process.argv.slice(2));
    if (!fs.existsSync(a.model)) fail(`no such model file: ${a.model}`);
    const p = a.promptTokens, n = a.genTokens;
    const {mod, version, dir} = await importNodeLlamaCpp(a.peerDir);
    const {getLlama, LlamaLogLevel} = mod;
    if (a.verbose) log(`node-llama-cpp ${version} from ${dir}`);

    const tStart = performance.now();
    // llama.cpp's info log is read for what it decided (flash attention, repacked weights), printed only
    // with --verbose; errors are always printed.
    const seen = {flashAttention: null, repackMiB: 0};
    const logger = (level, message) => {
        const m = String(message);
        const fa = /Flash Attention (enabled|disabled)/i.exec(m);
        if (fa) seen.flashAttention = fa[1].toLowerCase() === "enabled";
        const rp = /CPU_REPACK model buffer size =\s*([\d.]+) MiB/.exec(m);
        if (rp) seen.repackMiB += Number(rp[1]);
        if (a.verbose || level === LlamaLogLevel.error || level === LlamaLogLevel.fatal)
            console.error(`[llama.cpp ${level}] ${m.trimEnd()}`);
    };
    const llama = await getLlama({gpu: false, build: "never", maxThreads: a.threads,
                                  logLevel: LlamaLogLevel.info, logger});
    const tLlama = performance.now();
    const model = await llama.loadModel({modelPath: a.model, gpuLayers: 0});
    const tModel = performance.now();
    // llama-bench's context: n_ctx = p + n (node-llama-cpp pads it up further), one batch holds the prompt.
    const contextSize = Math.ceil((p + n) / 256) * 256;
    const context = await model.createContext({
        contextSize, batchSize: Math.max(p, 1), sequences: 1,
        threads: {ideal: a.threads, min: a.threads},
        flashAttention: a.flashAttn === "auto" ? "auto" : a.flashAttn === "on",
        failedCreationRemedy: false,
    });
    const sequence = context.getSequence();
    const tContext = performance.now();
    const prompt = buildPrompt(model, p);
    const greedy = {token: true, options: {temperature: 0}};

    // One run: clear the sequence, prefill p tokens, then n one-token decode steps. Returns seconds.
    let firstTokenAt = null;
    const generated = [];
    async function run() {
        await sequence.clearHistory();
        if (sequence.nextTokenIndex !== 0) throw new Error(`sequence not empty after clearHistory (${sequence.nextTokenIndex})`);
        const input = prompt.map((t, i) => (i === p - 1 ? [t, {generateNext: greedy}] : t));
        const t0 = performance.now();
        const out = await sequence.controlledEvaluate(input);
        const t1 = performance.now();
        if (firstTokenAt == null) firstTokenAt = t1;
        let token = out[p - 1]?.next?.token;
        if (token == null) throw new Error("prefill returned no next token");
        if (sequence.nextTokenIndex !== p) throw new Error(`prefill evaluated ${sequence.nextTokenIndex} tokens, not ${p}`);
        generated.length = 0;
        const t2 = performance.now();
        for (let i = 0; i < n; i++) {
            const step = await sequence.controlledEvaluate([[token, {generateNext: greedy}]]);
            generated.push(token);
            token = step[0]?.next?.token;
            if (token == null) throw new Error(`decode step ${i} returned no next token`);
        }
        const t3 = performance.now();
        if (sequence.nextTokenIndex !== p + n) throw new Error(`context holds ${sequence.nextTokenIndex} tokens, not ${p + n}`);
        return {prefill: (t1 - t0) / 1e3, decode: (t3 - t2) / 1e3};
    }

    const w = await run();
    if (a.verbose) log(`warm-up: prefill ${(p / w.prefill).toFixed(2)} tok/s, decode ${(n / w.decode).toFixed(2)} tok/s`);
    const prefillRuns = [], decodeRuns = [], prefillSeconds = [], decodeSeconds = [];
    for (let r = 0; r < a.repeat; r++) {
        const t = await run();
        prefillSeconds.push(t.prefill);
        decodeSeconds.push(t.decode);
        prefillRuns.push(p / t.prefill);
        decodeRuns.push(n > 0 ? n / t.decode : 0);
        if (a.verbose) log(`run ${r + 1}/${a.repeat}: prefill ${prefillRuns[r].toFixed(2)} tok/s, decode ${decodeRuns[r].toFixed(2)} tok/s`);
    }
    const threadsUsed = context.currentThreads;

    const release = llama.llamaCppRelease ?? {};
    const result = {
        model: a.model,
        backend: "llama.cpp",
        threads: a.threads,
        prefill_tokens: p,
        decode_tokens: n,
        repetitions: a.repeat,
        prefill_tokens_per_s: median(prefillRuns),
        decode_tokens_per_s: n > 0 ? median(decodeRuns) : 0,
        prefill_runs: prefillRuns,
        decode_runs: decodeRuns,
        prefill_seconds: prefillSeconds,
        decode_seconds: decodeSeconds,
        // Model load (mmap) + context creation: everything before the first evaluation.
        load_s: (tContext - tLlama) / 1e3,
        model_load_s: (tModel - tLlama) / 1e3,
        context_s: (tContext - tModel) / 1e3,
        backend_init_s: (tLlama - tStart) / 1e3,
        // From the start of model loading to the warm-up run's first sampled token (includes one prefill).
        load_to_first_token_s: (firstTokenAt - tLlama) / 1e3,
        peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
        model_file_bytes: fs.statSync(a.model).size,
        context_size: context.contextSize,
        batch_size: context.batchSize,
        threads_used: threadsUsed,
        flash_attention: seen.flashAttention ?? context.flashAttention,
        repacked_weights_mib: seen.repackMiB,
        generated_tokens: generated.slice(),
        node_llama_cpp_version: version,
        llama_cpp_release: release.release ?? null,
        llama_cpp_repo: release.repo ?? null,
        build_type: llama.buildType,
        system_info: llama.systemInfo,
    };
    await context.dispose();
    await model.dispose();
    await llama.dispose();

    const f = (x) => x.toFixed(2);
    console.log(`llama.cpp ${result.llama_cpp_release} (node-llama-cpp ${version}, ${result.build_type}), ` +
                `${a.threads} threads, model ${a.model}`);
    console.log(`load ${f(result.load_s)} s (model ${f(result.model_load_s)} s, context ${f(result.context_s)} s), ` +
                `peak RSS ${(result.peak_rss_bytes / 2 ** 20).toFixed(0)} MiB`);
    console.log(`prefill ${p} tokens: ${f(result.prefill_tokens_per_s)} tok/s (median of ${a.repeat}: ` +
                `${prefillRuns.map(f).join(" ")})`);
    console.log(`decode  ${n} tokens: ${f(result.decode_tokens_per_s)} tok/s (median of ${a.repeat}: ` +
                `${decodeRuns.map(f).join(" ")})`);
    if (a.json) console.log(JSON.stringify(result));
}

main().catch((err) => {
    console.error(`bench.mjs: ${err?.stack ?? err}`);
    process.exit(1);
});
