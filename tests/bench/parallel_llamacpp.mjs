// parallel_llamacpp.mjs measures llama.cpp's aggregate generation speed with several sequences
// decoding at once in one context (node-llama-cpp's prebuilt CPU library, installed in
// tests/reference) and prints JSON: the llama.cpp side of tests/bench/parallel.sh.
//
//   node tests/bench/parallel_llamacpp.mjs MODEL.gguf [--threads 2] [--clients 8] [--prompt 32]
//        [--n 128] [--warmup 1] [--warmup-n 8] [--batch-size B] [--step lockstep|free]
//
// One context with `sequences: clients` (each sequence its own prompt + n cells of K/V cache); every
// sequence evaluates its own prompt and then generates n tokens greedily, all sequences at once.
// node-llama-cpp puts the decodes that the sequences have queued into one llama_decode batch (up to
// --batch-size tokens, by default clients × prompt, so the prompts go in together).
//   --step lockstep (default): each step asks every sequence still generating for its next token in
//       the same event-loop turn and waits for all of them, so every llama_decode takes all of them,
//       as llama-server steps all its busy slots together;
//   --step free: each sequence runs its own `for await` loop. Since each sequence's next decode is
//       queued only after its sampled token came back, node-llama-cpp's dispatch loop then settles
//       into batches of C-1 with one sequence a step out of phase (4 sequences × 16 tokens: 20
//       decode batches of 3 tokens instead of 15 of 4).
// EOG tokens are yielded and generation goes on past them (yieldEogToken), so every sequence makes
// exactly n tokens, as toy with ignore_eos.
//   aggregate tok/s = generated tokens over all sequences / wall time from the start of the round to
//                     the last sequence's n-th token
// --warmup rounds of the same shape with --warmup-n tokens each come first (each round clears the
// sequences' histories). Prompts are those of parallel_toy.mjs for the same (round, client).
//
// Settings, as tests/bench/llamacpp_bench.mjs: CPU only, exactly --threads threads (the Llama
// instance has no thread limit), F32 K/V cache, flash attention off, greedy sampling (temperature 0).
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const requireFromReference = createRequire(path.join(here, "..", "reference", "package.json"));
const { getLlama, LlamaLogLevel } = await import(requireFromReference.resolve("node-llama-cpp"));

function usage(msg) {
  if (msg) process.stderr.write(`parallel_llamacpp.mjs: ${msg}\n`);
  process.stderr.write("usage: node tests/bench/parallel_llamacpp.mjs MODEL.gguf [--threads 2] [--clients 8] [--prompt 32] " +
    "[--n 128] [--warmup 1] [--warmup-n 8] [--batch-size B] [--step lockstep|free]\n");
  process.exit(2);
}

function parseCommandLine() {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        threads: { type: "string", default: "2" },
        clients: { type: "string", default: "1" },
        prompt: { type: "string", default: "32" },
        n: { type: "string", default: "128" },
        warmup: { type: "string", default: "1" },
        "warmup-n": { type: "string", default: "8" },
        "batch-size": { type: "string" },
        step: { type: "string", default: "lockstep" },
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
  const a = { model: positionals[0], threads: int("threads", 1), clients: int("clients", 1), prompt: int("prompt", 1),
    n: int("n", 1), warmup: int("warmup", 0), warmupN: int("warmup-n", 1) };
  a.batchSize = values["batch-size"] === undefined ? a.clients * a.prompt : int("batch-size", 1);
  if (values.step !== "lockstep" && values.step !== "free") usage("--step must be lockstep or free");
  a.step = values.step;
  return a;
}

// parallelPromptIds is request k's prompt, as in parallel_toy.mjs.
function parallelPromptIds(k, count) {
  const ids = [];
  for (let i = 0; i < count; i++) ids.push(1000 + ((i * 7919 + k * 104729) % 30000));
  return ids;
}

const evaluateOptions = { temperature: 0, yieldEogToken: true };

// generate (--step free) evaluates promptIds on sequence and takes n greedy tokens; times in
// seconds from t0.
async function generate(sequence, promptIds, n, t0) {
  const start = performance.now();
  let first;
  let count = 0;
  for await (const token of sequence.evaluate(promptIds, evaluateOptions)) {
    void token;
    count++;
    if (count === 1) first = performance.now();
    if (count === n) break;
  }
  const end = performance.now();
  if (count !== n) throw new Error(`generated ${count} tokens, want ${n}`);
  return {
    start_seconds: (start - t0) / 1000,
    end_seconds: (end - t0) / 1000,
    ttft_seconds: (first - start) / 1000,
    seconds: (end - start) / 1000,
    completion_tokens: count,
  };
}

// lockstep (--step lockstep) generates n tokens on every sequence, one step at a time: each step
// calls next() on every sequence still generating in the same turn, so their decodes are queued
// together and go out as one batch, and waits for all their tokens.
async function lockstep(sequences, prompts, n, t0) {
  const start = performance.now();
  const its = sequences.map((s, c) => s.evaluate(prompts[c], evaluateOptions));
  const st = its.map(() => ({ count: 0, first: 0, end: 0 }));
  let active = its.map((_, i) => i);
  try {
    while (active.length > 0) {
      const steps = await Promise.all(active.map((i) => its[i].next()));
      const now = performance.now();
      const still = [];
      steps.forEach((step, j) => {
        const i = active[j];
        if (step.done) throw new Error(`sequence ${i} generated ${st[i].count} tokens, want ${n}`);
        if (++st[i].count === 1) st[i].first = now;
        if (st[i].count === n) st[i].end = now;
        else still.push(i);
      });
      active = still;
    }
  } finally {
    await Promise.all(its.map((it) => it.return()));
  }
  return st.map((x) => ({
    start_seconds: (start - t0) / 1000,
    end_seconds: (x.end - t0) / 1000,
    ttft_seconds: (x.first - start) / 1000,
    seconds: (x.end - start) / 1000,
    completion_tokens: x.count,
  }));
}

async function round(sequences, a, r, n) {
  for (const s of sequences) await s.clearHistory();
  const prompts = sequences.map((_, c) => parallelPromptIds(r * a.clients + c, a.prompt));
  const t0 = performance.now();
  const results = a.step === "lockstep"
    ? await lockstep(sequences, prompts, n, t0)
    : await Promise.all(sequences.map((s, c) => generate(s, prompts[c], n, t0)));
  return { wall_seconds: (performance.now() - t0) / 1000, clients: results };
}

const mean = (xs) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : null);

async function main() {
  const a = parseCommandLine();
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
  const model = await llama.loadModel({ modelPath: a.model, gpuLayers: 0, defaultContextFlashAttention: false });
  const loadSeconds = (performance.now() - tLoad) / 1000;
  const context = await model.createContext({
    contextSize: a.prompt + a.n, // per sequence
    batchSize: a.batchSize,
    sequences: a.clients,
    flashAttention: false,
    threads: a.threads,
    experimentalKvCacheKeyType: "F32",
    experimentalKvCacheValueType: "F32",
    failedCreationRemedy: false,
  });
  const sequences = [];
  for (let c = 0; c < a.clients; c++) sequences.push(context.getSequence());

  // Count the llama_decode batches and their tokens (through node-llama-cpp's internal context
  // object: null if that is not there), to show how many sequences' tokens went in together.
  const batches = { count: 0, tokens: 0 };
  let counting = false;
  const ctx = context._ctx;
  if (ctx && typeof ctx.initBatch === "function") {
    const initBatch = ctx.initBatch.bind(ctx);
    try {
      // The prototype's method is read-only, so define an own property over it.
      Object.defineProperty(ctx, "initBatch", {
        configurable: true,
        value: (size) => {
          batches.count++;
          batches.tokens += size;
          return initBatch(size);
        },
      });
      counting = true;
    } catch {}
  }

  for (let r = 0; r < a.warmup; r++) await round(sequences, a, r, a.warmupN);
  batches.count = batches.tokens = 0;
  const m = await round(sequences, a, a.warmup, a.n);
  const generated = m.clients.reduce((s, c) => s + c.completion_tokens, 0);
  const ttfts = m.clients.map((c) => c.ttft_seconds);

  const result = {
    engine: "llama.cpp",
    mode: "concurrent",
    node_llama_cpp: "3.21.1",
    llama_cpp_release: llama.llamaCppRelease?.release ?? null,
    model: a.model,
    threads: a.threads,
    actual_threads: context.currentThreads ?? null,
    clients: a.clients,
    prompt_tokens: a.prompt,
    n: a.n,
    context_size_per_sequence: context.contextSize,
    batch_size: context.batchSize,
    step: a.step,
    kv_cache_type: "F32",
    flash_attention: false,
    load_seconds: loadSeconds,
    warmup_rounds: a.warmup,
    warmup_n: a.warmupN,
    generated_tokens: generated,
    wall_seconds: m.wall_seconds,
    tokens_per_second: generated / m.wall_seconds,
    mean_ttft_seconds: mean(ttfts),
    max_ttft_seconds: Math.max(...ttfts),
    decode_batches: counting ? batches.count : null,
    mean_batch_tokens: counting && batches.count ? batches.tokens / batches.count : null,
    per_client: m.clients,
  };
  process.stdout.write(JSON.stringify(result) + "\n");
  for (const s of sequences) s.dispose();
  await context.dispose();
  await model.dispose();
  await llama.dispose();
}

main().catch((err) => {
  process.stderr.write(`parallel_llamacpp.mjs: ${err?.stack ?? err}\n`);
  process.exit(1);
});
