#!/bin/sh
# llama.cpp's CUDA build beside toy on the GPU machine, in two halves.
#
#   tests/cuda/llamacpp.sh pack          here (no GPU): fetches node-llama-cpp's CUDA
#                                        binaries (@node-llama-cpp/linux-x64-cuda, the version
#                                        tests/reference uses) with npm, keeps what ctypes needs,
#                                        thins libggml-cuda.so to the compute_90 PTX
#                                        (tests/cuda/fatbin.py) and writes
#                                        tests/cuda/llama/llamacpp-cuda.tar.xz (git-ignored)
#   tests/cuda/llamacpp.sh run MODEL.gguf... [-- BENCH_OPTIONS]
#                                        on the GPU machine: unpacks the tarball, finds the
#                                        CUDA 13 runtime and cuBLAS (pip's nvidia/cu13 wheels,
#                                        /usr/local/cuda, $CUDA_HOME) and runs
#                                        tests/cuda/llamacpp_bench.py --require-gpu on each
#                                        model, LLAMACPP_TIMEOUT seconds at most each (300),
#                                        LLAMACPP_BUDGET seconds for them all when set.
#                                        Results go to stdout and, as JSON lines, to
#                                        $OUT/llamacpp.jsonl when $OUT is set.
#
# With the device tool: pack here, then
#   run(command="sh tests/cuda/llamacpp.sh run /path/a.gguf /path/b.gguf",
#       carry=["tests/cuda/llama"], timeout_s=...)
#
# The thinned library runs on sm_90 (H100/H200) only: the driver JIT-compiles the PTX on
# first use of each module (seconds to tens of seconds each; the warm-up in the bench takes
# it) and keeps the result in its cache, ~/.nv/ComputeCache unless CUDA_CACHE_PATH says
# otherwise, which run enlarges to 4 GiB so later models reuse it.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out_dir=$root/tests/cuda/llama
tarball=$out_dir/llamacpp-cuda.tar.xz
name=llamacpp-cuda # the folder inside the tarball

die() {
	echo "llamacpp.sh: $*" >&2
	exit 1
}

pack() {
	pkg=$root/tests/reference/node_modules/node-llama-cpp/package.json
	[ -f "$pkg" ] || die "$pkg is missing: run npm ci in tests/reference first"
	version=$(sed -n 's/^  "version": *"\([^"]*\)".*/\1/p' "$pkg" | head -n 1)
	[ -n "$version" ] || die "no version in $pkg"
	command -v npm >/dev/null || die "npm is needed to fetch @node-llama-cpp/linux-x64-cuda"
	command -v zstd >/dev/null || die "zstd is needed to relabel the PTX (apt-get install zstd)"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT INT TERM
	echo "fetching @node-llama-cpp/linux-x64-cuda@$version"
	(cd "$tmp" && npm pack --silent "@node-llama-cpp/linux-x64-cuda@$version" >/dev/null) ||
		die "npm pack @node-llama-cpp/linux-x64-cuda@$version failed"
	tar -xzf "$tmp"/node-llama-cpp-linux-x64-cuda-*.tgz -C "$tmp"
	bins=$tmp/package/bins/linux-x64-cuda
	stage=$tmp/stage/$name
	mkdir -p "$stage"
	# libllama and the ggml registry it links (libggml.cuda.v*.so, libggml-base.so), the CUDA
	# backend, and every CPU backend variant: ggml_backend_load_all_from_path scores each
	# libggml-cpu-*.so against this CPU and loads the best (x64 is the fallback that always
	# works); all 14 cost about 1.5 MB in the tarball. llama-addon.node and
	# libllama-common.so are node's and are left out.
	for f in "$bins"/libllama.cuda.v*.so "$bins"/libggml.cuda.v*.so "$bins"/libggml-base.so \
		"$bins"/libggml-cuda.so "$bins"/libggml-cpu-x64.so "$bins"/_nlcBuildMetadata.json; do
		[ -f "$f" ] || die "$(basename "$f") is not in @node-llama-cpp/linux-x64-cuda@$version"
		cp "$f" "$stage/"
	done
	cp "$bins"/libggml-cpu-*.so "$stage/"
	echo "libggml-cuda.so as shipped:"
	python3 "$root/tests/cuda/fatbin.py" "$stage/libggml-cuda.so"
	python3 "$root/tests/cuda/fatbin.py" "$stage/libggml-cuda.so" --keep-ptx 90 --ptx-isa 9.0
	cat >"$stage/PACKED.txt" <<-EOF
		@node-llama-cpp/linux-x64-cuda@$version, packed by tests/cuda/llamacpp.sh pack.
		libggml-cuda.so: every fat binary entry but the compute_90 PTX zeroed, and that PTX
		relabelled from ISA 9.1 to 9.0 (tests/cuda/fatbin.py --keep-ptx 90 --ptx-isa 9.0),
		so it runs on sm_90 GPUs under a CUDA 13.0 (580) driver or newer.
	EOF
	mkdir -p "$out_dir"
	tar -C "$tmp/stage" -cf - "$name" | xz -9 -T2 >"$tarball.tmp"
	mv "$tarball.tmp" "$tarball"
	ls -l "$stage"
	ls -l "$tarball"
	echo "wrote $tarball ($(($(wc -c <"$tarball") / 1024)) KiB)"
}

# cuda_dirs prints the folders that may hold libcudart.so.13 and libcublas.so.13, one a line.
cuda_dirs() {
	timeout 60 python3 -c '
import glob, os, site, sys
roots = [sys.prefix]
try:
    roots += site.getsitepackages()
except Exception:
    pass
try:
    roots.append(site.getusersitepackages())
except Exception:
    pass
for r in roots:
    for d in [os.path.join(r, "nvidia/cu13/lib")] + sorted(glob.glob(os.path.join(r, "nvidia/*/lib"))) + \
             sorted(glob.glob(os.path.join(r, "lib/python3*/site-packages/nvidia/cu13/lib"))):
        if os.path.isdir(d):
            print(os.path.realpath(d))
' 2>/dev/null || true
	for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib ${CUDA_HOME:+"$CUDA_HOME/lib64"}; do
		[ -d "$d" ] && echo "$d"
	done
	return 0
}

# find_lib NAME prints the first folder of cuda_dirs that has NAME.
find_lib() {
	for d in $dirs; do
		if [ -e "$d/$1" ]; then
			echo "$d"
			return 0
		fi
	done
	return 1
}

run() {
	models=
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		[ -f "$1" ] || die "no such model file: $1"
		models="$models $1"
		shift
	done
	[ "${1:-}" = "--" ] && shift
	[ -n "$models" ] || die "usage: llamacpp.sh run MODEL.gguf... [-- BENCH_OPTIONS]"
	[ -f "$tarball" ] || die "$tarball is missing: run 'sh tests/cuda/llamacpp.sh pack' where npm works, and carry tests/cuda/llama"
	command -v python3 >/dev/null || die "python3 is needed"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT INT TERM
	# Python's tarfile reads .xz by itself, so the GPU machine needs no xz command.
	python3 -c 'import sys, tarfile
with tarfile.open(sys.argv[1], "r:xz") as t:
    t.extractall(sys.argv[2], **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
' "$tarball" "$tmp" || die "cannot unpack $tarball"
	lib=$tmp/$name
	sed -n 1p "$lib/PACKED.txt" 2>/dev/null || true

	dirs=$(cuda_dirs | awk '!seen[$0]++')
	echo "folders searched for the CUDA 13 runtime:"
	for d in $dirs; do echo "  $d"; done
	[ -n "$dirs" ] || echo "  (none: python3 has no nvidia/*/lib, and there is no /usr/local/cuda or CUDA_HOME)"
	missing=
	libpath=
	for so in libcudart.so.13 libcublas.so.13 libcublasLt.so.13; do
		if d=$(find_lib $so); then
			echo "  $so: $d"
			case ":$libpath:" in *":$d:"*) ;; *) libpath=$libpath${libpath:+:}$d ;; esac
		else
			echo "  $so: NOT FOUND"
			missing="$missing $so"
		fi
	done
	[ -z "$missing" ] || die "missing$missing: install the CUDA 13 runtime and cuBLAS (pip install nvidia-cuda-runtime nvidia-cublas, or PyTorch cu130), or set CUDA_HOME"
	export LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
		echo "  libcuda.so.1: not in ldconfig's cache (the driver's library; LD_LIBRARY_PATH may still have it)"
	fi
	echo "ldd libggml-cuda.so (CUDA libraries):"
	ldd "$lib/libggml-cuda.so" | grep -E 'cuda|cublas|not found' | sed 's/^/ /' || true
	if ldd "$lib/libggml-cuda.so" | grep -q 'not found'; then
		die "libggml-cuda.so has unresolved libraries (above): llama.cpp would silently run on the CPU"
	fi
	timeout 30 nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader 2>&1 |
		sed 's/^/GPU: /' || echo "nvidia-smi: not available or timed out"

	# The driver compiles the PTX of each module on first use (lazy loading, the default since
	# CUDA 12.2, set here so no eager load compiles all 143 modules at start) and keeps the
	# result in its cache: 4 GiB, so no model's kernels push another's out.
	export CUDA_MODULE_LOADING=${CUDA_MODULE_LOADING:-LAZY}
	export CUDA_CACHE_MAXSIZE=${CUDA_CACHE_MAXSIZE:-4294967296}
	[ -z "${CUDA_CACHE_DISABLE:-}" ] || echo "warning: CUDA_CACHE_DISABLE is set: every model JIT-compiles again" >&2
	echo "CUDA_MODULE_LOADING=$CUDA_MODULE_LOADING CUDA_CACHE_MAXSIZE=$CUDA_CACHE_MAXSIZE CUDA_CACHE_PATH=${CUDA_CACHE_PATH:-~/.nv/ComputeCache}"

	# Each model gets at most LLAMACPP_TIMEOUT seconds, and with
	# LLAMACPP_BUDGET (seconds for them all) what is left of it less 20 s
	# for each model after it: the first model's warm-up JIT-compiles most
	# of the PTX (about 34 s on an H200), the later ones find it cached.
	cap=${LLAMACPP_TIMEOUT:-300}
	begin=$(date +%s)
	remaining=$(echo $models | wc -w)
	status=0
	for m in $models; do
		echo "== $m"
		start=$(date +%s)
		remaining=$((remaining - 1))
		limit=$cap
		if [ -n "${LLAMACPP_BUDGET:-}" ]; then
			share=$((LLAMACPP_BUDGET - (start - begin) - 20 * remaining))
			[ "$share" -lt 20 ] && share=20
			[ "$share" -lt "$limit" ] && limit=$share
		fi
		if timeout -k 15 "$limit" python3 "$root/tests/cuda/llamacpp_bench.py" --lib "$lib" --model "$m" \
			--require-gpu "$@" >"$tmp/result.txt"; then
			:
		else
			rc=$?
			status=1
			[ $rc -eq 124 ] || [ $rc -eq 137 ] && echo "llamacpp.sh: $m: stopped after ${limit}s (LLAMACPP_TIMEOUT)" >&2
			echo "llamacpp.sh: $m: llamacpp_bench.py exited with $rc" >&2
		fi
		grep -v '^{' "$tmp/result.txt" || true
		if [ -n "${OUT:-}" ]; then
			grep '^{' "$tmp/result.txt" >>"$OUT/llamacpp.jsonl" || true
		else
			grep '^{' "$tmp/result.txt" || true
		fi
		echo "   ($(($(date +%s) - start)) s)"
	done
	exit $status
}

case "${1:-}" in
pack) pack ;;
run)
	shift
	run "$@"
	;;
*)
	echo "usage: $0 pack | run MODEL.gguf... [-- BENCH_OPTIONS]" >&2
	exit 2
	;;
esac
