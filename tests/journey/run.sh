#!/usr/bin/env bash
# A newcomer's first hour, on a clean clone with an empty HOME: the README's
# first command, toy list, describe toy-go, training from scratch on a text
# file, a two-line chat, toy new and the commands it prints next. .ci/run
# runs it; the notebooks run in go test's TestNotebooks, the examples in
# ./examples' test.
# Usage: tests/journey/run.sh [CLONE_DIR]   (default: a fresh clone of this checkout's HEAD)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
clone=${1:-$work/toy}
[ -d "$clone" ] || git clone -q "$src" "$clone"
# An empty HOME, but the module and build caches CI already filled.
GOPATH=$(go env GOPATH) GOMODCACHE=$(go env GOMODCACHE) GOCACHE=$(go env GOCACHE)
export GOPATH GOMODCACHE GOCACHE HOME=$work/home GOFLAGS=-mod=readonly
mkdir -p "$HOME"
cd "$clone"
step() { echo "-- $*"; }
fail() { echo "journey: $*" >&2; exit 1; }

step "build toy"
go build -o "$work/bin/toy" ./cmd/toy
toy=$work/bin/toy

step "the README's first command"
sed -n '/^```sh$/,/^```$/p' README.md | sed -n '2p' > "$work/first.sh"
out=$(bash "$work/first.sh")
[ -n "$out" ] || fail "the README's first command printed nothing"

step "toy list shows the built-in model"
"$toy" list | tee "$work/list.txt"
grep -q "toy-go" "$work/list.txt" || fail "toy list does not show toy-go"

step "toy describe toy-go"
"$toy" describe toy-go > "$work/describe.txt"
grep -q "Algorithm:" "$work/describe.txt" || fail "describe toy-go printed no card"

step "toy train from-scratch --data FILE (the default tokenizer)"
cat toy/engine/*.go > "$work/data.txt"
(cd "$work" && "$toy" train from-scratch --data data.txt --steps 5 --batch 2 --seq 32 --out runs/first)
[ -f "$work/runs/first/model.gguf" ] || fail "no model after training"
(cd "$work" && "$toy" list) | grep -q "runs/first/model.gguf" || fail "toy list does not show the run's model"

step "toy chat with two lines"
printf 'func main() {\nreturn nil\n' | "$toy" chat toy-go --n 16 > "$work/chat.txt" 2> "$work/chat.err" || fail "chat exited $?: $(cat "$work/chat.err")"

step "toy new and its next step"
"$toy" new "$work/mylab" > "$work/new.txt"
cat "$work/new.txt"
(cd "$work/mylab" && go test ./... && go run . train from-scratch --arch capped --data data/tiny.txt --steps 3 --out runs/first \
  && go run . describe runs/first/model.gguf > /dev/null)
echo "journey: ok"
