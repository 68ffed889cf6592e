#!/bin/sh
# The CUDA device check, in two halves.
#
#   tests/cuda/device.sh build   here (no GPU, no toolkit): builds the test
#                                binaries with CGO_ENABLED=0 into tests/cuda/bin/
#   tests/cuda/device.sh run     on the GPU machine, from the repository root:
#                                toy install, the kernel tests, the op and model
#                                gates, the speed test, and PyTorch beside it when
#                                python3 can import torch. Logs go to $OUT (or
#                                tests/cuda/out).
#
# With the device tool: build here, then
#   run(command="sh tests/cuda/device.sh run", carry=["tests/cuda/bin"], timeout_s=540)
# The binaries (*.test, git-ignored) travel through carry.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/tests/cuda/bin

case "${1:-}" in
build)
	cd "$root"
	mkdir -p "$bin"
	export CGO_ENABLED=0
	go test -c -ldflags='-s -w' -o "$bin/gates.test" ./tests/cuda
	go test -c -ldflags='-s -w' -o "$bin/kernels.test" ./kernels/cuda
	go build -ldflags='-s -w' -o "$bin/toy.test" ./cmd/toy # .test: git-ignored
	# testmodel finds the vocabularies by the path it was compiled at.
	echo "$root" >"$bin/built-at"
	ls -l "$bin"
	;;
run)
	out=${OUT:-$root/tests/cuda/out}
	mkdir -p "$out"
	built=$(cat "$bin/built-at")
	if [ "$built" != "$root" ] && [ ! -e "$built" ]; then
		mkdir -p "$(dirname "$built")" && ln -s "$root" "$built"
	fi
	nvidia-smi >"$out/nvidia-smi.txt" 2>&1 || true
	status=0
	"$bin/toy.test" install >"$out/install.txt" 2>&1 || status=1
	cat "$out/install.txt"
	if grep -q '^cuda       unavailable' "$out/install.txt"; then
		echo "device.sh: no usable GPU here; the gates below will only skip" >&2
		status=1
	fi
	(cd "$root/kernels/cuda" && "$bin/kernels.test" -test.v) >"$out/kernels.txt" 2>&1 || status=1
	tail -3 "$out/kernels.txt"
	(cd "$root/tests/cuda" && "$bin/gates.test" -test.v -test.run 'TestOps|TestReferenceModels' -cuda.emu=off) >"$out/gates.txt" 2>&1 || status=1
	grep -E '^(=== RUN|--- |    device_test|ok|FAIL|PASS)' "$out/gates.txt" | grep -v '=== RUN' | tail -40
	(cd "$root/tests/cuda" && "$bin/gates.test" -test.v -test.run "TestSpeed|TestGemmSpeed" -cuda.bench -cuda.emu=off -test.timeout 8m) >"$out/speed.txt" 2>&1 || status=1
	grep -E 'tok/s|GFLOP|FAIL|skipped' "$out/speed.txt" || tail -5 "$out/speed.txt"
	if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
		python3 "$root/tests/cuda/torch_bench.py" >"$out/torch.txt" 2>&1 || status=1
		cat "$out/torch.txt"
	else
		echo "PyTorch with CUDA not available: no PyTorch figures" | tee "$out/torch.txt"
	fi
	exit $status
	;;
*)
	echo "usage: $0 build|run" >&2
	exit 2
	;;
esac
