#!/usr/bin/env bash
# parallel.sh: aggregate generation speed with several clients at once, `toy serve` against
# llama.cpp decoding the same number of sequences in one context, on the random SmolLM2-shaped
# Q8_0 model (tests/bench/README.md, "Parallel clients").
#
#   tests/bench/parallel.sh
#
# For each client count C in CLIENTS it measures aggregate tok/s (generated tokens of all clients /
# wall time from the first request to the last reply) for
#   toy          `toy serve MODEL --parallel C --threads T`, C clients at once (parallel_toy.mjs)
#   toy 1-by-1   `toy serve MODEL --parallel 1 --threads T`, the same C requests one after another
#   llama.cpp    one context with C sequences, each its own prompt then N greedy tokens, all at once
#                (parallel_llamacpp.mjs, node-llama-cpp's prebuilt CPU library; every step decodes
#                all C sequences' tokens as one batch)
# Every client sends its own PROMPT token ids (the same ids to both engines), greedy, and makes
# exactly N tokens (ignore_eos on toy; EOG tokens yielded and passed on llama.cpp). Each measured
# round follows a warm-up round of the same shape with WARMUP_N tokens, in the same server/process.
# A fresh toy server is started for every measurement, on a free port, and stopped after it.
# parallel_report.mjs prints the table and the issue's two targets (ratio at 8 clients >= 1.0,
# toy's 8-client tok/s >= 2.5x its one-by-one tok/s).
#
# Environment (defaults in brackets):
#   CLIENTS ["1 4 8 16"]   THREADS [2] (one value)   PROMPT [32]   N [128]   WARMUP_N [8]
#   DTYPE [q8_0]   SHAPE [smollm2]   MODELS [/tmp/toy-bench-models]   models are generated when missing
#   STREAM [1]  0: toy's clients do not stream (then there is no time to first token for toy)
#   LLAMACPP_STEP [lockstep]  or free: how parallel_llamacpp.mjs steps its sequences (see there)
#   RESULTS [a new /tmp/toy-bench-parallel.XXXXXX]  raw JSON per run: cC.toy.json, cC.toy-seq.json,
#       cC.llamacpp.json (and .err, and the servers' logs); parallel_report.mjs rebuilds the table
#   TOY_TIMEOUT [600], LLAMACPP_TIMEOUT [600]  seconds allowed for one measurement of each engine
#   SKIP_TOY / SKIP_LLAMACPP / SKIP_SEQ  set to 1 to leave out toy, llama.cpp, or toy one-by-one
#   TOY_BIN  a toy binary to use instead of building /tmp/toy-bench-par
#   TOY_SERVE_ARGS  more flags for `toy serve` (e.g. a batching knob, when there is one)
# Needs: Go, node >= 20, and node-llama-cpp in tests/reference (installed here when missing).
# Run it on an otherwise idle machine (see run.sh): with more runnable threads than cores, both
# engines slow down many times over.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"

CLIENTS=${CLIENTS:-"1 4 8 16"}
THREADS=${THREADS:-2}
PROMPT=${PROMPT:-32}
N=${N:-128}
WARMUP_N=${WARMUP_N:-8}
DTYPE=${DTYPE:-q8_0}
SHAPE=${SHAPE:-smollm2}
STREAM=${STREAM:-1}
LLAMACPP_STEP=${LLAMACPP_STEP:-lockstep}
MODELS=${MODELS:-/tmp/toy-bench-models}
RESULTS=${RESULTS:-$(mktemp -d /tmp/toy-bench-parallel.XXXXXX)}
TOY_TIMEOUT=${TOY_TIMEOUT:-600}
LLAMACPP_TIMEOUT=${LLAMACPP_TIMEOUT:-600}
SKIP_TOY=${SKIP_TOY:-0}
SKIP_LLAMACPP=${SKIP_LLAMACPP:-0}
SKIP_SEQ=${SKIP_SEQ:-0}
TOY_SERVE_ARGS=${TOY_SERVE_ARGS:-}
toy=/tmp/toy-bench-par
if [[ -n ${TOY_BIN:-} ]]; then toy=$TOY_BIN; fi

log() { printf '[parallel] %s\n' "$*" >&2; }

if [[ $THREADS == *" "* ]]; then
  log "THREADS takes one value (got '$THREADS')"
  exit 2
fi

if [[ $SKIP_LLAMACPP != 1 && ! -d tests/reference/node_modules/node-llama-cpp ]]; then
  log "installing node-llama-cpp in tests/reference"
  (cd tests/reference && npm ci --omit=optional --ignore-scripts --no-audit --no-fund)
fi

if [[ $SKIP_TOY != 1 && -z ${TOY_BIN:-} ]]; then
  log "go build -o $toy ./cmd/toy"
  go build -o "$toy" ./cmd/toy
fi

model=$MODELS/$SHAPE-shape-$DTYPE.gguf
if [[ ! -f $model ]]; then
  log "generating $SHAPE-shape models in $MODELS"
  mkdir -p "$MODELS"
  flag=-bench
  if [[ $SHAPE == qwen35 ]]; then flag=-bench-qwen35; fi
  go run ./tests/reference/genmodels "$flag" -out "$MODELS/$SHAPE"
  mv "$MODELS/$SHAPE"/*.gguf "$MODELS"/
fi

mkdir -p "$RESULTS"
rm -f "$RESULTS"/c*.json "$RESULTS"/c*.err "$RESULTS"/c*.log
log "results in $RESULTS"

# free_port prints a TCP port on 127.0.0.1 that nothing listens on now.
free_port() {
  node -e 'const s = require("net").createServer(); s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

server_pid=
stop_server() {
  if [[ -n $server_pid ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
  fi
}
trap stop_server EXIT

# start_server PARALLEL LOG: starts toy serve on a free port, sets $url, waits for /health.
start_server() {
  local parallel=$1 logfile=$2 port i
  port=$(free_port)
  url=http://127.0.0.1:$port
  # Each slot's cache holds a prompt and its reply (and the warm-up's, which are shorter).
  # shellcheck disable=SC2086
  "$toy" serve "$model" --addr "127.0.0.1:$port" --parallel "$parallel" --threads "$THREADS" \
    --ctx $((PROMPT + N + 8)) --write-timeout 0 --quiet $TOY_SERVE_ARGS \
    >"$logfile" 2>&1 &
  server_pid=$!
  for ((i = 0; i < 600; i++)); do
    if ! kill -0 "$server_pid" 2>/dev/null; then
      log "toy serve exited, see $logfile"
      server_pid=
      return 1
    fi
    if node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$url/health" 2>/dev/null; then
      return 0
    fi
    sleep 0.5
  done
  log "toy serve did not answer /health in 300 s, see $logfile"
  stop_server
  return 1
}

stream_flag=
if [[ $STREAM == 0 ]]; then stream_flag=--no-stream; fi

# toy_run KEY PARALLEL MODE C: one toy measurement into $RESULTS/KEY.json.
toy_run() {
  local key=$1 parallel=$2 mode=$3 c=$4
  if start_server "$parallel" "$RESULTS/$key.log"; then
    timeout "$TOY_TIMEOUT" node tests/bench/parallel_toy.mjs --url "$url" --clients "$c" --prompt "$PROMPT" --n "$N" \
      --mode "$mode" --threads "$THREADS" --warmup 1 --warmup-n "$WARMUP_N" --timeout "$TOY_TIMEOUT" $stream_flag \
      >"$RESULTS/$key.json" 2>"$RESULTS/$key.err" || log "toy $mode failed, see $RESULTS/$key.err"
    stop_server
  fi
}

for c in $CLIENTS; do
  if [[ $SKIP_LLAMACPP != 1 ]]; then
    log "llama.cpp clients=$c threads=$THREADS"
    timeout "$LLAMACPP_TIMEOUT" node tests/bench/parallel_llamacpp.mjs "$model" --threads "$THREADS" --clients "$c" \
      --prompt "$PROMPT" --n "$N" --warmup 1 --warmup-n "$WARMUP_N" --step "$LLAMACPP_STEP" \
      >"$RESULTS/c$c.llamacpp.json" 2>"$RESULTS/c$c.llamacpp.err" || log "llama.cpp failed, see $RESULTS/c$c.llamacpp.err"
  fi
  if [[ $SKIP_TOY != 1 ]]; then
    log "toy clients=$c --parallel $c threads=$THREADS"
    toy_run "c$c.toy" "$c" concurrent "$c"
    if [[ $SKIP_SEQ != 1 ]]; then
      log "toy one-by-one: $c requests, --parallel 1 threads=$THREADS"
      toy_run "c$c.toy-seq" 1 sequential "$c"
    fi
  fi
done

node tests/bench/parallel_report.mjs "$RESULTS"
