#!/usr/bin/env bash
# toy serve against the clients people use (README.md here): the official
# openai and ollama npm packages, a load test, and the chat page in Chromium.
# Needs Go, node ≥ 20, npm, chromium (.ci/install.d/chromium.sh) and ss
# (iproute2); run by .ci/run. Usage: tests/clients/run.sh [TEST.mjs …]
set -euo pipefail
cd "$(dirname "$0")"

# npm ci when node_modules is missing or older than the lock file.
start=$SECONDS
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
  echo "(npm ci took $((SECONDS - start)) s)"
fi

# One build of toy for every server the tests start (its PID is the server's,
# for the load test's memory and open files).
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
(cd ../.. && go build -o "$bin/toy" ./cmd/toy)
export TOY_BIN="$bin/toy"

files=("$@")
[ ${#files[@]} -gt 0 ] || files=(clients.test.mjs load.test.mjs browser.test.mjs)
# One file at a time, in this order: the load test measures one server on a
# small machine.
status=0
for f in "${files[@]}"; do
  echo "-- $f"
  node --test --test-reporter=spec "$f" || status=1
done
exit $status
