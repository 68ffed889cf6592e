#!/usr/bin/env bash
# gen_goldens.sh: llama.cpp goldens for the quantizer gate.
#
#   tests/quantize/gen_goldens.sh [--dump DIR] [--keep DIR] [--verbose]
#
# 1. writes the inputs:   go run ./tests/quantize/geninputs -out TMP (random rows, importance
#                         matrices, F32 test models)
# 2. quantizes them with llama.cpp's own quantizer (ggml_quantize_chunk, llama_model_quantize, from
#    the libraries node-llama-cpp ships, through Python's ctypes)
# 3. writes               tests/quantize/testdata/rows.golden.json, rows_imatrix.golden.json and
#                         models.golden.json
#
# Needs Go, /usr/bin/python3 (standard library only) and tests/reference/node_modules (npm ci there;
# done here when missing). Extra arguments go to llamacpp_quantize.py.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

if [[ ! -d tests/reference/node_modules/@node-llama-cpp/linux-x64 ]]; then
  (cd tests/reference && npm ci --omit=optional --ignore-scripts --no-audit --no-fund)
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go run ./tests/quantize/geninputs -out "$tmp"
python3 tests/quantize/llamacpp_quantize.py "$tmp" tests/quantize/testdata "$@"

# The forward gate: llama.cpp runs the Q4_K_M file toy wrote.
read -r file name ids < <(python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["forward"]
print(f["file"], f["model"] + "-" + f["type"], " ".join(map(str, f["prompt_ids"])))' "$tmp/inputs.json")
node tests/reference/llamacpp.mjs "$tmp/$file" --prompt-ids "$ids" --top-k 10 --n 32 --threads 1 \
  > "tests/quantize/testdata/forward-$name.golden.json"
echo "wrote tests/quantize/testdata/forward-$name.golden.json" >&2
