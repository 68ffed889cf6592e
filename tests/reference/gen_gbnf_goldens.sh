#!/usr/bin/env bash
# gen_gbnf_goldens.sh: llama.cpp's greedy decoding under custom GBNF grammars, for toy's own GBNF
# engine to match token for token: each grammar in testdata/gbnf/*.gbnf (json.mjs --gbnf), on the
# gpt2-f32 and llama-f32 gate models, with the goldens' prompts, 64 ids at most.
#
#   tests/reference/gen_gbnf_goldens.sh     # writes tests/reference/testdata/gbnf/<model>-<grammar>.golden.json
#
# With no bias a random model's reply can stay in one unbounded repetition for all 64 ids, so a few
# grammars bias the tokens that lead out of it (json.mjs --bias-regex, the ids are in each golden's
# bias.ids; no end-of-generation token is biased): arith the digits, ")" and "\n" (without them
# llama-f32 only nests "-(" ever deeper); config '"', "\t", "#", "\n" and backslash escapes (strings,
# the tab separator, comments, escapes); stamp ":", "." and "Z" (seconds, the {1,} fraction, the
# zone). The random models' logits are large, hence stamp's bias of 20.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
models=tests/reference/models
out=tests/reference/testdata/gbnf
go run ./tests/reference/genmodels -out "$models" 2>/dev/null
for name in gpt2-f32 llama-f32; do
	prompt=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).prompt_ids.join(" "))' \
		"tests/reference/testdata/$name.golden.json")
	for gbnf in "$out"/*.gbnf; do
		grammar=$(basename "$gbnf" .gbnf)
		bias=(--bias 0)
		case "$grammar" in
		arith) bias=(--bias 3 --bias-regex '^[0-9)\n]+$') ;;
		config) bias=(--bias 5 --bias-regex '^[\\\t#"\n]+$|^\\') ;;
		stamp) bias=(--bias 20 --bias-regex '^[:.Z]+$') ;;
		esac
		node tests/reference/json.mjs "$models/$name.gguf" --prompt-ids "$prompt" --n 64 "${bias[@]}" --threads 1 \
			--gbnf "$gbnf" >"$out/$name-$grammar.golden.json"
		echo "$out/$name-$grammar.golden.json"
	done
done
