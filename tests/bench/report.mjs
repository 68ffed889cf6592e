// report.mjs prints the toy vs llama.cpp table from the files tests/bench/run.sh leaves in a
// results folder: DTYPE-tTHREADS.llamacpp.json (llamacpp_bench.mjs), DTYPE-tTHREADS.toy.json
// (`toy infer --json`), and beside them bandwidth-tTHREADS.json (bandwidth.c), DTYPE.size (the
// model file's bytes) and DTYPE-tTHREADS.toy.rss (toy's peak RSS in KiB, from GNU time). A missing or
// unreadable file shows as "-".
//
//   node tests/bench/report.mjs RESULTS_DIR
import fs from "node:fs";
import path from "node:path";

const dir = process.argv[2];
if (!dir) {
  process.stderr.write("usage: node tests/bench/report.mjs RESULTS_DIR\n");
  process.exit(2);
}

// readJSON reads a whole-file JSON object, or else the last line of the file that parses as one
// (a CLI may print progress lines before its JSON).
function readJSON(file) {
  let text;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  try {
    return JSON.parse(text);
  } catch {}
  for (const line of text.split("\n").reverse()) {
    if (!line.trim().startsWith("{")) continue;
    try {
      return JSON.parse(line);
    } catch {}
  }
  return undefined;
}

// greedyIDs finds the generated ids in toy's JSON under the names a CLI is likely to use.
function greedyIDs(j) {
  for (const k of ["greedy", "ids", "tokens", "generated", "output_ids", "token_ids"]) {
    if (Array.isArray(j?.[k]) && j[k].every(Number.isInteger)) return j[k];
  }
  return undefined;
}

const num = (x) => (typeof x === "number" && Number.isFinite(x) ? x : undefined);
const fmt = (x) => (x === undefined ? "-" : x.toFixed(1));
const ratio = (a, b) => (a === undefined || b === undefined || b === 0 ? "-" : (a / b).toFixed(2));

const names = fs.readdirSync(dir).filter((f) => f.endsWith(".llamacpp.json") || f.endsWith(".toy.json"));
const keys = [...new Set(names.map((f) => f.replace(/\.(llamacpp|toy)\.json$/, "")))].sort((a, b) => {
  const [da, ta] = a.split("-t");
  const [db, tb] = b.split("-t");
  return da.localeCompare(db) || Number(ta) - Number(tb);
});

const readNum = (file) => {
  try {
    return num(Number(fs.readFileSync(path.join(dir, file), "utf8").trim()));
  } catch {
    return undefined;
  }
};
const pct = (x) => (x === undefined ? "-" : `${Math.round(100 * x)}%`);

const header = ["dtype", "threads", "prefill toy", "prefill llama.cpp", "ratio", "decode toy", "decode llama.cpp", "ratio",
  "toy GB/s", "of probe", "llama.cpp GB/s", "toy RSS / file", "greedy ids equal"];
const rows = [header];
for (const key of keys) {
  const [dtype, threads] = key.split("-t");
  const l = readJSON(path.join(dir, `${key}.llamacpp.json`));
  const t = readJSON(path.join(dir, `${key}.toy.json`));
  const tp = num(t?.prefill_tokens_per_second), lp = num(l?.prefill_tokens_per_second);
  const td = num(t?.tokens_per_second), ld = num(l?.tokens_per_second);
  const tg = greedyIDs(t), lg = l?.greedy;
  let same = "-";
  if (tg && lg) {
    const n = Math.min(tg.length, lg.length);
    let k = 0;
    while (k < n && tg[k] === lg[k]) k++;
    same = k === n ? `yes (${n})` : `no (first ${k} of ${n})`;
  }
  // Decode reads every weight once per token: file bytes × tokens/s, against the probe's rate.
  const size = readNum(`${dtype}.size`), rss = readNum(`${key}.toy.rss`);
  const bw = num(readJSON(path.join(dir, `bandwidth-t${threads}.json`))?.gb_per_s);
  const gbs = (tps) => (size === undefined || tps === undefined ? undefined : (size * tps) / 1e9);
  rows.push([dtype, threads, fmt(tp), fmt(lp), ratio(tp, lp), fmt(td), fmt(ld), ratio(td, ld),
    fmt(gbs(td)), bw === undefined || gbs(td) === undefined ? "-" : pct(gbs(td) / bw), fmt(gbs(ld)),
    rss === undefined || size === undefined ? "-" : ratio(rss * 1024, size), same]);
}

const widths = header.map((_, c) => Math.max(...rows.map((r) => r[c].length)));
const line = (r) => r.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join("  ");
process.stdout.write("tokens per second (ratio = toy / llama.cpp; higher is better)\n");
for (const f of fs.readdirSync(dir).filter((f) => /^bandwidth-t\d+\.json$/.test(f)).sort()) {
  const b = readJSON(path.join(dir, f));
  if (b) process.stdout.write(`read bandwidth, ${b.threads} thread(s): ${b.gb_per_s} GB/s (bandwidth.c)\n`);
}
process.stdout.write(line(rows[0]) + "\n");
process.stdout.write(widths.map((w) => "-".repeat(w)).join("  ") + "\n");
for (const r of rows.slice(1)) process.stdout.write(line(r) + "\n");
