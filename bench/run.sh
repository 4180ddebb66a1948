#!/bin/bash
# vkjit against NumPy and GoMLX on the bench workloads, side by side in
# one run on one machine: `vkjit bench --json` (fused and --no-fuse;
# execution time, transfers excluded), bench/peers/numpy_peer.py (the same
# math in NumPy) and bench/gomlx (the same math in GoMLX on its pure-Go
# backend; its own Go module). Prints the markdown table in
# docs/BENCHMARKS.md.
# It also writes every median to docs/benchmarks.jsonl and draws
# docs/benchmarks.png from it (bench/plot, gonum/plot in its own module).
# Usage: bench/run.sh [iterations] [rounds]   (needs bin/vkjit: make build)
set -euo pipefail
cd "$(dirname "$0")/.."
iters=${1:-10}
rounds=${2:-3}
bin=bin/vkjit
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
workloads="stream_copy chain8 softmax gemm1024 gemm2048 gemv4096 dense_relu mlp_forward mlp_train conv_block conv_grad transformer_block sort_rows cumsum_rows embedding_grad scan_rnn"
(cd bench/gomlx && go build -o "$tmp/gomlx" .)
blas=$(readlink -f /etc/alternatives/libblas.so.3-x86_64-linux-gnu 2>/dev/null || echo unknown)
# Each workload's runs come one after another (NumPy, GoMLX, vkjit fused
# and unfused), so that the machine's slow periods (seconds to minutes
# long) hit the peers of a workload alike rather than whichever ran in
# them, and the whole sequence runs `rounds` times: the table has each
# figure's median over the rounds, and each round's vkjit / NumPy.
# The NumPy peer: this machine's OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE
# hold OpenBLAS to its AVX2 kernels, so the peer runs without them.
for r in $(seq "$rounds"); do
  for w in $workloads; do
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 bench/peers/numpy_peer.py --iterations "$iters" "$w" >> "$tmp/numpy.$r.jsonl"
    case $w in stream_copy|sort_rows|cumsum_rows|conv_grad|embedding_grad|scan_rnn) ;; *) "$tmp/gomlx" -iterations "$iters" "$w" >> "$tmp/gomlx.$r.jsonl" ;; esac
    $bin bench --json --iterations "$iters" "bench/workloads/$w.hlo" > "$tmp/$w.$r.json"
    $bin bench --json --iterations "$iters" --no-fuse "bench/workloads/$w.hlo" > "$tmp/$w.nofuse.$r.json"
  done
done
python3 - "$tmp" "$blas" "$rounds" $workloads <<'PY'
import json, statistics, sys
tmp, blas, rounds, names = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
rs = range(1, rounds + 1)
def lines(f):
    return [json.loads(l) for l in open(f)]
numpy = {r: {d["workload"]: d for d in lines("%s/numpy.%d.jsonl" % (tmp, r))} for r in rs}
gomlx = {r: {d["workload"]: d for d in lines("%s/gomlx.%d.jsonl" % (tmp, r))} for r in rs}
vk = {r: {n: json.load(open("%s/%s.%d.json" % (tmp, n, r))) for n in names} for r in rs}
nofuse = {r: {n: json.load(open("%s/%s.nofuse.%d.json" % (tmp, n, r))) for n in names} for r in rs}
def med(runs, n):
    ms = [runs[r][n]["median_ms"] for r in rs if n in runs[r]]
    return statistics.median(ms) if ms else None
with open("docs/benchmarks.jsonl", "w") as out:
    for runs in (vk, numpy, gomlx):
        for n in names:
            if med(runs, n) is not None:
                peer = runs[1][n].get("peer", "vkjit")  # each peer's own name; vkjit bench's JSON has none
                out.write(json.dumps({"workload": n, "peer": peer, "median_ms": med(runs, n), "rounds": rounds}) + "\n")
first = vk[1][names[0]]
print("Host: %s, %d logical cores, %d-bit SIMD; device %s; LP_NUM_THREADS=%s; NumPy %s with %s; %d rounds of %s iterations." % (
    first["host_cpu"], first["host_cores"], first["host_simd_bits"], first["device"], first["lp_num_threads"] or "unset (2 threads)",
    numpy[1][names[0]]["numpy"], blas, rounds, first["iterations"]))
print()
print("| workload | vkjit ms | vkjit --no-fuse ms | NumPy ms | GoMLX (go) ms | vkjit / NumPy | per round | vkjit / GoMLX | dispatches |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for n in names:
    v, nf, p, g = med(vk, n), med(nofuse, n), med(numpy, n), med(gomlx, n)
    per = " ".join("%.2f" % (vk[r][n]["median_ms"] / numpy[r][n]["median_ms"]) for r in rs)
    print("| %s | %.1f | %.1f | %.1f | %s | %.2f | %s | %s | %d |" % (n, v, nf, p, "%.1f" % g if g else "-", v / p, per,
        "%.2f" % (v / g) if g else "-", vk[1][n]["dispatches"]))
PY
(cd bench/plot && go run . ../../docs/benchmarks.jsonl ../../docs/benchmarks.png)
