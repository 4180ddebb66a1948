#!/bin/bash
# vkjit against NumPy and GoMLX on the bench workloads, side by side in
# one run on one machine: `vkjit bench --json` (fused and --no-fuse;
# execution time, transfers excluded), bench/peers/numpy_peer.py (the same
# math in NumPy) and bench/gomlx (the same math in GoMLX on its pure-Go
# backend; its own Go module). Prints the markdown table in
# docs/BENCHMARKS.md.
# It also writes every median to docs/benchmarks.jsonl and draws
# docs/benchmarks.png from it (bench/plot, gonum/plot in its own module).
# Usage: bench/run.sh [iterations]   (needs bin/vkjit: make build)
set -euo pipefail
cd "$(dirname "$0")/.."
iters=${1:-10}
bin=bin/vkjit
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
workloads="stream_copy chain8 softmax gemm1024 gemm2048 dense_relu mlp_forward mlp_train conv_block transformer_block"
# The NumPy peer: this machine's OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE
# hold OpenBLAS to its AVX2 kernels, so the peer runs without them.
(cd bench/gomlx && go build -o "$tmp/gomlx" .)
blas=$(readlink -f /etc/alternatives/libblas.so.3-x86_64-linux-gnu 2>/dev/null || echo unknown)
# Each workload's runs come one after another (NumPy, GoMLX, vkjit fused
# and unfused), so that the machine's slow periods (minutes long) hit
# the peers of a workload alike rather than whichever ran in them.
: > "$tmp/numpy.jsonl"
: > "$tmp/gomlx.jsonl"
for w in $workloads; do
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 bench/peers/numpy_peer.py --iterations "$iters" "$w" >> "$tmp/numpy.jsonl"
  if [ "$w" != stream_copy ]; then "$tmp/gomlx" -iterations "$iters" "$w" >> "$tmp/gomlx.jsonl"; fi
  $bin bench --json --iterations "$iters" "bench/workloads/$w.hlo" > "$tmp/$w.json"
  $bin bench --json --iterations "$iters" --no-fuse "bench/workloads/$w.hlo" > "$tmp/$w.nofuse.json"
done
python3 - "$tmp" "$blas" $workloads <<'PY'
import json, sys
tmp, blas, names = sys.argv[1], sys.argv[2], sys.argv[3:]
with open("docs/benchmarks.jsonl", "w") as out:
    for n in names:
        out.write(json.dumps({"workload": n, "peer": "vkjit", "median_ms": json.load(open("%s/%s.json" % (tmp, n)))["median_ms"]}) + "\n")
    for f in ("numpy", "gomlx"):
        for line in open("%s/%s.jsonl" % (tmp, f)):
            out.write(line)
peers, gomlx = {}, {}
for line in open(tmp + "/numpy.jsonl"):
    d = json.loads(line)
    peers[d["workload"]] = d
for line in open(tmp + "/gomlx.jsonl"):
    d = json.loads(line)
    gomlx[d["workload"]] = d
first = json.load(open(tmp + "/" + names[0] + ".json"))
print("Host: %s, %d logical cores, %d-bit SIMD; device %s; LP_NUM_THREADS=%s; NumPy %s with %s." % (
    first["host_cpu"], first["host_cores"], first["host_simd_bits"], first["device"], first["lp_num_threads"] or "unset (2 threads)",
    peers[names[0]]["numpy"], blas))
print()
print("| workload | vkjit ms (median) | vkjit --no-fuse ms | NumPy ms | GoMLX (go) ms | vkjit / NumPy | vkjit / GoMLX | dispatches |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for n in names:
    v = json.load(open("%s/%s.json" % (tmp, n)))
    nf = json.load(open("%s/%s.nofuse.json" % (tmp, n)))
    p = peers[n]
    g = gomlx.get(n)
    gms = "%.1f" % g["median_ms"] if g else "-"
    gratio = "%.2f" % (v["median_ms"] / g["median_ms"]) if g else "-"
    print("| %s | %.1f | %.1f | %.1f | %s | %.2f | %s | %d |" % (n, v["median_ms"], nf["median_ms"], p["median_ms"], gms,
        v["median_ms"] / p["median_ms"], gratio, v["dispatches"]))
PY
(cd bench/plot && go run . ../../docs/benchmarks.jsonl ../../docs/benchmarks.png)
