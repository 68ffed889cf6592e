// golden.mjs writes toy/tokenizer/testdata/golden.json: the token ids that
// llama.cpp (node-llama-cpp, vocab-only GGUF files written here from
// tests/reference/vocab) and Hugging Face's tokenizer (@huggingface/tokenizers,
// with a tokenizer.json built here from the same vocabulary) give for every
// text of texts.json, with and without special-token parsing, and llama.cpp's
// detokenization of its ids. It also writes testdata/random.json.gz, llama.cpp's
// ids for 300 random texts made of hard pieces, and, in golden.json, the
// SHA-256 of llama.cpp's ids for the ~1 MB benchmark text.
//
// Usage (from tests/tokenizer): npm ci && node vocab.mjs && node golden.mjs
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import crypto from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { getLlama } from 'node-llama-cpp';
import { Tokenizer } from '@huggingface/tokenizers';
import { writeVocabGGUF } from './gguf.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
const out = path.join(root, 'toy', 'tokenizer', 'testdata', 'golden.json');
const outRandom = path.join(root, 'toy', 'tokenizer', 'testdata', 'random.json.gz');

// randomTexts makes n texts of 1 to 40 pieces drawn from hard pieces, with a
// fixed seed (mulberry32), so the set is the same on every run.
function randomTexts(n, seed) {
  let a = seed >>> 0;
  const rand = () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pieces = [
    'a', 'b', 'the', 'The', 'HELLO', 'world', 'é', 'ß', 'x', 'Zebra', 'ab12', '_', '-', '.', ',', '!', '?', '...', '(', ')', '"', '`', '$', '+', '=', '<', '>', '|', '~', '^', '/', '\\', '@', '#', '%', '&', '*',
    ' ', ' ', ' ', '  ', '   ', '\t', '\n', '\n', '\n\n', '\r\n', '\r', ' \n', '\u00a0', '\u3000', '\u2009', '\u200b', '\u0085', '\u000b', '\u000c',
    "'", "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", "'Re", "n't",
    '0', '1', '7', '12', '123', '4567', '99999', '3.14', '٣', '١٢٣', '०', '０', '½', '²', 'Ⅻ', '𝟙',
    '日本', '語', '中文', '한국', 'テスト', '，', '。', 'مرحبا', 'ال', 'नमस्ते', 'क्ष', 'ि', 'Ελ', 'Кир',
    '😀', '👩‍👩‍👧', '🏳️‍🌈', '👍🏽', '\u200d', '\ufe0f', 'e\u0301', '\u0308', '𝔘', '∑', '≠', '€', '¥',
    '<|endoftext|>', '<|endoftext', '<s>', '</s>', '<unk>', '<|eot_id|>', '<|begin_of_text|>', '<|start_header_id|>', '<|', '|>', '▁', '▁▁', '<0x0A>', 'Ġ', 'Ċ',
    '\u0000', '\u0001', '\u001b', '\u007f', '\ufffd', '\uffff',
  ];
  const texts = [];
  for (let i = 0; i < n; i++) {
    const k = 1 + Math.floor(rand() * 40);
    let s = '';
    for (let j = 0; j < k; j++) s += pieces[Math.floor(rand() * pieces.length)];
    texts.push(s);
  }
  return texts;
}

// benchText is the ~1 MB text of bench.mjs and bench_test.go.
function benchText(texts) {
  const parts = texts.filter((t) => t.text !== undefined).map((t) => t.text);
  let s = '', bytes = 0;
  for (let k = 0; bytes < 1_000_000; k++) {
    for (const p of parts) { s += p + '\n'; bytes += Buffer.byteLength(p) + 1; }
    const r = `Round ${k}.\n`;
    s += r; bytes += r.length;
  }
  return s;
}

const idsHash = (ids) => crypto.createHash('sha256').update(ids.join(',')).digest('hex');

const readVocab = (name) => JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(root, 'tests', 'reference', 'vocab', `${name}.json.gz`))));
const version = (pkg) => JSON.parse(fs.readFileSync(path.join(here, 'node_modules', pkg, 'package.json'))).version;

// The pre-tokenizer expressions, as the models' tokenizer.json files write them.
const LLAMA3 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const QWEN2 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const byteLevel = (useRegex) => ({ type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: useRegex });
const split = (regex) => ({ type: 'Split', pattern: { Regex: regex }, behavior: 'Isolated', invert: false });

// hfTokenizer builds a Hugging Face tokenizer.json for vocabulary v with the
// given pre-tokenizer (byte-level BPE) or, for SentencePiece, Llama 2's.
function hfTokenizer(v, preTokenizer, ignoreMerges) {
  const vocab = Object.fromEntries(v.tokens.map((t, i) => [t, i]));
  const added = v.tokens
    .map((t, id) => ({ id, content: t, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }))
    .filter((t) => v.token_type[t.id] === 3 || v.token_type[t.id] === 2);
  if (v.model === 'llama') {
    return new Tokenizer({
      version: '1.0', added_tokens: added,
      normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '▁' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }] },
      pre_tokenizer: null, post_processor: null,
      decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] },
      model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: true, byte_fallback: true, vocab, merges: llamaMerges() },
    }, {});
  }
  return new Tokenizer({
    version: '1.0', added_tokens: added, normalizer: null, pre_tokenizer: preTokenizer, post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, ignore_merges: !!ignoreMerges, vocab, merges: v.merges },
  }, {});
}

// llamaMerges is Llama 2's Hugging Face merge list, which llama-tokenizer-js keeps.
let llamaMergeList;
function llamaMerges() {
  if (!llamaMergeList) llamaMergeList = [...globalThis.llama2Tokenizer.merges.keys()];
  return llamaMergeList;
}

const configs = [
  { name: 'gpt2', vocab: 'gpt2', pre: 'gpt-2', hf: () => byteLevel(true) },
  { name: 'gpt2-qwen2', vocab: 'gpt2', pre: 'qwen2', hf: () => ({ type: 'Sequence', pretokenizers: [split(QWEN2), byteLevel(false)] }) },
  { name: 'gpt2-smollm', vocab: 'gpt2', pre: 'smollm', hf: () => ({ type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: true }, byteLevel(true)] }) },
  { name: 'gpt2-default', vocab: 'gpt2', pre: 'default', hf: null },
  // DeepSeek's and Falcon's pre-tokenizers over GPT-2's vocabulary: no real
  // DeepSeek vocabulary is at hand offline, and the splitting is what differs.
  { name: 'gpt2-deepseek-llm', vocab: 'gpt2', pre: 'deepseek-llm', hf: null },
  { name: 'gpt2-deepseek-coder', vocab: 'gpt2', pre: 'deepseek-coder', hf: null },
  { name: 'gpt2-deepseek-v3', vocab: 'gpt2', pre: 'deepseek-v3', hf: null },
  { name: 'gpt2-falcon', vocab: 'gpt2', pre: 'falcon', hf: null },
  // Tekken's and GPT-4o's case-splitting pre-tokenizers; llama.cpp runs
  // rewritten expressions (upper = a letter not a-z, lower = not A-Z) that
  // Hugging Face's original ones do not match on non-ASCII letters, so they
  // are compared with llama.cpp only. Tekken skips merges for a word that is
  // a token, which only a vocabulary whose merges differ from its ranks
  // (Llama 3's) shows.
  { name: 'gpt2-tekken', vocab: 'gpt2', pre: 'tekken', hf: null },
  { name: 'gpt2-gpt-4o', vocab: 'gpt2', pre: 'gpt-4o', hf: null },
  { name: 'llama3', vocab: 'llama3', pre: 'llama-bpe', hf: () => ({ type: 'Sequence', pretokenizers: [split(LLAMA3), byteLevel(false)] }), ignoreMerges: true },
  { name: 'llama3-tekken', vocab: 'llama3', pre: 'tekken', hf: null },
  { name: 'llama3-gpt-4o', vocab: 'llama3', pre: 'gpt-4o', hf: null },
  { name: 'llama2', vocab: 'llama2', hf: () => null },
];

async function main() {
  globalThis.llama2Tokenizer = (await import('llama-tokenizer-js')).default;
  const texts = JSON.parse(fs.readFileSync(path.join(here, 'texts.json'))).texts;
  const llama = await getLlama({ gpu: false, build: 'never', logLevel: 'error' });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'toy-golden-'));
  const cases = [];
  const vocabs = {};
  const random = randomTexts(300, 20261129);
  const randomCases = [];
  const bench = benchText(texts);
  const benchHashes = {};
  let agree = 0, disagree = 0;
  for (const c of configs) {
    const v = (vocabs[c.vocab] ??= readVocab(c.vocab));
    const file = path.join(tmp, `${c.name}.gguf`);
    writeVocabGGUF(file, v, { pre: c.pre });
    const model = await llama.loadModel({ modelPath: file, vocabOnly: true });
    const hf = c.hf ? hfTokenizer(v, c.hf(), c.ignoreMerges) : null;
    const specials = v.tokens.filter((t, i) => v.token_type[i] === 3 || v.token_type[i] === 2);
    for (const t of texts) {
      if (t.text === undefined) continue; // invalid UTF-8 cannot cross into JS strings
      for (const special of [false, true]) {
        const ids = [...model.tokenize(t.text, special)];
        const decoded = model.detokenize(ids, false);
        let hfIds = null;
        // Hugging Face always splits out added special tokens; compare it
        // without special parsing only where the text has none.
        if (hf && (special || !specials.some((s) => t.text.includes(s)))) {
          hfIds = hf.encode(t.text, { add_special_tokens: false }).ids;
          if (JSON.stringify(hfIds) === JSON.stringify(ids)) agree++;
          else { disagree++; console.error(`${c.name} ${t.name} special=${special}: llama.cpp and HF differ\n  llama.cpp ${JSON.stringify(ids)}\n  HF        ${JSON.stringify(hfIds)}`); }
        }
        cases.push({ config: c.name, text: t.name, special, ids, hf: hfIds, decoded });
      }
    }
    for (let i = 0; i < random.length; i++) {
      const special = i % 2 === 1;
      randomCases.push({ config: c.name, text: i, special, ids: [...model.tokenize(random[i], special)] });
    }
    const benchIDs = [...model.tokenize(bench, false)];
    benchHashes[c.name] = { tokens: benchIDs.length, sha256: idsHash(benchIDs) };
    await model.dispose();
  }
  fs.rmSync(tmp, { recursive: true, force: true });
  const golden = {
    about: 'Made by tests/tokenizer/golden.mjs; do not edit. ids: llama.cpp tokenize(text, special); hf: Hugging Face tokenizers (null where not compared); decoded: llama.cpp detokenize(ids, false).',
    generator: { 'node-llama-cpp': version('node-llama-cpp'), '@huggingface/tokenizers': version('@huggingface/tokenizers') },
    configs: configs.map((c) => ({ name: c.name, vocab: c.vocab, pre: c.pre ?? '' })),
    texts,
    bench: benchHashes,
    cases,
  };
  fs.writeFileSync(outRandom, zlib.gzipSync(JSON.stringify({
    about: 'Made by tests/tokenizer/golden.mjs; do not edit. llama.cpp tokenize(texts[text], special) for random texts of hard pieces.',
    texts: random, cases: randomCases,
  }), { level: 9 }));
  fs.writeFileSync(out, JSON.stringify(golden, null, 0).replace(/\{"config"/g, '\n{"config"') + '\n');
  console.error(`${out}: ${cases.length} cases; llama.cpp and HF agree on ${agree}, differ on ${disagree}`);
}

await main();
