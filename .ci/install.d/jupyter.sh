#!/usr/bin/env bash
# Jupyter client side for the notebook and kernel tests of interp/ and cmd/toysh:
# nbconvert executes notebooks/*.ipynb against the toy kernel. Idempotent.
set -euo pipefail
pkgs=(jupyter-client jupyter-nbconvert python3-nbconvert python3-nbformat)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq -o DPkg::Lock::Timeout=300
apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends "${missing[@]}" >/dev/null
