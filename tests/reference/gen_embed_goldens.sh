#!/usr/bin/env bash
# gen_embed_goldens.sh: llama.cpp goldens for toy's embedding gates.
#
#   tests/reference/gen_embed_goldens.sh
#
# 1. writes the embedding test models: go run ./tests/reference/genmodels -embed -out tests/reference/models/embed
# 2. runs llama.cpp's embedding API on each, over the texts of embed_texts.json:
#                                       node tests/reference/embed.mjs MODEL --texts tests/reference/embed_texts.json
# 3. writes                             tests/reference/testdata/embed/<name>.golden.json
# 4. runs the PyTorch twin (bert_torch.py, Debian's python3-torch) on the F32 encoders:
#                                       tests/reference/testdata/embed/<name>.torch.json
#
# Also the decoder llama-f32 (from genmodels' usual set, in tests/reference/models): its vector is
# the last token's normalised hidden state, what llama.cpp's embedding API returns for pooling none.
# Needs Go, node >= 20, and `npm ci --omit=optional --ignore-scripts` in tests/reference.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

THREADS=${THREADS:-1}
models=tests/reference/models/embed
out=tests/reference/testdata/embed
mkdir -p "$out"

if [[ ! -d tests/reference/node_modules/node-llama-cpp ]]; then
  (cd tests/reference && npm ci --omit=optional --ignore-scripts --no-audit --no-fund)
fi

go run ./tests/reference/genmodels -embed -out "$models"
for f in "$models"/*.gguf; do
  name=$(basename "$f" .gguf)
  echo "gen_embed_goldens.sh: $name -> $out/$name.golden.json" >&2
  node tests/reference/embed.mjs "$f" --texts tests/reference/embed_texts.json --threads "$THREADS" >"$out/$name.golden.json.tmp"
  mv "$out/$name.golden.json.tmp" "$out/$name.golden.json"
done

# The PyTorch twin (float64, Hugging Face's definitions) of the F32 encoders, on the goldens' ids.
for name in bert-f32 nomic-bert-f32; do
  echo "gen_embed_goldens.sh: $name -> $out/$name.torch.json" >&2
  /usr/bin/python3 tests/reference/bert_torch.py "$models/$name.gguf" "$out/$name.golden.json" >"$out/$name.torch.json.tmp"
  mv "$out/$name.torch.json.tmp" "$out/$name.torch.json"
done

# A decoder through the same API: the llama test model with the llama2 vocabulary.
go run ./tests/reference/genmodels -out tests/reference/models >/dev/null
node tests/reference/embed.mjs tests/reference/models/llama-f32.gguf --texts tests/reference/embed_texts.json --threads "$THREADS" \
  >"$out/llama-f32.golden.json.tmp"
mv "$out/llama-f32.golden.json.tmp" "$out/llama-f32.golden.json"
