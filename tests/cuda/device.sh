#!/bin/sh
# The CUDA device check, in two halves.
#
#   tests/cuda/device.sh build   here (no GPU, no toolkit): builds the test
#                                binaries with CGO_ENABLED=0 and packs them,
#                                xz-compressed, into tests/cuda/bin/
#   tests/cuda/device.sh run     on the GPU machine, from the repository root:
#                                toy install, the kernel tests, the op and model
#                                gates, the speed test, PyTorch beside it when
#                                python3 can import torch, and llama.cpp's CUDA
#                                build on the speed test's own GGUF files when
#                                tests/cuda/llama holds it (tests/cuda/llamacpp.sh
#                                pack). Logs go to $OUT (or tests/cuda/out).
#
# With the device tool: build (and pack) here, then
#   run(command="sh tests/cuda/device.sh run", carry=["tests/cuda/bin", "tests/cuda/llama"], timeout_s=540)
# Both folders are git-ignored; what travels must stay under 64 MiB with the
# working tree (about 21 MB + 10 MB of binaries + 25 MB of llama.cpp).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/tests/cuda/bin

case "${1:-}" in
build)
	cd "$root"
	rm -rf "$bin"
	mkdir -p "$bin"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	export CGO_ENABLED=0
	go test -c -ldflags='-s -w' -o "$tmp/gates.test" ./tests/cuda
	go test -c -ldflags='-s -w' -o "$tmp/kernels.test" ./kernels/cuda
	go build -ldflags='-s -w' -o "$tmp/toy.test" ./cmd/toy
	for f in "$tmp"/*.test; do
		xz -T2 -6 -c "$f" >"$bin/$(basename "$f").xz"
	done
	# testmodel finds the vocabularies by the path it was compiled at.
	echo "$root" >"$bin/built-at"
	ls -l "$bin"
	;;
run)
	out=${OUT:-$root/tests/cuda/out}
	mkdir -p "$out"
	exe=$(mktemp -d)
	for f in "$bin"/*.test.xz; do
		name=$(basename "$f" .xz)
		if command -v xz >/dev/null; then
			xz -dc "$f" >"$exe/$name"
		else
			python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$f" "$exe/$name"
		fi
		chmod +x "$exe/$name"
	done
	bin=$exe
	built=$(cat "$root/tests/cuda/bin/built-at")
	if [ "$built" != "$root" ] && [ ! -e "$built" ]; then
		mkdir -p "$(dirname "$built")" && ln -s "$root" "$built"
	fi
	nvidia-smi >"$out/install.txt" 2>&1 || true
	# cuBLAS may live only in python3's environment (CUDA 13's pip wheel
	# puts it in site-packages/nvidia/cu13/lib); toy looks in $VIRTUAL_ENV.
	if [ -z "${VIRTUAL_ENV:-}" ] && command -v python3 >/dev/null; then
		VIRTUAL_ENV=$(python3 -c 'import sys; print(sys.prefix)' 2>/dev/null) || VIRTUAL_ENV=
		[ -n "$VIRTUAL_ENV" ] && export VIRTUAL_ENV
	fi
	status=0
	# Each step gets at most its share of what is left of BUDGET seconds
	# (default 520, inside the device tool's 540), so that a slow step
	# cannot take the later ones' output with it.
	start=$(date +%s)
	budget=${BUDGET:-520}
	left() { # left CAP: CAP seconds, or what remains of the budget if less
		l=$((budget - ($(date +%s) - start)))
		[ "$l" -lt "$1" ] && echo $((l > 5 ? l : 5)) || echo "$1"
	}
	timeout 60 "$bin/toy.test" install >>"$out/install.txt" 2>&1 || status=1
	cat "$out/install.txt"
	grep -q 'gemm *cuBLAS' "$out/install.txt" || echo "device.sh: no cuBLAS found: the gates run toy's GEMM kernels only" >&2
	if grep -q '^cuda       unavailable' "$out/install.txt"; then
		echo "device.sh: no usable GPU here; the gates below will only skip" >&2
		status=1
	fi
	(cd "$root/kernels/cuda" && timeout "$(left 60)" "$bin/kernels.test" -test.v) >"$out/kernels.txt" 2>&1 || status=1
	tail -3 "$out/kernels.txt"
	(cd "$root/tests/cuda" && timeout "$(left 170)" "$bin/gates.test" -test.v -test.run 'TestOps|TestTensorCores|TestReferenceModels|TestLlama4Chunks|TestRecurrentRewind' -cuda.emu=off) \
		>"$out/gates.txt" 2>&1 || status=1
	grep -E '^(=== RUN|--- |    device_test|ok|FAIL|PASS)' "$out/gates.txt" | grep -v '=== RUN' | tail -40
	models=/tmp/toy-speed-models # the speed test's random models, as GGUF for llama.cpp
	mkdir -p "$models"
	(cd "$root/tests/cuda" && timeout "$(left 150)" "$bin/gates.test" -test.v -test.run "TestSpeed|TestGemmSpeed" -cuda.bench -cuda.profile \
		-cuda.bench.dir "$models" -cuda.emu=off) >"$out/speed.txt" 2>&1 || status=1
	grep -E 'tok/s|GFLOP|FAIL|skipped|profile| calls ' "$out/speed.txt" || tail -5 "$out/speed.txt"
	if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
		timeout "$(left 60)" python3 "$root/tests/cuda/torch_bench.py" >"$out/torch.txt" 2>&1 || status=1
		cat "$out/torch.txt"
	else
		echo "PyTorch with CUDA not available: no PyTorch figures" | tee "$out/torch.txt"
	fi
	if [ -f "$root/tests/cuda/llama/llamacpp-cuda.tar.xz" ] && [ -f "$models/smollm2-135m-shape-q8_0.gguf" ]; then
		# SmolLM2's shape first: its warm-up takes most of the driver's PTX
		# compilation, which the 7B models then find in the cache.
		set --
		for m in smollm2-135m-shape-q8_0 llama2-7b-shape-q8_0 llama2-7b-shape-q4_k; do
			[ -f "$models/$m.gguf" ] && set -- "$@" "$models/$m.gguf"
		done
		LLAMACPP_BUDGET=$(left 400) sh "$root/tests/cuda/llamacpp.sh" run "$@" >"$out/llamacpp.txt" 2>&1 || status=1
		grep -E 'tok/s|llamacpp.sh|Error|error' "$out/llamacpp.txt" || tail -5 "$out/llamacpp.txt"
	else
		echo "llama.cpp: no tests/cuda/llama/llamacpp-cuda.tar.xz (tests/cuda/llamacpp.sh pack) or no models: no llama.cpp figures"
	fi
	rm -rf "$exe"
	exit $status
	;;
*)
	echo "usage: $0 build|run" >&2
	exit 2
	;;
esac
