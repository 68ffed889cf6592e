// gguf.mjs writes a vocabulary-only GGUF (v3) file: the header, a few llama
// hyper-parameters that llama.cpp reads even in vocab-only mode, and the
// tokenizer.ggml.* keys. No tensors.
import fs from 'node:fs';

const T = { UINT32: 4, INT32: 5, FLOAT32: 6, BOOL: 7, STRING: 8, ARRAY: 9 };

class Writer {
  constructor() { this.parts = []; }
  u32(v) { const b = Buffer.alloc(4); b.writeUInt32LE(v); this.parts.push(b); }
  i32(v) { const b = Buffer.alloc(4); b.writeInt32LE(v); this.parts.push(b); }
  u64(v) { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); this.parts.push(b); }
  f32(v) { const b = Buffer.alloc(4); b.writeFloatLE(v); this.parts.push(b); }
  str(s) { const b = Buffer.from(s, 'utf8'); this.u64(b.length); this.parts.push(b); }
  bytes() { return Buffer.concat(this.parts); }
}

// writeVocabGGUF writes file with the given vocabulary (the JSON of
// tests/reference/vocab) and options {pre, addBOS, addEOS, addSpacePrefix, kv}.
export function writeVocabGGUF(file, v, opts = {}) {
  const kv = [];
  const put = (key, type, value, elemType) => kv.push({ key, type, value, elemType });
  put('general.architecture', T.STRING, 'llama');
  put('general.name', T.STRING, `vocab-${v.model}-${opts.pre ?? v.pre ?? 'spm'}`);
  put('llama.context_length', T.UINT32, 4096);
  put('llama.embedding_length', T.UINT32, 64);
  put('llama.block_count', T.UINT32, 1);
  put('llama.feed_forward_length', T.UINT32, 128);
  put('llama.attention.head_count', T.UINT32, 4);
  put('llama.attention.head_count_kv', T.UINT32, 4);
  put('llama.rope.dimension_count', T.UINT32, 16);
  put('llama.attention.layer_norm_rms_epsilon', T.FLOAT32, 1e-5);
  put('llama.vocab_size', T.UINT32, v.tokens.length);
  put('tokenizer.ggml.model', T.STRING, v.model);
  const pre = opts.pre ?? v.pre;
  if (pre) put('tokenizer.ggml.pre', T.STRING, pre);
  put('tokenizer.ggml.tokens', T.ARRAY, v.tokens, T.STRING);
  if (v.scores) put('tokenizer.ggml.scores', T.ARRAY, v.scores, T.FLOAT32);
  put('tokenizer.ggml.token_type', T.ARRAY, v.token_type, T.INT32);
  if (v.merges) put('tokenizer.ggml.merges', T.ARRAY, v.merges, T.STRING);
  put('tokenizer.ggml.bos_token_id', T.UINT32, v.bos);
  put('tokenizer.ggml.eos_token_id', T.UINT32, v.eos);
  if (v.unk !== undefined) put('tokenizer.ggml.unknown_token_id', T.UINT32, v.unk);
  put('tokenizer.ggml.add_bos_token', T.BOOL, opts.addBOS ?? false);
  put('tokenizer.ggml.add_eos_token', T.BOOL, opts.addEOS ?? false);
  if (opts.addSpacePrefix !== undefined) put('tokenizer.ggml.add_space_prefix', T.BOOL, opts.addSpacePrefix);
  // More keys as [key, type name, value], e.g. ['tokenizer.ggml.normalizer.lowercase', 'BOOL', false].
  for (const [key, type, x] of opts.kv ?? []) put(key, T[type], x);

  const w = new Writer();
  w.parts.push(Buffer.from('GGUF'));
  w.u32(3);           // version
  w.u64(0);           // tensor count
  w.u64(kv.length);   // kv count
  const value = (type, x) => {
    switch (type) {
      case T.UINT32: return w.u32(x);
      case T.INT32: return w.i32(x);
      case T.FLOAT32: return w.f32(x);
      case T.BOOL: return w.parts.push(Buffer.from([x ? 1 : 0]));
      case T.STRING: return w.str(x);
      default: throw new Error(`gguf: type ${type}`);
    }
  };
  for (const { key, type, value: x, elemType } of kv) {
    w.str(key);
    w.u32(type);
    if (type === T.ARRAY) {
      w.u32(elemType);
      w.u64(x.length);
      for (const e of x) value(elemType, e);
    } else {
      value(type, x);
    }
  }
  // Pad to the default 32-byte alignment where tensor data would start.
  const n = w.bytes().length;
  w.parts.push(Buffer.alloc((32 - (n % 32)) % 32));
  fs.writeFileSync(file, w.bytes());
}
