#!/usr/bin/env bash
# gen_json_goldens.sh: llama.cpp's greedy decoding under its JSON grammar, for toy's
# (json_test.go): on the gpt2-f32 and llama-f32 gate models, with the goldens' prompts, and
# with structural tokens biased by 0, 3 and 6 (json.mjs --bias) so that the replies go
# through strings, then objects, arrays, numbers and literals.
#
#   tests/reference/gen_json_goldens.sh     # writes tests/reference/testdata/json/*.golden.json
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
models=tests/reference/models
out=tests/reference/testdata/json
go run ./tests/reference/genmodels -out "$models" 2>/dev/null
mkdir -p "$out"
for name in gpt2-f32 llama-f32; do
	prompt=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).prompt_ids.join(" "))' \
		"tests/reference/testdata/$name.golden.json")
	for bias in 0 3 6; do
		node tests/reference/json.mjs "$models/$name.gguf" --prompt-ids "$prompt" --n 96 --bias "$bias" --threads 1 \
			>"$out/$name-bias$bias.golden.json"
		echo "$out/$name-bias$bias.golden.json"
	done
done
