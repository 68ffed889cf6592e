#!/usr/bin/env bash
# gen_rank_goldens.sh: llama.cpp goldens for toy's reranking gates.
#
#   tests/reference/gen_rank_goldens.sh
#
# 1. writes the reranker test models (BERT cross-encoders, pooling "rank"):
#                                       go run ./tests/reference/genmodels -rank -out tests/reference/models/rank
# 2. runs llama.cpp's ranking API on each, over the queries and documents of rank_texts.json:
#                                       node tests/reference/rank.mjs MODEL --texts tests/reference/rank_texts.json
# 3. writes                             tests/reference/testdata/rank/<name>.golden.json
# 4. runs the PyTorch twin (bert_torch.py, Debian's python3-torch) on the F32 rerankers, on the
#    goldens' ids:                      tests/reference/testdata/rank/<name>.torch.json
#
# Needs Go, node >= 20, and `npm ci --omit=optional --ignore-scripts` in tests/reference.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

THREADS=${THREADS:-1}
models=tests/reference/models/rank
out=tests/reference/testdata/rank
mkdir -p "$out"

if [[ ! -d tests/reference/node_modules/node-llama-cpp ]]; then
  (cd tests/reference && npm ci --omit=optional --ignore-scripts --no-audit --no-fund)
fi

go run ./tests/reference/genmodels -rank -out "$models"
for f in "$models"/*.gguf; do
  name=$(basename "$f" .gguf)
  echo "gen_rank_goldens.sh: $name -> $out/$name.golden.json" >&2
  node tests/reference/rank.mjs "$f" --texts tests/reference/rank_texts.json --threads "$THREADS" >"$out/$name.golden.json.tmp"
  mv "$out/$name.golden.json.tmp" "$out/$name.golden.json"
done

# The PyTorch twin (float64, Hugging Face's definitions) of the F32 rerankers, on the goldens' ids.
for name in bert-rank-f32 bert-rank-jina-f32; do
  echo "gen_rank_goldens.sh: $name -> $out/$name.torch.json" >&2
  /usr/bin/python3 tests/reference/bert_torch.py "$models/$name.gguf" "$out/$name.golden.json" >"$out/$name.torch.json.tmp"
  mv "$out/$name.torch.json.tmp" "$out/$name.torch.json"
done
