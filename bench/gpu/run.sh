#!/bin/bash
# Runs vkjit's checks on a lent GPU machine from what bench/gpu/kit.sh
# packed (carry .gpu); each phase writes one file under $OUT:
#   devices  `vkjit devices` (always first; stops here without a device)
#   bench    bench/workloads: transfers mapped and staged, execution
#            staged and mapped (host arguments, and --device-args),
#            then JAX's jit of the same functions
#   tests    the root package's tests (-test.v)
#   corpus   every E2E module of the corpus, fused and unfused, --compare
#   suite    the StableHLO suite with the validation layer
# e.g. bash bench/gpu/run.sh bench tests corpus suite
# Phases after bench run side by side (the GPU is idle between runs).
cd "$(dirname "$0")/../.."
T0=$(date +%s); t() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
: "${OUT:=/tmp/gpu-out}"; mkdir -p "$OUT"
for f in .gpu/debs/*.deb; do case $f in *vulkan-validation*|*spirv-tools*) dpkg -x "$f" /opt/vkx;; *) dpkg -x "$f" /;; esac; done; ldconfig
export PATH=/opt/vkx/usr/bin:$PATH LD_LIBRARY_PATH=/opt/vkx/usr/lib/x86_64-linux-gnu VK_LAYER_PATH=/opt/vkx/usr/share/vulkan/explicit_layer.d CI=1
nv=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; [ -e $nv ] && export VK_DRIVER_FILES=$nv
mkdir -p .gpu/kit && (cd .gpu/kit && tar xJf ../kit.tar.xz) && { [ -e ../shared ] || ln -s "$PWD/.gpu/kit/shared" ../shared; }
V=$PWD/.gpu/kit/vkjit W=bench/workloads
{ nvidia-smi -L; $V devices; } > $OUT/devices.txt 2>&1
if ! $V devices >/dev/null 2>&1; then VK_LOADER_DEBUG=error,driver $V devices 2>&1 | tail -40; exit 1; fi
t devices
WL="stream_copy chain8 softmax gemm1024 gemm2048 gemv4096 dense_relu mlp_forward mlp_train conv_block transformer_block complex_mul fft256 sort_rows"
corpus() { local f=../shared/hlo-corpus/$1 s=$(date +%s%N) r1 r2
	VKJIT_VALIDATE=1 timeout 100 $V run --random-args --compare "$f" > /tmp/c1.$$ 2>&1; r1=$?
	timeout 100 $V run --random-args --no-fuse --no-reuse --compare "$f" > /tmp/c2.$$ 2>&1; r2=$?
	echo "$1 fused=$r1 plain=$r2 $(( ($(date +%s%N) - s) / 1000000 )) ms"
	[ $r1 = 0 ] || sed 's/^/  fused: /' /tmp/c1.$$ | tail -5; [ $r2 = 0 ] || sed 's/^/  plain: /' /tmp/c2.$$ | tail -5; }
export -f corpus; export V
for phase in "$@"; do case $phase in
bench)
	for s in 0 1; do for w in stream_copy softmax; do
		VKJIT_STAGED=$s timeout -s QUIT 60 $V bench --json --include-transfers --iterations 5 --warmup 1 $W/$w.hlo 2>&1 | sed "s/^/transfers staged=$s /"
	done; done >> $OUT/bench.jsonl
	for w in $WL; do for s in 1 0; do
		VKJIT_STAGED=$s timeout -s QUIT 40 $V bench --json --iterations 30 $W/$w.hlo 2>&1 | sed "s/^/exec staged=$s /"
		VKJIT_STAGED=$s timeout -s QUIT 40 $V bench --json --device-args --iterations 30 $W/$w.hlo 2>&1 | sed "s/^/device-args staged=$s /"
	done; done >> $OUT/bench.jsonl
	XLA_PYTHON_CLIENT_PREALLOCATE=false timeout 120 python3 bench/peers/numpy_peer.py --peer jax --iterations 30 $WL >> $OUT/bench.jsonl 2>> $OUT/devices.txt
	t bench;;
tests) (timeout -s QUIT 400 .gpu/kit/root.test -test.v -test.timeout 395s > $OUT/tests.log 2>&1; t tests) & ;;
corpus) (grep -oP '^\| `\K[^`]+(?=` \|.*\bE2E\b[^|]*\|\s*$)' ../shared/hlo-corpus/SOURCES.md | grep -v runner_fp8_gemm_loop |
	timeout 400 xargs -P 8 -I{} bash -c 'corpus {}' > $OUT/corpus.txt 2>&1; t corpus) & ;;
suite) (timeout -s INT 400 $V test --validate --jobs 6 --expected tests/testdata/stablehlo_failures.txt ../shared/stablehlo-suite > $OUT/suite.log 2>&1; t suite) & ;;
*) echo "unknown phase $phase"; exit 2;;
esac; done
wait
grep -E "^(--- FAIL|FAIL|ok|PASS)" $OUT/tests.log 2>/dev/null | head -20
grep -vc " fused=0 plain=0 " $OUT/corpus.txt 2>/dev/null; tail -2 $OUT/suite.log 2>/dev/null
