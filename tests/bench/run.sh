#!/usr/bin/env bash
# run.sh: toy vs llama.cpp inference speed on random GGUFs with SmolLM2-135M's shape (or, with
# SHAPE=qwen35 DTYPES=q8_0, Qwen3.5-0.8B's).
#
#   tests/bench/run.sh
#
# For each dtype (f32, q8_0) and thread count (1, 2) it measures, on the same model file and the
# same 128 prompt ids:
#   prefill tok/s  prompt tokens / time to the first generated token
#   decode tok/s   greedy tokens after the first one / their wall time (prefill excluded)
# for llama.cpp (tests/bench/llamacpp_bench.mjs, node-llama-cpp's prebuilt CPU library) and for
# toy (`toy infer --json`), each after one full warm-up run in the same process (--warmup 1 on both
# sides, as llama-bench does), and prints a table. Beside it: the machine's read bandwidth at each
# thread count (tests/bench/bandwidth.c), the bytes each decode reads per second (file size × decode
# tok/s: every weight byte once per token) as a share of it, and toy's peak RSS against the file.
#
# Environment (defaults in brackets):
#   DTYPES ["f32 q8_0 q4_0 q4_k_m q5_k_m q6_k"]   THREADS ["1 2"]   PROMPT [128]   N [128]   SHAPE [smollm2] or qwen35
#   MODELS [/tmp/toy-bench-models]   models are generated there when missing
#   RESULTS [a new /tmp/toy-bench-results.XXXXXX]  raw JSON per run; report.mjs rebuilds the table from it
#   TOY_TIMEOUT [300], LLAMACPP_TIMEOUT [300]  seconds allowed for one run of each engine
#   SKIP_TOY / SKIP_LLAMACPP  set to 1 to run only one side
#   TOY_BIN  a toy binary to use instead of building /tmp/toy-bench
# Needs: Go, gcc, node >= 20, and `npm ci --omit=optional --ignore-scripts` in tests/reference (done here
# when node_modules is missing). Takes about 1 minute for llama.cpp on 2 idle cores, plus toy's time.
# Run it on an otherwise idle machine: with more runnable threads than cores, multi-threaded runs of
# either engine slow down many times over (their threads wait for each other at every op).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"

DTYPES=${DTYPES:-"f32 q8_0 q4_0 q4_k_m q5_k_m q6_k"}
SHAPE=${SHAPE:-smollm2}
THREADS=${THREADS:-"1 2"}
PROMPT=${PROMPT:-128}
N=${N:-128}
MODELS=${MODELS:-/tmp/toy-bench-models}
RESULTS=${RESULTS:-$(mktemp -d /tmp/toy-bench-results.XXXXXX)}
TOY_TIMEOUT=${TOY_TIMEOUT:-300}
LLAMACPP_TIMEOUT=${LLAMACPP_TIMEOUT:-300}
SKIP_TOY=${SKIP_TOY:-0}
SKIP_LLAMACPP=${SKIP_LLAMACPP:-0}
toy=/tmp/toy-bench
if [[ -n ${TOY_BIN:-} ]]; then toy=$TOY_BIN; fi

log() { printf '[bench] %s\n' "$*" >&2; }

if [[ $SKIP_LLAMACPP != 1 && ! -d tests/reference/node_modules/node-llama-cpp ]]; then
  log "installing node-llama-cpp in tests/reference"
  (cd tests/reference && npm ci --omit=optional --ignore-scripts --no-audit --no-fund)
fi

if [[ $SKIP_TOY != 1 && -z ${TOY_BIN:-} ]]; then
  log "go build -o $toy ./cmd/toy"
  go build -o "$toy" ./cmd/toy
fi

mkdir -p "$MODELS"
for dtype in $DTYPES; do
  if [[ ! -f $MODELS/$SHAPE-shape-$dtype.gguf ]]; then
    log "generating $SHAPE-shape models in $MODELS"
    flag=-bench
    if [[ $SHAPE == qwen35 ]]; then flag=-bench-qwen35; fi
    go run ./tests/reference/genmodels "$flag" -out "$MODELS/$SHAPE"
    mv "$MODELS/$SHAPE"/*.gguf "$MODELS"/
    break
  fi
done

# The prompt: PROMPT fixed ids in [1000, 31000), the same for both engines.
ids=$(awk -v n="$PROMPT" 'BEGIN { for (i = 0; i < n; i++) printf "%s%d", (i ? " " : ""), 1000 + (i * 7919) % 30000 }')

mkdir -p "$RESULTS"
rm -f "$RESULTS"/*.json "$RESULTS"/*.err "$RESULTS"/*.size "$RESULTS"/*.rss
log "results in $RESULTS"

# The memory a decode can read per second: T threads summing a 1 GiB buffer.
if gcc -O2 -march=native -pthread -o "$RESULTS/bandwidth" tests/bench/bandwidth.c; then
  for t in $THREADS; do
    "$RESULTS/bandwidth" "$t" >"$RESULTS/bandwidth-t$t.json" || log "bandwidth probe failed"
  done
fi
# Peak RSS of toy's runs, where GNU time is at hand.
timed=()
if [[ -x /usr/bin/time ]]; then timed=(/usr/bin/time -f '%M'); fi
for dtype in $DTYPES; do
  model=$MODELS/$SHAPE-shape-$dtype.gguf
  stat -c %s "$model" >"$RESULTS/$dtype.size"
  for t in $THREADS; do
    key=$RESULTS/$dtype-t$t
    if [[ $SKIP_LLAMACPP != 1 ]]; then
      log "llama.cpp $dtype threads=$t"
      timeout "$LLAMACPP_TIMEOUT" node tests/bench/llamacpp_bench.mjs "$model" --threads "$t" --prompt-ids "$ids" --n "$N" --warmup 1 --reps 1 \
        >"$key.llamacpp.json" 2>"$key.llamacpp.err" || log "llama.cpp failed, see $key.llamacpp.err"
    fi
    if [[ $SKIP_TOY != 1 ]]; then
      log "toy $dtype threads=$t"
      timeout "$TOY_TIMEOUT" "${timed[@]}" "$toy" infer "$model" --prompt-ids "$ids" --n "$N" --threads "$t" --warmup 1 --json \
        >"$key.toy.json" 2>"$key.toy.err" || log "toy failed, see $key.toy.err"
      if [[ ${#timed[@]} -gt 0 ]]; then tail -n 1 "$key.toy.err" >"$key.toy.rss"; fi
    fi
  done
done

node tests/bench/report.mjs "$RESULTS"
