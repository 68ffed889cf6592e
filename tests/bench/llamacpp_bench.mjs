// llamacpp_bench.mjs measures llama.cpp's prefill and greedy-decode speed on a GGUF file
// (through node-llama-cpp's prebuilt CPU library, installed in tests/reference) and prints JSON.
//
//   node tests/bench/llamacpp_bench.mjs MODEL.gguf [--threads 1] [--prompt 128] [--n 128]
//        [--prompt-ids "i j k ..."] [--warmup 1] [--reps 1]
//
// One run: feed the prompt (one batch), take the first greedy token, then decode n-1 more tokens one
// at a time, each fed back as the next input.
//   prefill tok/s = prompt tokens / (time until the first generated token)
//   decode tok/s  = (n - 1) / (time from the first generated token to the n-th)
// so decode excludes prefill. The warm-up runs are full runs whose numbers are thrown away; with
// several reps the best (highest) tok/s of each kind is reported, and every rep is listed.
//
// Settings, the same as tests/reference/llamacpp.mjs: CPU only, a fixed thread count (the Llama
// instance has no thread limit, so the context uses exactly --threads), F32 K/V cache, flash
// attention off, one batch for the whole prompt, greedy sampling (temperature 0) over the full vocabulary.
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";

// node-llama-cpp lives in tests/reference/node_modules (one pinned install for both scripts).
const here = path.dirname(fileURLToPath(import.meta.url));
const requireFromReference = createRequire(path.join(here, "..", "reference", "package.json"));
const { getLlama, LlamaLogLevel } = await import(requireFromReference.resolve("node-llama-cpp"));

function usage(msg) {
  if (msg) process.stderr.write(`llamacpp_bench.mjs: ${msg}\n`);
  process.stderr.write("usage: node tests/bench/llamacpp_bench.mjs MODEL.gguf [--threads 1] [--prompt 128] [--n 128] " +
    '[--prompt-ids "..."] [--warmup 1] [--reps 1]\n');
  process.exit(2);
}

function parseCommandLine() {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        threads: { type: "string", default: "1" },
        prompt: { type: "string", default: "128" },
        n: { type: "string", default: "128" },
        "prompt-ids": { type: "string" },
        warmup: { type: "string", default: "1" },
        reps: { type: "string", default: "1" },
      },
    });
  } catch (err) {
    usage(err.message);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) usage("want exactly one MODEL.gguf");
  const int = (name, min) => {
    const v = Number(values[name]);
    if (!Number.isInteger(v) || v < min) usage(`--${name} must be an integer >= ${min}`);
    return v;
  };
  const a = { model: positionals[0], threads: int("threads", 1), prompt: int("prompt", 1), n: int("n", 2),
    warmup: int("warmup", 0), reps: int("reps", 1), promptIds: undefined };
  if (values["prompt-ids"] !== undefined) {
    a.promptIds = values["prompt-ids"].trim().split(/[\s,]+/).map(Number);
    if (a.promptIds.some((x) => !Number.isInteger(x) || x < 0)) usage("--prompt-ids must be non-negative integers");
    a.prompt = a.promptIds.length;
  }
  return a;
}

// benchPromptIds is the fixed default prompt: ids in [1000, 31000), away from the special tokens
// at the start of a vocabulary (pass --prompt-ids for a vocabulary smaller than 31000).
// tests/bench/run.sh passes the same ids to both engines explicitly.
function benchPromptIds(count) {
  const ids = [];
  for (let i = 0; i < count; i++) ids.push(1000 + ((i * 7919) % 30000));
  return ids;
}

async function runOnce(sequence, promptIds, n) {
  await sequence.clearHistory();
  const t0 = performance.now();
  let tFirst = 0;
  let count = 0;
  const tokens = [];
  for await (const token of sequence.evaluate(promptIds, { temperature: 0, yieldEogToken: true })) {
    count++;
    tokens.push(token);
    if (count === 1) tFirst = performance.now();
    if (count === n) break;
  }
  const tEnd = performance.now();
  if (count !== n) throw new Error(`generated ${count} tokens, want ${n}`);
  return {
    prefill_seconds: (tFirst - t0) / 1000,
    decode_seconds: (tEnd - tFirst) / 1000,
    prefill_tokens_per_second: promptIds.length / ((tFirst - t0) / 1000),
    tokens_per_second: (n - 1) / ((tEnd - tFirst) / 1000),
    tokens,
  };
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
    logLevel: LlamaLogLevel.error,
    logger: (level, message) => process.stderr.write(`[llama.cpp ${level}] ${message}\n`),
  });
  const tLoad = performance.now();
  const model = await llama.loadModel({ modelPath: args.model, gpuLayers: 0, defaultContextFlashAttention: false });
  const loadSeconds = (performance.now() - tLoad) / 1000;
  const promptIds = args.promptIds ?? benchPromptIds(args.prompt);
  const context = await model.createContext({
    contextSize: promptIds.length + args.n,
    batchSize: promptIds.length,
    sequences: 1,
    flashAttention: false,
    threads: args.threads,
    experimentalKvCacheKeyType: "F32",
    experimentalKvCacheValueType: "F32",
    failedCreationRemedy: false,
  });
  const sequence = context.getSequence();

  for (let i = 0; i < args.warmup; i++) await runOnce(sequence, promptIds, args.n);
  const reps = [];
  for (let i = 0; i < args.reps; i++) reps.push(await runOnce(sequence, promptIds, args.n));
  const firstTokens = reps[0].tokens;
  for (const r of reps) {
    if (r.tokens.some((t, i) => t !== firstTokens[i])) throw new Error("greedy tokens differ between reps");
    delete r.tokens;
  }

  const result = {
    engine: "llama.cpp",
    node_llama_cpp: "3.21.1",
    llama_cpp_release: llama.llamaCppRelease?.release ?? null,
    model: args.model,
    threads: args.threads,
    actual_threads: context.currentThreads ?? null,
    prompt_tokens: promptIds.length,
    n: args.n,
    kv_cache_type: "F32",
    flash_attention: false,
    load_seconds: loadSeconds,
    prefill_tokens_per_second: Math.max(...reps.map((r) => r.prefill_tokens_per_second)),
    tokens_per_second: Math.max(...reps.map((r) => r.tokens_per_second)),
    reps,
    greedy: firstTokens,
  };
  process.stdout.write(JSON.stringify(result) + "\n");
  await context.dispose();
  await model.dispose();
  await llama.dispose();
}

main().catch((err) => {
  process.stderr.write(`llamacpp_bench.mjs: ${err?.stack ?? err}\n`);
  process.exit(1);
});
