// llamacpp.mjs runs llama.cpp (through node-llama-cpp's prebuilt CPU library) on a GGUF file
// and prints its next-token distributions and a greedy decode as one JSON object on stdout.
//
//   node tests/reference/llamacpp.mjs MODEL.gguf --prompt-ids "1 2 3" [--top-k 10] [--n 32] [--threads 1] [--verbose]
//
// Output:
//
//   {
//     "model_sha256": "...",
//     "prompt_ids": [1, 2, 3],
//     "positions": [              // one per prompt token
//       {"top": [{"id": 7, "logprob": -0.12}, ...],   // top-k of log softmax(logits) after prompt_ids[0..i]
//        "next_logprob": -3.4}    // log P(prompt_ids[i+1] | prompt_ids[0..i]); absent on the last position
//     ],
//     "greedy": [...],            // n ids decoded at temperature 0 after the prompt, EOG tokens included
//     "greedy_positions": [       // one per greedy id: the top-k list (same entries as "top") of the
//       [{"id": 7, "logprob": -0.1}, ...]  // distribution it was picked from; greedy_positions[0] is
//     ],                          // positions[len-1].top
//     "reference": {...}          // the llama.cpp build and the settings used
//   }
//
// How the numbers are made (see README.md for the reasons):
//   - The ids are fed to llama.cpp as they are: no tokenizer, no BOS token is added.
//   - Probabilities come from node-llama-cpp's sampleToken with the greedy sampler only (temperature 0,
//     no top-k/top-p/min-p, no penalties, no token bias): the addon takes the raw logits of the whole
//     vocabulary and computes softmax in float32 (expf(l - max) / sum). logprob here is Math.log of
//     that float32 probability, so it is accurate to about 1e-7 relative to the probability, and a
//     probability that underflows to 0 gives null (-Infinity is not JSON).
//   - The greedy id is llama.cpp's own greedy sampler: the first maximal logit, i.e. the lowest id on ties.
//   - F32 K and V caches, flash attention off, a fixed thread count, one batch for the whole prompt,
//     a context large enough for prompt + n tokens so no context shift can happen.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { parseArgs } from "node:util";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";

const NODE_LLAMA_CPP_VERSION = "3.21.1";

function usage(msg) {
  if (msg) process.stderr.write(`llamacpp.mjs: ${msg}\n`);
  process.stderr.write(
    'usage: node tests/reference/llamacpp.mjs MODEL.gguf --prompt-ids "1 2 3" [--top-k 10] [--n 32] [--threads 1] [--lora ADAPTER.gguf] [--verbose]\n');
  process.exit(2);
}

function parseCommandLine() {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        "prompt-ids": { type: "string" },
        "top-k": { type: "string", default: "10" },
        n: { type: "string", default: "32" },
        threads: { type: "string", default: "1" },
        verbose: { type: "boolean", default: false },
        lora: { type: "string" },
      },
    });
  } catch (err) {
    usage(err.message);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) usage("want exactly one MODEL.gguf");
  if (values["prompt-ids"] === undefined) usage("--prompt-ids is required");
  const ids = values["prompt-ids"].trim().split(/[\s,]+/).filter((s) => s !== "").map(Number);
  if (ids.length === 0 || ids.some((x) => !Number.isInteger(x) || x < 0)) usage("--prompt-ids must be non-negative integers");
  const int = (name, min) => {
    const v = Number(values[name]);
    if (!Number.isInteger(v) || v < min) usage(`--${name} must be an integer >= ${min}`);
    return v;
  };
  return { model: positionals[0], promptIds: ids, topK: int("top-k", 1), n: int("n", 0), threads: int("threads", 1),
    verbose: values.verbose, lora: values.lora };
}

function sha256File(path) {
  return new Promise((resolve, reject) => {
    const h = createHash("sha256");
    createReadStream(path).on("error", reject).on("data", (b) => h.update(b)).on("end", () => resolve(h.digest("hex")));
  });
}

// topK returns the k most probable ids, most probable first, lower id first among equal probabilities.
function topK(probabilities, k) {
  const all = [...probabilities.entries()];
  all.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  return all.slice(0, k).map(([id, p]) => ({ id, logprob: logprob(p) }));
}

function logprob(p) {
  if (p === undefined) return null;
  const lp = Math.log(p);
  return Number.isFinite(lp) ? lp : null;
}

async function main() {
  const args = parseCommandLine();
  const modelSha256 = await sha256File(args.model);

  const llama = await getLlama({
    gpu: false,
    build: "never",
    usePrebuiltBinaries: true,
    skipDownload: true,
    progressLogs: false,
    maxThreads: 0, // no thread splitting between contexts: the context's `threads` is the exact count
    logLevel: args.verbose ? LlamaLogLevel.info : LlamaLogLevel.error,
    logger: (level, message) => process.stderr.write(`[llama.cpp ${level}] ${message}\n`),
  });
  const model = await llama.loadModel({
    modelPath: args.model,
    gpuLayers: 0,
    defaultContextFlashAttention: false,
  });
  const total = args.promptIds.length + args.n;
  const context = await model.createContext({
    contextSize: total,
    batchSize: Math.max(args.promptIds.length, 1),
    sequences: 1,
    flashAttention: false,
    threads: args.threads,
    experimentalKvCacheKeyType: "F32",
    experimentalKvCacheValueType: "F32",
    failedCreationRemedy: false,
    ...(args.lora ? { lora: { adapters: [{ filePath: args.lora, scale: 1 }] } } : {}),
  });
  if (context.contextSize < total) throw new Error(`context size ${context.contextSize} < prompt + n = ${total}`);
  const sequence = context.getSequence();

  // Greedy sampler only: temperature 0 selects llama_sampler_init_greedy and nothing else in the chain.
  const greedyNext = { token: true, probabilities: true, options: { temperature: 0 } };

  // Prompt: one batch, a distribution after every position.
  const promptOut = await sequence.controlledEvaluate(
    args.promptIds.map((id) => [id, { generateNext: greedyNext }]));
  const positions = [];
  for (let i = 0; i < args.promptIds.length; i++) {
    const next = promptOut[i]?.next;
    if (next?.probabilities === undefined) throw new Error(`no probabilities at prompt position ${i}`);
    const pos = { top: topK(next.probabilities, args.topK) };
    if (i + 1 < args.promptIds.length) pos.next_logprob = logprob(next.probabilities.get(args.promptIds[i + 1]) ?? 0);
    positions.push(pos);
  }

  // Greedy decode, one token at a time, EOG tokens included, exactly n ids.
  const greedy = [];
  const greedyPositions = [];
  let next = promptOut[args.promptIds.length - 1].next;
  for (let j = 0; j < args.n; j++) {
    if (next.token == null) throw new Error(`greedy sampler returned no token at step ${j}`);
    greedy.push(next.token);
    greedyPositions.push(topK(next.probabilities, args.topK));
    const best = topK(next.probabilities, 1)[0];
    if (best.id !== next.token) {
      process.stderr.write(`llamacpp.mjs: step ${j}: sampler chose ${next.token}, highest probability is ${best.id} (float32 tie?)\n`);
    }
    if (j + 1 < args.n) {
      const out = await sequence.controlledEvaluate([[next.token, { generateNext: greedyNext }]]);
      next = out[0].next;
    }
  }
  const wantIndex = args.promptIds.length + Math.max(args.n - 1, 0);
  if (sequence.nextTokenIndex !== wantIndex) {
    throw new Error(`sequence holds ${sequence.nextTokenIndex} tokens, want ${wantIndex} (context shift?)`);
  }
  const heldTokens = sequence.contextTokens;
  const fed = [...args.promptIds, ...greedy.slice(0, Math.max(args.n - 1, 0))];
  if (heldTokens.length !== fed.length || heldTokens.some((t, i) => t !== fed[i])) {
    throw new Error("the sequence does not hold exactly the ids that were fed (BOS added or context shifted?)");
  }

  const result = {
    model_sha256: modelSha256,
    ...(args.lora ? { adapter_sha256: await sha256File(args.lora) } : {}),
    prompt_ids: args.promptIds,
    positions,
    greedy,
    greedy_positions: greedyPositions,
    reference: {
      engine: "llama.cpp",
      node_llama_cpp: NODE_LLAMA_CPP_VERSION,
      llama_cpp_release: llama.llamaCppRelease?.release ?? null,
      cpu_only: true,
      threads: args.threads,
      kv_cache_type: "F32",
      flash_attention: false,
      top_k: args.topK,
      logprob: "log of float32 softmax over the full vocabulary",
    },
  };
  process.stdout.write(JSON.stringify(result) + "\n");

  await context.dispose();
  await model.dispose();
  await llama.dispose();
}

main().catch((err) => {
  process.stderr.write(`llamacpp.mjs: ${err?.stack ?? err}\n`);
  process.exit(1);
});
