// json.mjs decodes greedily under llama.cpp's JSON grammar (grammars/json.gbnf, node-llama-cpp's
// built-in "json" grammar), or under a GBNF grammar read from a file (--gbnf), and prints the ids,
// for toy's masked decoding to match (json_test.go; gen_gbnf_goldens.sh for --gbnf).
//
//   node tests/reference/json.mjs MODEL.gguf --prompt-ids "1 2 3" [--n 96] [--bias B] [--threads 1]
//        [--gbnf FILE.gbnf] [--bias-regex REGEX]
//
// Output: {"model_sha256": "...", "prompt_ids": [...], "bias": {...}, "ids": [...], "text": "...", "reference": {...}}
// With --gbnf, also "gbnf": FILE's base name and "gbnf_sha256": the SHA-256 of FILE's bytes, after
// "model_sha256"; without it the output is what it was before --gbnf existed.
//
// --bias B adds B to the logits of the tokens made only of JSON's structural characters, digits,
// whitespace and the literals (the ids are listed in the output), so that a random model's reply
// goes through objects, arrays, numbers and literals, not only one long string.
// --gbnf FILE: the grammar is FILE's text (llama.createGrammar({grammar}), root rule "root") instead
// of the built-in "json"; llama.cpp's parser rejects a malformed grammar and the script fails.
// --bias-regex REGEX: the biased tokens are those whose piece (the token detokenized alone, special
// tokens as their text, e.g. "</s>", "<|endoftext|>") the JavaScript RegExp REGEX (no flags) matches,
// instead of the JSON predicate above; the output's bias then also has "regex": REGEX.
// ids are the tokens llama.cpp's grammar sampler and greedy sampler chose after the prompt, fed
// as they are (no BOS), up to n or the first end-of-generation token (included); text is their
// detokenized text. F32 K and V caches, flash attention off, as llamacpp.mjs.
import { createHash } from "node:crypto";
import { createReadStream, readFileSync } from "node:fs";
import { basename } from "node:path";
import { parseArgs } from "node:util";
import { getLlama, LlamaGrammarEvaluationState, LlamaLogLevel, TokenBias } from "node-llama-cpp";

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    "prompt-ids": { type: "string" },
    n: { type: "string", default: "96" },
    bias: { type: "string", default: "0" },
    threads: { type: "string", default: "1" },
    gbnf: { type: "string" },
    "bias-regex": { type: "string" },
  },
});
if (positionals.length !== 1 || !opts["prompt-ids"]) {
  process.stderr.write('usage: node tests/reference/json.mjs MODEL.gguf --prompt-ids "1 2 3" [--n 96] [--bias B] [--threads 1] [--gbnf FILE.gbnf] [--bias-regex REGEX]\n');
  process.exit(2);
}
const path = positionals[0];
const promptIds = opts["prompt-ids"].trim().split(/\s+/).map(Number);
const n = Number(opts.n);

const sha = await new Promise((resolve, reject) => {
  const h = createHash("sha256");
  createReadStream(path).on("data", (d) => h.update(d)).on("end", () => resolve(h.digest("hex"))).on("error", reject);
});

const llama = await getLlama({ gpu: false, build: "never", usePrebuiltBinaries: true, logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath: path });
const context = await model.createContext({
  contextSize: promptIds.length + n + 8, batchSize: promptIds.length + n + 8, sequences: 1,
  threads: Number(opts.threads), flashAttention: false, experimentalKvCacheKeyType: "F32", experimentalKvCacheValueType: "F32",
  failedCreationRemedy: false,
});
const gbnf = opts.gbnf === undefined ? undefined : readFileSync(opts.gbnf);
const grammar = gbnf === undefined
  ? await llama.getGrammarFor("json")
  : await llama.createGrammar({ grammar: gbnf.toString("utf8") });
const state = new LlamaGrammarEvaluationState({ model, grammar });
const biasRegex = opts["bias-regex"] === undefined ? undefined : new RegExp(opts["bias-regex"]);
const bias = biasRegex === undefined
  ? { value: Number(opts.bias), ids: [] }
  : { value: Number(opts.bias), regex: opts["bias-regex"], ids: [] };
const tokenBias = new TokenBias(model.tokenizer);
if (bias.value !== 0) {
  const vocab = model.fileInfo.metadata.tokenizer.ggml.tokens.length;
  for (let id = 0; id < vocab; id++) {
    const piece = model.detokenize([id], true);
    if (biasRegex !== undefined ? biasRegex.test(piece)
      : /^[ \n{}\[\]",:0-9.eE+-]+$/.test(piece) || /^ ?(true|false|null)$/.test(piece)) bias.ids.push(id);
  }
  for (const id of bias.ids) tokenBias.set(id, { logit: bias.value });
}
const sequence = context.getSequence();
const ids = [];
for await (const token of sequence.evaluate(promptIds, { temperature: 0, grammarEvaluationState: state, tokenBias, yieldEogToken: true })) {
  ids.push(token);
  if (ids.length >= n || model.isEogToken(token)) break;
}
process.stdout.write(JSON.stringify({
  model_sha256: sha,
  ...(gbnf === undefined ? {} : { gbnf: basename(opts.gbnf), gbnf_sha256: createHash("sha256").update(gbnf).digest("hex") }),
  prompt_ids: promptIds,
  bias,
  ids,
  text: model.detokenize(ids.filter((id) => !model.isEogToken(id))),
  reference: { node_llama_cpp: "3.21.1", grammar: gbnf === undefined ? "json (grammars/json.gbnf)" : `${basename(opts.gbnf)} (GBNF file, llama.createGrammar)`, sampler: "token bias, grammar, greedy (temperature 0)", threads: Number(opts.threads) },
}, null, 1) + "\n");
await context.dispose();
await model.dispose();
