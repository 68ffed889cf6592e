// parallel_report.mjs prints the parallel-clients table from the files tests/bench/parallel.sh
// leaves in a results folder: cC.toy.json (toy, C clients at once), cC.toy-seq.json (toy, the
// same C requests one by one) and cC.llamacpp.json (llama.cpp, C sequences in one context), and
// checks the issue's targets: toy / llama.cpp >= 1.0 at 8 clients, and toy's 8-client tok/s
// >= 2.5 × its one-by-one tok/s. A missing or unreadable file shows as "-".
//
//   node tests/bench/parallel_report.mjs RESULTS_DIR
import fs from "node:fs";
import path from "node:path";

const dir = process.argv[2];
if (!dir) {
  process.stderr.write("usage: node tests/bench/parallel_report.mjs RESULTS_DIR\n");
  process.exit(2);
}

function readJSON(file) {
  let text;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  for (const line of text.split("\n").reverse()) {
    if (!line.trim().startsWith("{")) continue;
    try {
      return JSON.parse(line);
    } catch {}
  }
  return undefined;
}

const num = (x) => (typeof x === "number" && Number.isFinite(x) ? x : undefined);
const fmt = (x, d = 1) => (x === undefined ? "-" : x.toFixed(d));
const ratioOf = (a, b) => (a === undefined || b === undefined || b === 0 ? undefined : a / b);
const count = (x) => (typeof x === "number" ? String(x) : "-");
const ms = (x) => (x === undefined ? "-" : (x * 1000).toFixed(0));

const counts = [...new Set(fs.readdirSync(dir)
  .map((f) => /^c(\d+)\.(toy|toy-seq|llamacpp)\.json$/.exec(f)?.[1])
  .filter(Boolean)
  .map(Number))].sort((a, b) => a - b);

const header = ["clients", "toy tok/s", "llama.cpp tok/s", "toy/llama.cpp", "toy one-by-one", "toy/one-by-one",
  "toy TTFT ms", "llama.cpp TTFT ms", "toy batched steps", "toy rows/step", "llama.cpp batches"];
const rows = [header];
const at = {};
let meta;
for (const c of counts) {
  const t = readJSON(path.join(dir, `c${c}.toy.json`));
  const s = readJSON(path.join(dir, `c${c}.toy-seq.json`));
  const l = readJSON(path.join(dir, `c${c}.llamacpp.json`));
  meta ??= l ?? t ?? s;
  const tt = num(t?.tokens_per_second), ts = num(s?.tokens_per_second), lt = num(l?.tokens_per_second);
  const r = { toyVsLlama: ratioOf(tt, lt), toyVsSeq: ratioOf(tt, ts) };
  at[c] = r;
  rows.push([String(c), fmt(tt), fmt(lt), fmt(r.toyVsLlama, 2), fmt(ts), fmt(r.toyVsSeq, 2),
    ms(num(t?.mean_ttft_seconds)), ms(num(l?.mean_ttft_seconds)),
    count(t?.batched_steps), fmt(ratioOf(num(t?.batched_rows), num(t?.batched_steps)), 1), count(l?.decode_batches)]);
}

const widths = header.map((_, c) => Math.max(...rows.map((r) => r[c].length)));
const line = (r) => r.map((cell, c) => cell.padStart(widths[c])).join("  ");
const out = [];
if (meta) {
  out.push(`aggregate tokens per second: ${meta.prompt_tokens} prompt tokens and ${meta.n} greedy tokens per client` +
    (meta.threads ? `, ${meta.threads} threads` : "") + " (higher is better; TTFT = mean time to first token)");
}
out.push(line(rows[0]));
out.push(widths.map((w) => "-".repeat(w)).join("  "));
for (const r of rows.slice(1)) out.push(line(r));
const check = (name, x, want) =>
  out.push(`${name}: ${x === undefined ? "not measured" : `${x.toFixed(2)} (target >= ${want}: ${x >= want ? "met" : "NOT met"})`}`);
if (at[8]) {
  check("toy / llama.cpp at 8 clients", at[8].toyVsLlama, "1.0");
  check("toy 8 clients / toy one-by-one", at[8].toyVsSeq, 2.5);
}
process.stdout.write(out.join("\n") + "\n");
