// embed.mjs runs llama.cpp's embedding API (node-llama-cpp's prebuilt CPU library) on a GGUF
// file and prints, for each input, the token ids llama.cpp embedded and the pooled vector, as one
// JSON object on stdout.
//
//   node tests/reference/embed.mjs MODEL.gguf --texts TEXTS.json [--threads 1] [--verbose]
//   node tests/reference/embed.mjs MODEL.gguf --text "hello world" [--text …]
//
// TEXTS.json is a JSON list of strings. Output:
//
//   {
//     "model_sha256": "...",
//     "pooling": "mean",            // the file's pooling_type, which llama.cpp's context uses
//     "inputs": [
//       {"text": "hello world",
//        "ids": [101, 7592, 2088, 102],   // what llama.cpp embedded: its tokenization, [CLS] and [SEP] added
//        "vector": [0.12, ...]}            // llama_get_embeddings_seq: pooled, NOT normalised
//     ],
//     "reference": {...}
//   }
//
// How the numbers are made:
//   - The text is tokenized by llama.cpp (model.tokenize, no special-token parsing), then the
//     beginning and end tokens node-llama-cpp's LlamaEmbeddingContext adds for the vocabulary
//     (WordPiece: [CLS] and [SEP]; SentencePiece/BPE: BOS if the model asks for it) are added
//     here the same way, and these ids are what getEmbeddingFor receives (it adds nothing more).
//   - The vector is getEmbeddingFor's: llama_get_embeddings_seq for a pooled model (mean, cls,
//     last), llama_get_embeddings_ith(-1) — the last token's state — for pooling none (decoders).
//     llama.cpp's own normalisation (llama-embedding's --embd-normalize) is not applied: compare
//     raw vectors, or normalise both sides.
//   - CPU only, one thread, one batch of the whole input (batchSize = contextSize: an encoder must
//     see all its tokens in one ubatch), flash attention off, F32 K and V caches (a decoder uses its
//     cache even for embeddings; BERT has none). Each input is its own sequence, evaluated from an
//     empty context. The context is made as createEmbeddingContext makes it (_embeddings: true),
//     with those settings added.
import { createHash } from "node:crypto";
import { createReadStream, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { getLlama, LlamaEmbeddingContext, LlamaLogLevel } from "node-llama-cpp";

// The package's export map hides the helpers LlamaEmbeddingContext uses to add [CLS] and [SEP]:
// import the file itself, so that the ids here are exactly the ones it would build.
const { resolveBeginningTokenToPrepend, resolveEndTokenToAppend } = await import(
  new URL("./node_modules/node-llama-cpp/dist/utils/tokenizerUtils.js", import.meta.url));

const NODE_LLAMA_CPP_VERSION = "3.21.1";

function usage(msg) {
  if (msg) process.stderr.write(`embed.mjs: ${msg}\n`);
  process.stderr.write('usage: node tests/reference/embed.mjs MODEL.gguf (--texts TEXTS.json | --text "…" …) [--threads 1] [--verbose]\n');
  process.exit(2);
}

function parseCommandLine() {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        texts: { type: "string" },
        text: { type: "string", multiple: true },
        threads: { type: "string", default: "1" },
        verbose: { type: "boolean", default: false },
      },
    });
  } catch (err) {
    usage(err.message);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) usage("want exactly one MODEL.gguf");
  let texts = values.text ?? [];
  if (values.texts !== undefined) texts = [...texts, ...JSON.parse(readFileSync(values.texts, "utf8"))];
  if (texts.length === 0 || texts.some((t) => typeof t !== "string")) usage("want --texts FILE or --text, strings");
  const threads = Number(values.threads);
  if (!Number.isInteger(threads) || threads < 1) usage("--threads must be a positive integer");
  return { model: positionals[0], texts, threads, verbose: values.verbose };
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
  const model = await llama.loadModel({ modelPath: args.model, gpuLayers: 0, defaultContextFlashAttention: false });
  const contextSize = model.trainContextSize;
  // model.createEmbeddingContext, but with F32 K and V caches (a decoder keeps its keys and values
  // in the cache even here; the default F16 cache would round them) and flash attention off.
  const llamaContext = await model.createContext({
    contextSize, batchSize: contextSize, threads: args.threads, flashAttention: false,
    experimentalKvCacheKeyType: "F32", experimentalKvCacheValueType: "F32", failedCreationRemedy: false, _embeddings: true,
  });
  const ctx = new LlamaEmbeddingContext({ _llamaContext: llamaContext });

  const begin = resolveBeginningTokenToPrepend(model.vocabularyType, model.tokens);
  const end = resolveEndTokenToAppend(model.vocabularyType, model.tokens);
  const inputs = [];
  for (const text of args.texts) {
    const ids = [...model.tokenize(text, false)];
    if (begin != null && ids[0] !== begin) ids.unshift(begin);
    if (end != null && ids.at(-1) !== end) ids.push(end);
    if (ids.length >= contextSize) throw new Error(`${ids.length} tokens do not fit the context of ${contextSize}: ${JSON.stringify(text)}`);
    const e = await ctx.getEmbeddingFor(ids);
    inputs.push({ text, ids, vector: [...e.vector] });
  }
  const arch = model.fileInfo.metadata.general.architecture;
  const pooling = ["none", "mean", "cls", "last", "rank"][model.fileInfo.metadata[arch]?.pooling_type ?? 0];
  const result = {
    model_sha256: await sha256File(args.model),
    pooling,
    inputs,
    reference: {
      engine: "llama.cpp",
      api: "node-llama-cpp LlamaEmbeddingContext.getEmbeddingFor",
      node_llama_cpp: NODE_LLAMA_CPP_VERSION,
      llama_cpp_release: llama.llamaCppRelease?.release ?? null,
      cpu_only: true,
      threads: args.threads,
      context_size: contextSize,
      kv_cache_type: "F32",
      flash_attention: false,
      normalized: false,
    },
  };
  process.stdout.write(JSON.stringify(result) + "\n");
  await ctx.dispose();
  await model.dispose();
  await llama.dispose();
}

main().catch((err) => {
  process.stderr.write(`embed.mjs: ${err?.stack ?? err}\n`);
  process.exit(1);
});
