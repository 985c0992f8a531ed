#!/usr/bin/env node
// Runs an ONNX model in ONNX Runtime (the npm package onnxruntime-node) on .npy inputs.
//   node run_ort.js BUNDLE.json [--out DIR] [--rtol 1e-4] [--atol 1e-6] [--threads N]
//       a `tessera export onnx` manifest: runs the model on its example inputs and compares every
//       output with Tessera's (expected_*.npy); exits 1 on any element outside atol + rtol * |expected|.
//   node run_ort.js MODEL.onnx --inputs A.npy B.npy ... --out DIR [--threads N]
//       feeds the model's inputs in order and writes each output as DIR/<output name>.npy.
// onnxruntime-node is found through NODE_PATH (scripts/install_ort.sh installs it in build/ort).
'use strict';
const fs = require('fs');
const path = require('path');
const { readNpy, writeNpy, toNumbers } = require('./npy');

function parseArgs(argv) {
  const args = { positional: [], inputs: [], rtol: 1e-4, atol: 1e-6, threads: 2, out: '' };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--inputs') {
      while (i + 1 < argv.length && !argv[i + 1].startsWith('--')) args.inputs.push(argv[++i]);
    } else if (a === '--out') args.out = argv[++i];
    else if (a === '--rtol') args.rtol = Number(argv[++i]);
    else if (a === '--atol') args.atol = Number(argv[++i]);
    else if (a === '--threads') args.threads = Number(argv[++i]);
    else if (a.startsWith('--')) throw new Error(`unknown option ${a}`);
    else args.positional.push(a);
  }
  if (args.positional.length !== 1) throw new Error('expected one MODEL.onnx or BUNDLE.json');
  return args;
}

async function run(ort, modelPath, inputNames, arrays, threads) {
  const session = await ort.InferenceSession.create(modelPath, {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
  });
  if (arrays.length !== session.inputNames.length) {
    throw new Error(`${modelPath} takes ${session.inputNames.length} inputs (${session.inputNames.join(', ')}), got ${arrays.length}`);
  }
  const feeds = {};
  session.inputNames.forEach((name, i) => {
    if (inputNames && inputNames[i] !== name) throw new Error(`input ${i} is '${name}', the manifest says '${inputNames[i]}'`);
    const a = arrays[i];
    feeds[name] = new ort.Tensor(a.type, a.data, a.dims);
  });
  const started = process.hrtime.bigint();
  const results = await session.run(feeds);
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  return { outputs: session.outputNames.map((n) => [n, results[n]]), ms };
}

function compare(name, got, want, rtol, atol) {
  const dims = got.dims.join(',');
  if (dims !== want.dims.join(',') || got.type !== want.type) {
    return { ok: false, line: `${name}: ${got.type}[${dims}] but Tessera gave ${want.type}[${want.dims.join(',')}]` };
  }
  const a = toNumbers(got.type, got.data), b = toNumbers(want.type, want.data);
  let maxAbs = 0, maxRel = 0, bad = 0;
  for (let i = 0; i < a.length; ++i) {
    if (Number.isNaN(a[i]) && Number.isNaN(b[i])) continue;
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= atol + rtol * Math.abs(b[i]))) ++bad;
    if (d > maxAbs || Number.isNaN(d)) maxAbs = d;
    if (b[i] !== 0 && d / Math.abs(b[i]) > maxRel) maxRel = d / Math.abs(b[i]);
  }
  return {
    ok: bad === 0,
    line: `${name}: ${got.type}[${dims}] max abs err ${maxAbs.toExponential(2)}, max rel err ${maxRel.toExponential(2)}` +
      (bad ? `, ${bad} of ${a.length} elements outside atol ${atol} + rtol ${rtol}` : ''),
  };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const ort = require('onnxruntime-node');
  const target = args.positional[0];
  if (target.endsWith('.json')) {
    const dir = path.dirname(target);
    const manifest = JSON.parse(fs.readFileSync(target, 'utf8'));
    const arrays = manifest.inputs.map((t) => readNpy(path.join(dir, t.file)));
    const { outputs, ms } = await run(ort, path.join(dir, manifest.model), manifest.inputs.map((t) => t.name), arrays, args.threads);
    console.log(`${manifest.model}: ONNX Runtime ${ort.env.versions ? ort.env.versions.common : ''} ran in ${ms.toFixed(1)} ms`);
    let ok = true;
    outputs.forEach(([name, t], i) => {
      const spec = manifest.outputs[i];
      if (spec.name !== name) throw new Error(`output ${i} is '${name}', the manifest says '${spec.name}'`);
      if (args.out) writeNpy(path.join(args.out, `${name}.npy`), t.type, t.data, t.dims);
      if (!spec.file) return;
      const r = compare(name, t, readNpy(path.join(dir, spec.file)), args.rtol, args.atol);
      console.log(`  ${r.ok ? 'ok  ' : 'FAIL'} ${r.line}`);
      ok = ok && r.ok;
    });
    process.exitCode = ok ? 0 : 1;
    return;
  }
  if (!args.out) throw new Error('--out DIR is required with a model');
  const { outputs } = await run(ort, target, null, args.inputs.map(readNpy), args.threads);
  fs.mkdirSync(args.out, { recursive: true });
  for (const [name, t] of outputs) {
    writeNpy(path.join(args.out, `${name.replace(/[^A-Za-z0-9_.-]/g, '_')}.npy`), t.type, t.data, t.dims);
    console.log(`${name}: ${t.type}[${t.dims.join(', ')}]`);
  }
}

main().catch((e) => {
  console.error(`run_ort: ${e.message}`);
  process.exitCode = 1;
});
