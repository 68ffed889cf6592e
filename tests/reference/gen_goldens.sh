#!/usr/bin/env bash
# gen_goldens.sh: llama.cpp goldens for toy's inference gates.
#
#   tests/reference/gen_goldens.sh
#
# 1. writes the test models:   go run ./tests/reference/genmodels -out tests/reference/models
# 2. runs llama.cpp on each:   node tests/reference/llamacpp.mjs MODEL --prompt-ids ... --top-k 10 --n 32
# 3. writes                    tests/reference/testdata/<name>.golden.json
#
# The models and their prompts come from tests/reference/models/manifest.json when the generator
# writes one: either a list or {"models": [...]}, each entry with "name", "file" (or "path"; relative
# to the models folder) and "prompt_ids" (a list or a space-separated string), and optionally
# "n" and "top_k". Without a manifest every models/*.gguf is run with the prompt ids 1..16.
#
# Environment: THREADS [1] (the goldens were made with 1), N [32], TOP_K [10].
# Needs Go, node >= 20, and `npm ci --omit=optional --ignore-scripts` in tests/reference (done here
# when node_modules is missing). The models are git-ignored; the goldens are committed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

THREADS=${THREADS:-1}
N=${N:-32}
TOP_K=${TOP_K:-10}
models=tests/reference/models
testdata=tests/reference/testdata

if [[ ! -d tests/reference/node_modules/node-llama-cpp ]]; then
  (cd tests/reference && npm ci --omit=optional --ignore-scripts --no-audit --no-fund)
fi

go run ./tests/reference/genmodels -out "$models"
mkdir -p "$testdata"

# One line per model: NAME<TAB>FILE<TAB>PROMPT IDS<TAB>N<TAB>TOP_K
plan=$(node --input-type=module - "$models" "$N" "$TOP_K" <<'EOF'
import fs from "node:fs";
import path from "node:path";
const [dir, n, topK] = process.argv.slice(2);
const manifest = path.join(dir, "manifest.json");
let entries;
if (fs.existsSync(manifest)) {
  const m = JSON.parse(fs.readFileSync(manifest, "utf8"));
  entries = (Array.isArray(m) ? m : m.models).map((e) => {
    const file = e.file ?? e.path;
    const ids = Array.isArray(e.prompt_ids) ? e.prompt_ids.join(" ") : String(e.prompt_ids);
    return [e.name ?? path.basename(file, ".gguf"), path.resolve(dir, file), ids, e.n ?? n, e.top_k ?? topK];
  });
} else {
  process.stderr.write(`gen_goldens.sh: no ${manifest}; using prompt ids 1..16 for every .gguf\n`);
  const ids = Array.from({ length: 16 }, (_, i) => i + 1).join(" ");
  entries = fs.readdirSync(dir).filter((f) => f.endsWith(".gguf")).sort()
    .map((f) => [path.basename(f, ".gguf"), path.resolve(dir, f), ids, n, topK]);
}
for (const e of entries) console.log(e.join("\t"));
EOF
)

while IFS=$'\t' read -r name file ids n topk; do
  [[ -z $name ]] && continue
  out=$testdata/$name.golden.json
  echo "gen_goldens.sh: $name -> $out" >&2
  node tests/reference/llamacpp.mjs "$file" --prompt-ids "$ids" --top-k "$topk" --n "$n" --threads "$THREADS" >"$out.tmp"
  mv "$out.tmp" "$out"
done <<<"$plan"

# LoRA adapters trained by toy (manifest "adapters"): llama.cpp with the adapter applied.
adapters=$(node --input-type=module - "$models" <<'EOF2'
import fs from "node:fs";
import path from "node:path";
const dir = process.argv[2];
const m = JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8"));
for (const a of m.adapters ?? []) console.log([a.name, path.resolve(dir, a.base_file), path.resolve(dir, a.file), a.prompt_ids.join(" ")].join("\t"));
EOF2
)
while IFS=$'\t' read -r name base adapter ids; do
  [[ -z $name ]] && continue
  out=$testdata/$name.golden.json
  echo "gen_goldens.sh: $name -> $out" >&2
  node tests/reference/llamacpp.mjs "$base" --lora "$adapter" --prompt-ids "$ids" --top-k "$TOP_K" --n "$N" --threads "$THREADS" >"$out.tmp"
  mv "$out.tmp" "$out"
done <<<"$adapters"
