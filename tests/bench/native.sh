#!/usr/bin/env bash
# native.sh: the toy vs llama.cpp table of run.sh for toy's native CPU backend, with the
# machine's memory read bandwidth measured in the same run and the decode roofline it implies.
#
#   tests/bench/native.sh
#
# It runs run.sh (same environment variables) with its own toy binary and results folder;
# TOY_BACKEND (default native) picks toy's backend.
#   TOY_BIN [/tmp/toy-native-bench]   RESULTS [/tmp/toy-native-bench-results]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
export RESULTS=${RESULTS:-/tmp/toy-native-bench-results}
export TOY_BACKEND=${TOY_BACKEND:-native}
MODELS=${MODELS:-/tmp/toy-bench-models}
bin=${TOY_BIN:-/tmp/toy-native-bench}

bw=$(go test -run '^$' -bench 'MemoryRead' -benchtime 3x ./kernels/cpu | awk '/^BenchmarkMemoryRead/ { print $1, $(NF-1) }')
go build -o "$bin" ./cmd/toy
TOY_BIN=$bin tests/bench/run.sh

echo
echo "memory read bandwidth (GB/s; buffers the size of each model) and the decode limit it sets:"
for dtype in f32 q8_0; do
  f=$MODELS/smollm2-shape-$dtype.gguf
  [[ -f $f ]] || continue
  size=$(stat -c %s "$f")
  mb=145
  [[ $dtype == f32 ]] && mb=540
  for t in 1 2; do
    g=$(awk -v k="BenchmarkMemoryRead/MB$mb/threads$t" 'index($1, k) == 1 { print $2 }' <<<"$bw")
    awk -v d="$dtype" -v t="$t" -v g="$g" -v s="$size" \
      'BEGIN { printf "  %-5s threads=%d  %6.2f GB/s  decode limit %6.1f tok/s\n", d, t, g, g * 1e9 / s }'
  done
done
