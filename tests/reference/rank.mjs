// rank.mjs runs llama.cpp's reranking (node-llama-cpp's prebuilt CPU library: a GGUF file with
// pooling type "rank", a cross-encoder) on (query, document) pairs and prints, for each pair, the
// token ids llama.cpp evaluated, the raw score and the ranking score, as one JSON object on stdout.
//
//   node tests/reference/rank.mjs MODEL.gguf --texts TEXTS.json [--threads 1] [--verbose]
//   node tests/reference/rank.mjs MODEL.gguf --query "…" --document "…" [--document …]
//
// TEXTS.json is a JSON list of {"query": "…", "documents": ["…", …]}. Output:
//
//   {
//     "model_sha256": "...",
//     "pooling": "rank",             // the file's pooling_type, which llama.cpp's context uses
//     "pairs": [
//       {"query": "what is …", "document": "Paris is …",
//        "ids": [101, 2054, …, 102, 102, 3000, …, 102],  // what llama.cpp evaluated
//        "logit": 0.41,               // llama.cpp's score: element 0 of llama_get_embeddings_seq
//        "score": 0.601}              // rankAll's value: sigmoid(logit)
//     ],
//     "reference": {...}
//   }
//
// How the numbers are made:
//   - model.createRankingContext() and rankingContext.rankAll(query, documents), one call per
//     query, pairs in the order of the file. rankAll tokenizes the query and each document with
//     llama.cpp (no special-token parsing, "trimLeadingSpace") and evaluates, without a template
//     (a BERT file has no tokenizer.chat_template.rerank),
//       [BOS] query [EOS] [SEP] document [EOS]
//     leaving out the ones the vocabulary lacks. For bert's WordPiece files BOS is [CLS] (101)
//     and EOS and SEP are both [SEP] (102): [CLS] q [SEP] [SEP] d [SEP], as llama.cpp's own
//     server builds it. All tokens have token type 0 (llama.cpp adds token_types row 0 to every
//     token). "ids" are the ranking context's own _getEvaluationInput of the same tokens.
//   - The score is 1/(1+exp(-logit)) of llama.cpp's rank pooling of the [CLS] state h:
//     h ← tanh(cls·h + cls_b) if the file has cls.weight, h ← cls_out·h + cls_out_b if it has
//     cls.output.weight, logit = h[0]. "logit" is read here by evaluating the same ids again
//     through the ranking context's own path and catching the raw value it reads; its sigmoid is
//     checked to equal rankAll's score.
//   - CPU only, one thread, one batch of the whole input (batchSize = contextSize: an encoder must
//     see all its tokens in one ubatch), flash attention off. Each pair is evaluated from an empty
//     context.
import { createHash } from "node:crypto";
import { createReadStream, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";

// The package's export map hides the helper rankAll tokenizes with: import the file itself, so
// that the tokens here are exactly the ones it makes.
const { tokenizeInput } = await import(
  new URL("./node_modules/node-llama-cpp/dist/utils/tokenizeInput.js", import.meta.url));

const NODE_LLAMA_CPP_VERSION = "3.21.1";

function usage(msg) {
  if (msg) process.stderr.write(`rank.mjs: ${msg}\n`);
  process.stderr.write('usage: node tests/reference/rank.mjs MODEL.gguf (--texts TEXTS.json | --query "…" --document "…" …) [--threads 1] [--verbose]\n');
  process.exit(2);
}

function parseCommandLine() {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        texts: { type: "string" },
        query: { type: "string" },
        document: { type: "string", multiple: true },
        threads: { type: "string", default: "1" },
        verbose: { type: "boolean", default: false },
      },
    });
  } catch (err) {
    usage(err.message);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) usage("want exactly one MODEL.gguf");
  const groups = [];
  if (values.query !== undefined || values.document !== undefined) {
    if (values.query === undefined || values.document === undefined) usage("--query and --document go together");
    groups.push({ query: values.query, documents: values.document });
  }
  if (values.texts !== undefined) groups.push(...JSON.parse(readFileSync(values.texts, "utf8")));
  const ok = (g) => typeof g?.query === "string" && Array.isArray(g.documents) && g.documents.length > 0 &&
    g.documents.every((d) => typeof d === "string");
  if (groups.length === 0 || !groups.every(ok)) usage('want --texts FILE ([{"query", "documents": [...]}]) or --query and --document, strings');
  const threads = Number(values.threads);
  if (!Number.isInteger(threads) || threads < 1) usage("--threads must be a positive integer");
  return { model: positionals[0], groups, threads, verbose: values.verbose };
}

function sha256File(path) {
  return new Promise((resolve, reject) => {
    const h = createHash("sha256");
    createReadStream(path).on("error", reject).on("data", (b) => h.update(b)).on("end", () => resolve(h.digest("hex")));
  });
}

async function main() {
  const args = parseCommandLine();
  const llama = await getLlama({
    gpu: false,
    build: "never",
    usePrebuiltBinaries: true,
    skipDownload: true,
    progressLogs: false,
    maxThreads: 0,
    logLevel: args.verbose ? LlamaLogLevel.info : LlamaLogLevel.error,
    logger: (level, message) => process.stderr.write(`[llama.cpp ${level}] ${message}\n`),
  });
  // defaultContextFlashAttention: the ranking context's flash attention (createRankingContext
  // takes no such option). BERT keeps no K and V cache, so its type does not matter.
  const model = await llama.loadModel({ modelPath: args.model, gpuLayers: 0, defaultContextFlashAttention: false });
  const contextSize = model.trainContextSize;
  const ctx = await model.createRankingContext({ contextSize, batchSize: contextSize, threads: args.threads });

  const tokenize = (text) => tokenizeInput(text, model.tokenizer, "trimLeadingSpace", false);
  const pairs = [];
  for (const { query, documents } of args.groups) {
    const scores = await ctx.rankAll(query, documents);
    const queryTokens = tokenize(query);
    documents.forEach((document, i) => {
      const ids = [...ctx._getEvaluationInput(queryTokens, tokenize(document))];
      if (ids.length >= contextSize) throw new Error(`${ids.length} tokens do not fit the context of ${contextSize}`);
      pairs.push({ query, document, ids, logit: null, score: scores[i] });
    });
  }

  // The raw scores: the same ids through the ranking context's own evaluation, one at a time,
  // catching the value it reads from llama.cpp before its sigmoid.
  // (The addon's methods are read-only: the context's handle on it is swapped for a proxy.)
  const llamaContext = ctx._llamaContext, addon = llamaContext._ctx;
  let caught = null;
  llamaContext._ctx = new Proxy(addon, {
    get(target, key) {
      const v = Reflect.get(target, key, target);
      if (key === "getEmbedding") return (...a) => (caught = v.apply(target, a));
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  for (const p of pairs) {
    caught = null;
    const probability = await ctx._evaluateRankingForInput(p.ids);
    if (caught == null || caught.length < 1) throw new Error(`no raw score for ${JSON.stringify(p.document)}`);
    p.logit = caught[0];
    if (probability !== p.score || 1 / (1 + Math.exp(-p.logit)) !== p.score)
      throw new Error(`rankAll gave ${p.score}, the same ids again ${probability} (sigmoid of ${p.logit}): ${JSON.stringify(p.document)}`);
  }
  llamaContext._ctx = addon;

  const arch = model.fileInfo.metadata.general.architecture;
  const pooling = ["none", "mean", "cls", "last", "rank"][model.fileInfo.metadata[arch]?.pooling_type ?? 0];
  const result = {
    model_sha256: await sha256File(args.model),
    pooling,
    pairs,
    reference: {
      engine: "llama.cpp",
      api: "node-llama-cpp LlamaRankingContext.rankAll",
      node_llama_cpp: NODE_LLAMA_CPP_VERSION,
      llama_cpp_release: llama.llamaCppRelease?.release ?? null,
      cpu_only: true,
      threads: args.threads,
      context_size: contextSize,
      flash_attention: false,
      input: "[BOS] query [EOS] [SEP] document [EOS]",
      score: "sigmoid(logit)",
    },
  };
  process.stdout.write(JSON.stringify(result) + "\n");
  await ctx.dispose();
  await model.dispose();
  await llama.dispose();
}

main().catch((err) => {
  process.stderr.write(`rank.mjs: ${err?.stack ?? err}\n`);
  process.exit(1);
});
