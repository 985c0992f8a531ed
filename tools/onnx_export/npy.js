// NumPy .npy (format 1.0/2.0, little-endian, C order) to and from ONNX Runtime tensors' typed arrays.
'use strict';
const fs = require('fs');

// descr -> [ONNX Runtime type name, typed array constructor, element size]
const TYPES = {
  '<f4': ['float32', Float32Array, 4],
  '<f8': ['float64', Float64Array, 8],
  '<f2': ['float16', Uint16Array, 2],
  '<i8': ['int64', BigInt64Array, 8],
  '<i4': ['int32', Int32Array, 4],
  '|i1': ['int8', Int8Array, 1],
  '|u1': ['uint8', Uint8Array, 1],
  '|b1': ['bool', Uint8Array, 1],
};

function readNpy(path) {
  const buf = fs.readFileSync(path);
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${path}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !shape) throw new Error(`${path}: unreadable header ${header}`);
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${path}: Fortran order is not supported`);
  const type = TYPES[descr[1]];
  if (!type) throw new Error(`${path}: dtype ${descr[1]} is not supported`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  const offset = start + headerLen;
  if (buf.length !== offset + count * type[2]) throw new Error(`${path}: ${buf.length - offset} data bytes for ${count} elements`);
  const bytes = buf.buffer.slice(buf.byteOffset + offset, buf.byteOffset + offset + count * type[2]);
  return { type: type[0], data: new type[1](bytes), dims };
}

function writeNpy(path, type, data, dims) {
  const descr = Object.keys(TYPES).find((k) => TYPES[k][0] === type);
  if (!descr) throw new Error(`cannot write ${type} as .npy`);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += ' '.repeat(pad % 64) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(path, Buffer.concat([head, Buffer.from(header, 'latin1'), body]));
}

// Element i as a double (half floats decoded), for comparisons.
function toNumbers(type, data) {
  if (type === 'float16') {
    return Array.from(data, (h) => {
      const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, f = h & 0x3ff;
      if (e === 0) return s * f * 2 ** -24;
      if (e === 31) return f ? NaN : s * Infinity;
      return s * (1 + f / 1024) * 2 ** (e - 15);
    });
  }
  return Array.from(data, Number);
}

module.exports = { readNpy, writeNpy, toNumbers };
