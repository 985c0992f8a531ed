// ONNX Runtime's side of bench/onnx/compare_onnxruntime.py: times one model on one .npy-like raw input.
//   node bench/onnx/ort_bench.mjs --model M.onnx --shape 16,3,224,224 [--threads 2] [--repeat 10] [--warmup 2]
//        [--input x.f32 --output y.f32]   (raw little-endian f32: checks the peer computes the same)
// Prints one JSON line: {"median_ms": ..., "runs_ms": [...]}; the session runs on the CPU provider
// with intra-op threads = --threads, inter-op 1, sequential execution, all graph optimizations.
import { createRequire } from "node:module";
import fs from "node:fs";

const require = createRequire(process.env.TESSERA_ORT_DIR ? process.env.TESSERA_ORT_DIR + "/" : import.meta.url);
const ort = require("onnxruntime-node");

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith("--")) acc.push([a.slice(2), all[i + 1]]);
  return acc;
}, []));
const shape = args.shape.split(",").map(Number);
const threads = Number(args.threads ?? 2), repeat = Number(args.repeat ?? 10), warmup = Number(args.warmup ?? 2);

const session = await ort.InferenceSession.create(args.model, {
  executionProviders: ["cpu"], intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: "sequential",
  graphOptimizationLevel: "all",
});
const count = shape.reduce((a, b) => a * b, 1);
let data = new Float32Array(count);
if (args.input) {
  const raw = fs.readFileSync(args.input);
  data = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
} else {
  for (let i = 0; i < count; ++i) data[i] = Math.sin(i * 0.001);
}
const feeds = { [session.inputNames[0]]: new ort.Tensor("float32", data, shape) };
let out;
for (let i = 0; i < warmup; ++i) out = await session.run(feeds);
const runs = [];
for (let i = 0; i < repeat; ++i) {
  const t0 = process.hrtime.bigint();
  out = await session.run(feeds);
  runs.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
if (args.output) fs.writeFileSync(args.output, Buffer.from(out[session.outputNames[0]].data.buffer));
const sorted = [...runs].sort((a, b) => a - b);
console.log(JSON.stringify({ median_ms: sorted[Math.floor(sorted.length / 2)], runs_ms: runs }));
