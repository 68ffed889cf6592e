#!/usr/bin/env bash
# qemu-user and the arm64 C library, so that CI runs kernels/cpu's tests on
# the arm64 kernel libraries (neon, neon-dotprod) under emulation: the Go
# test binary is cross-compiled, the libraries are the committed ones.
# Idempotent.
set -euo pipefail
pkgs=(qemu-user libc6-arm64-cross)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq -o DPkg::Lock::Timeout=300
apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends "${missing[@]}" >/dev/null
