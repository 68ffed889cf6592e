// parallel_toy.mjs measures the aggregate generation speed of a running `toy serve` with several
// clients at once (or one after another) and prints JSON. It starts nothing: tests/bench/parallel.sh
// starts the server (`toy serve MODEL --parallel C --threads T`) and waits for /health first.
//
//   node tests/bench/parallel_toy.mjs --url http://127.0.0.1:PORT --clients 8 [--prompt 32] [--n 128]
//        [--mode concurrent|sequential] [--warmup 1] [--warmup-n 8] [--no-stream] [--timeout 600]
//        [--threads T]   (the server's --threads, only recorded in the JSON)
//
// Each client POSTs /v1/completions with a raw token-id prompt, temperature 0 (greedy),
// ignore_eos true and max_tokens n, streaming by default (so time to first token is measured).
//   concurrent  the clients' requests are all sent at once (a server with --parallel C batches them)
//   sequential  the same requests, one after another ("one by one"; run against --parallel 1)
// aggregate tok/s = generated tokens over all clients / wall time from the first request sent to
// the last reply finished. Before the measured round, --warmup rounds of the same shape with
// --warmup-n tokens each let the server make its slots' caches and grow its buffers.
//
// Every request of every round has its own prompt (parallelPromptIds: request k's ids all differ
// from request j's, the first one included), so no request finds its prefix in a slot's prompt
// cache; the JSON lists each reply's cached_tokens to show it. tests/bench/parallel_llamacpp.mjs
// uses the same prompts for the same (round, client).
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import http from "node:http";

function usage(msg) {
  if (msg) process.stderr.write(`parallel_toy.mjs: ${msg}\n`);
  process.stderr.write("usage: node tests/bench/parallel_toy.mjs --url http://127.0.0.1:PORT --clients C [--prompt 32] [--n 128] " +
    "[--mode concurrent|sequential] [--warmup 1] [--warmup-n 8] [--no-stream] [--timeout 600] [--threads T]\n");
  process.exit(2);
}

function parseCommandLine() {
  let parsed;
  try {
    parsed = parseArgs({
      options: {
        url: { type: "string" },
        clients: { type: "string", default: "1" },
        prompt: { type: "string", default: "32" },
        n: { type: "string", default: "128" },
        mode: { type: "string", default: "concurrent" },
        warmup: { type: "string", default: "1" },
        "warmup-n": { type: "string", default: "8" },
        "no-stream": { type: "boolean", default: false },
        timeout: { type: "string", default: "600" },
        threads: { type: "string" },
      },
    });
  } catch (err) {
    usage(err.message);
  }
  const v = parsed.values;
  if (!v.url) usage("--url is required");
  if (v.mode !== "concurrent" && v.mode !== "sequential") usage("--mode must be concurrent or sequential");
  const int = (name, min) => {
    const x = Number(v[name]);
    if (!Number.isInteger(x) || x < min) usage(`--${name} must be an integer >= ${min}`);
    return x;
  };
  return { url: v.url.replace(/\/+$/, ""), clients: int("clients", 1), prompt: int("prompt", 1), n: int("n", 1),
    mode: v.mode, warmup: int("warmup", 0), warmupN: int("warmup-n", 1), stream: !v["no-stream"],
    timeout: int("timeout", 1), threads: v.threads === undefined ? null : int("threads", 0) };
}

// parallelPromptIds is request k's prompt: count ids in [1000, 31000). 14729 (104729 mod 30000) is
// prime to 30000, so the first ids of requests 0 … 29999 all differ. The same function is in
// parallel_llamacpp.mjs.
export function parallelPromptIds(k, count) {
  const ids = [];
  for (let i = 0; i < count; i++) ids.push(1000 + ((i * 7919 + k * 104729) % 30000));
  return ids;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

// request sends one JSON request and resolves with { status, body } (non-streaming), or calls
// onEvent for each server-sent event's data (streaming) and resolves when the reply ends.
function request(url, method, body, { onEvent, timeoutMs } = {}) {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method, agent,
      headers: data ? { "Content-Type": "application/json", "Content-Length": data.length } : {} }, (res) => {
      res.setEncoding("utf8");
      let text = "";
      let pending = "";
      res.on("data", (chunk) => {
        if (!onEvent || res.statusCode !== 200) {
          text += chunk;
          return;
        }
        pending += chunk;
        let i;
        while ((i = pending.indexOf("\n")) >= 0) {
          const line = pending.slice(0, i).replace(/\r$/, "");
          pending = pending.slice(i + 1);
          if (!line.startsWith("data:")) continue;
          try {
            onEvent(line.slice(5).trim());
          } catch (err) {
            req.destroy(err);
            return;
          }
        }
      });
      res.on("end", () => resolve({ status: res.statusCode, body: text }));
      res.on("error", reject);
    });
    req.setTimeout(timeoutMs ?? 600000, () => req.destroy(new Error(`no reply from ${url} in ${timeoutMs} ms`)));
    req.on("error", reject);
    if (data) req.write(data);
    req.end();
  });
}

// complete runs one completion request and returns its times (seconds from t0) and token counts.
async function complete(a, promptIds, n, t0) {
  const body = { prompt: promptIds, max_tokens: n, temperature: 0, ignore_eos: true, stream: a.stream };
  if (a.stream) body.stream_options = { include_usage: true };
  const start = performance.now();
  let first;
  let chunks = 0;
  let usage;
  let timings;
  let finish;
  const res = await request(`${a.url}/v1/completions`, "POST", body, {
    timeoutMs: a.timeout * 1000,
    onEvent: a.stream
      ? (data) => {
          if (data === "[DONE]") return;
          const ev = JSON.parse(data);
          if (ev.error) throw new Error(`server error: ${JSON.stringify(ev.error)}`);
          if (ev.usage) usage = ev.usage;
          if (ev.timings) timings = ev.timings;
          const c = ev.choices?.[0];
          if (!c) return;
          if (c.finish_reason) finish = c.finish_reason;
          if (c.text) {
            chunks++;
            if (first === undefined) first = performance.now();
          }
        }
      : undefined,
  });
  const end = performance.now();
  if (res.status !== 200) throw new Error(`POST /v1/completions: HTTP ${res.status}: ${res.body.slice(0, 500)}`);
  if (!a.stream) {
    const j = JSON.parse(res.body);
    usage = j.usage;
    timings = j.timings;
    finish = j.choices?.[0]?.finish_reason;
  }
  const tokens = usage?.completion_tokens ?? chunks;
  if (tokens !== n) throw new Error(`generated ${tokens} tokens, want ${n} (finish_reason ${finish})`);
  return {
    start_seconds: (start - t0) / 1000,
    end_seconds: (end - t0) / 1000,
    ttft_seconds: first === undefined ? null : (first - start) / 1000,
    seconds: (end - start) / 1000,
    completion_tokens: tokens,
    cached_tokens: usage?.prompt_tokens_details?.cached_tokens ?? null,
    finish_reason: finish ?? null,
    server_prompt_ms: timings?.prompt_ms ?? null,
    server_predicted_ms: timings?.predicted_ms ?? null,
  };
}

// round sends the round's requests (request k = round * clients + client) and returns every
// client's figures and the wall time.
async function round(a, r, n) {
  const t0 = performance.now();
  const prompts = [];
  for (let c = 0; c < a.clients; c++) prompts.push(parallelPromptIds(r * a.clients + c, a.prompt));
  let results;
  if (a.mode === "concurrent") {
    results = await Promise.all(prompts.map((p) => complete(a, p, n, t0)));
  } else {
    results = [];
    for (const p of prompts) results.push(await complete(a, p, n, t0));
  }
  return { wall_seconds: (performance.now() - t0) / 1000, clients: results };
}

// batched reads toy_batched_steps_total and toy_batched_rows_total from /metrics
// (nulls where absent).
async function batched(a) {
  try {
    const res = await request(`${a.url}/metrics`, "GET", undefined, { timeoutMs: 10000 });
    const read = (name) => {
      const m = new RegExp(`^${name}\\s+(\\S+)`, "m").exec(res.body);
      return m ? Number(m[1]) : null;
    };
    return { steps: read("toy_batched_steps_total"), rows: read("toy_batched_rows_total") };
  } catch {
    return { steps: null, rows: null };
  }
}

const mean = (xs) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : null);

async function main() {
  const a = parseCommandLine();
  for (let r = 0; r < a.warmup; r++) await round(a, r, a.warmupN);
  const before = await batched(a);
  const m = await round(a, a.warmup, a.n);
  const after = await batched(a);
  const diff = (k) => (before[k] !== null && after[k] !== null ? after[k] - before[k] : null);
  const generated = m.clients.reduce((s, c) => s + c.completion_tokens, 0);
  const ttfts = m.clients.map((c) => c.ttft_seconds).filter((x) => x !== null);
  const result = {
    engine: "toy",
    mode: a.mode,
    url: a.url,
    threads: a.threads,
    clients: a.clients,
    prompt_tokens: a.prompt,
    n: a.n,
    stream: a.stream,
    warmup_rounds: a.warmup,
    warmup_n: a.warmupN,
    generated_tokens: generated,
    wall_seconds: m.wall_seconds,
    tokens_per_second: generated / m.wall_seconds,
    mean_ttft_seconds: mean(ttfts),
    max_ttft_seconds: ttfts.length ? Math.max(...ttfts) : null,
    batched_steps: diff("steps"),
    batched_rows: diff("rows"),
    cached_tokens: m.clients.reduce((s, c) => s + (c.cached_tokens ?? 0), 0),
    per_client: m.clients,
  };
  process.stdout.write(JSON.stringify(result) + "\n");
  agent.destroy();
}

main().catch((err) => {
  process.stderr.write(`parallel_toy.mjs: ${err?.stack ?? err}\n`);
  process.exit(1);
});
