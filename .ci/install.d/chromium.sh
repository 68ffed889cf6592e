#!/usr/bin/env bash
# The client tests of toy serve (tests/clients): Debian's chromium for the
# chat page's browser test (driven by npm puppeteer-core), iproute2's ss for
# the load test, and node with npm where the machine has none (the npm
# packages, pinned in tests/clients/package-lock.json, come from npm ci).
# Idempotent.
set -euo pipefail
pkgs=(chromium iproute2)
command -v npm >/dev/null || pkgs+=(nodejs npm)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq -o DPkg::Lock::Timeout=300
apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends "${missing[@]}" >/dev/null
