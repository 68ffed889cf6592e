// bench.mjs times encoding ~1 MB of mixed text (built from texts.json as
// toy/tokenizer/bench_test.go builds it) with llama.cpp's tokenizer
// (node-llama-cpp, vocab-only GGUF), js-tiktoken (r50k_base, GPT-2's
// vocabulary) and toy (go test -bench), in one run on one machine, and prints
// tokens per second and the ratios.
//
// Usage (from tests/tokenizer): npm ci && node vocab.mjs && node bench.mjs
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { getLlama } from 'node-llama-cpp';
import { Tiktoken } from 'js-tiktoken/lite';
import r50k from 'js-tiktoken/ranks/r50k_base';
import { writeVocabGGUF } from './gguf.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
const readVocab = (name) => JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(root, 'tests', 'reference', 'vocab', `${name}.json.gz`))));

function benchText() {
  const parts = JSON.parse(fs.readFileSync(path.join(here, 'texts.json'))).texts.filter((t) => t.text !== undefined).map((t) => t.text);
  let s = '', bytes = 0;
  for (let k = 0; bytes < 1_000_000; k++) {
    for (const p of parts) { s += p + '\n'; bytes += Buffer.byteLength(p) + 1; }
    const r = `Round ${k}.\n`;
    s += r; bytes += r.length;
  }
  return { s, bytes };
}

// best runs f a few times and returns the fastest time in seconds and f's result.
function best(f, runs = 5) {
  let t = Infinity, out;
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    out = f();
    t = Math.min(t, Number(process.hrtime.bigint() - t0) / 1e9);
  }
  return { t, out };
}

const { s: text, bytes } = benchText();
console.log(`text: ${bytes} bytes; ${os.cpus()[0].model}, node ${process.version}`);
const rows = [];

// js-tiktoken, GPT-2 (r50k_base). Its splitting differs from llama.cpp's only
// in corner cases, so the token counts are close but need not be equal.
{
  const enc = new Tiktoken(r50k);
  const { t, out } = best(() => enc.encode(text, [], []));
  rows.push({ tokenizer: 'js-tiktoken', config: 'gpt2', tokens: out.length, seconds: t });
}

// llama.cpp
const llama = await getLlama({ gpu: false, build: 'never', logLevel: 'error' });
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'toy-bench-'));
for (const c of [
  { config: 'gpt2', vocab: 'gpt2', pre: 'gpt-2' },
  { config: 'llama3', vocab: 'llama3', pre: 'llama-bpe' },
  { config: 'qwen2', vocab: 'gpt2', pre: 'qwen2' },
  { config: 'llama2', vocab: 'llama2' },
]) {
  const file = path.join(tmp, `${c.config}.gguf`);
  writeVocabGGUF(file, readVocab(c.vocab), { pre: c.pre });
  const model = await llama.loadModel({ modelPath: file, vocabOnly: true });
  const { t, out } = best(() => model.tokenize(text, false), 3);
  rows.push({ tokenizer: 'llama.cpp', config: c.config, tokens: out.length, seconds: t });
  await model.dispose();
}
fs.rmSync(tmp, { recursive: true, force: true });

// toy
const goOut = execFileSync('go', ['test', './toy/tokenizer', '-run', '^$', '-bench', '^BenchmarkEncode$', '-benchtime', '5x', '-count', '1'], { cwd: root, encoding: 'utf8' });
for (const line of goOut.split('\n')) {
  const m = line.match(/^BenchmarkEncode\/(\w+)-\d+\s+\d+\s+(\d+) ns\/op.*?\s(\d+) tokens\s/);
  if (m) rows.push({ tokenizer: 'toy', config: m[1], tokens: Number(m[3]), seconds: Number(m[2]) / 1e9 });
}

const rate = (r) => r.tokens / r.seconds;
console.log('tokenizer    config   tokens      seconds   tokens/s');
for (const r of rows) {
  console.log(`${r.tokenizer.padEnd(12)} ${r.config.padEnd(8)} ${String(r.tokens).padEnd(11)} ${r.seconds.toFixed(3).padEnd(9)} ${Math.round(rate(r)).toLocaleString('en')}`);
}
const find = (tk, c) => rows.find((r) => r.tokenizer === tk && r.config === c);
for (const c of ['gpt2', 'llama3', 'qwen2', 'llama2']) {
  const toy = find('toy', c), cpp = find('llama.cpp', c);
  if (toy && cpp) console.log(`${c}: toy/llama.cpp = ${(rate(toy) / rate(cpp)).toFixed(2)}x${toy.tokens === cpp.tokens ? '' : ` (token counts differ: ${toy.tokens} vs ${cpp.tokens})`}`);
}
const tt = find('js-tiktoken', 'gpt2'), toyGPT2 = find('toy', 'gpt2');
if (tt && toyGPT2) console.log(`gpt2: toy/js-tiktoken = ${(rate(toyGPT2) / rate(tt)).toFixed(2)}x`);
