#!/bin/bash
# Fusion and memory planning, measured: for each workload, vkjit run with
# random arguments in four modes; prints a markdown table (the one in
# docs/BENCHMARKS.md). Usage: bench/fusion.sh [vkjit binary]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-bin/vkjit}
files="bench/workloads/chain8.hlo bench/workloads/softmax.hlo bench/workloads/dense_relu.hlo bench/workloads/mlp_forward.hlo tests/testdata/mlp_train/graph.hlo tests/testdata/transformer/graph.hlo tests/testdata/cnn/graph.hlo tests/testdata/while_loop/graph.hlo"
echo "| workload | mode | kernels | dispatches | peak device bytes | arena bytes | liveness bound | run ms |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for f in $files; do
  for mode in "" "--no-reuse" "--no-fuse" "--no-fuse --no-reuse"; do
    $bin run --random-args $mode --stats-json /tmp/vkjit-fusion-stats.json "$f" > /dev/null
    python3 - "$f" "${mode:-default}" <<'PY'
import json, sys
d = json.load(open("/tmp/vkjit-fusion-stats.json"))
print("| %s | %s | %d | %d | %d | %d | %d | %.1f |" % (sys.argv[1], sys.argv[2], d["kernels"], d["dispatches"], d["peak_device_bytes"], d["arena_bytes"], d["liveness_bound_bytes"], d["run_ms"]))
PY
  done
done
