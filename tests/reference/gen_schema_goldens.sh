#!/usr/bin/env bash
# gen_schema_goldens.sh: llama.cpp's greedy decoding under the grammars llama.cpp makes of JSON
# schemas, for toy's own schema grammars (grammar.CompileSchema) to match token for token.
#
#   tests/reference/gen_schema_goldens.sh
#
# For each schema in testdata/schema/*.json it writes
#   testdata/schema/<schema>.llama.gbnf               llama.cpp's grammar of the schema, made by llama.cpp's
#                                                      own converter (examples/json_schema_to_grammar.py, run
#                                                      from the llama.cpp source that node-llama-cpp ships)
#   testdata/schema/<model>-<schema>.golden.json      json.mjs --gbnf on that grammar: the greedy ids
# on the gpt2-f32 and llama-f32 gate models, with the goldens' prompts, 96 ids at most. Needs node,
# git and Debian's /usr/bin/python3 (the converter uses the standard library only).
#
# A random model's favourite tokens would keep a reply in one long string, so the tokens made of
# JSON's punctuation, digits, spaces and the literals are biased by 4 (json.mjs --bias-regex; the
# ids are in each golden's bias.ids), and by 8 for list.json, whose items are numbers.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
models=tests/reference/models
out=tests/reference/testdata/schema
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
git -c advice.detachedHead=false clone -q tests/reference/node_modules/node-llama-cpp/llama/gitRelease.bundle "$src/llama.cpp"
go run ./tests/reference/genmodels -out "$models" 2>/dev/null
for schema in "$out"/*.json; do
	case "$schema" in *.golden.json) continue ;; esac
	name=$(basename "$schema" .json)
	(cd "$out" && /usr/bin/python3 "$src/llama.cpp/examples/json_schema_to_grammar.py" "$name.json") >"$out/$name.llama.gbnf"
done
for model in gpt2-f32 llama-f32; do
	prompt=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).prompt_ids.join(" "))' \
		"tests/reference/testdata/$model.golden.json")
	for gbnf in "$out"/*.llama.gbnf; do
		name=$(basename "$gbnf" .llama.gbnf)
		bias=4
		if [[ $name == list ]]; then bias=8; fi
		node tests/reference/json.mjs "$models/$model.gguf" --prompt-ids "$prompt" --n 96 --threads 1 \
			--bias "$bias" --bias-regex '^[ \n\t{}\[\],:"0-9.-]+$|^ ?(true|false|null)$' \
			--gbnf "$gbnf" >"$out/$model-$name.golden.json"
		echo "$out/$model-$name.golden.json"
	done
done
