#!/bin/bash
# Compile cache, measured: each tests/ program run cold (empty vkjit cache
# and Mesa shader cache) and then warm, in new processes; prints the
# markdown table in docs/BENCHMARKS.md. Time to first result is the
# whole `vkjit run` process, device open and transfers included.
# Usage: bench/cache.sh (needs bin/vkjit: make build). It empties
# ~/.cache/mesa_shader_cache to measure cold runs; Mesa refills it.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=bin/vkjit
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| program | run | codegen ms | pipeline ms | cache hits / misses | time to first result ms |"
echo "| --- | --- | ---: | ---: | ---: | ---: |"
for p in mlp_train transformer cnn while_loop; do
  rm -rf "$tmp/cache" ~/.cache/mesa_shader_cache
  args=$(ls tests/testdata/$p/arg*.npy | sort -V)
  for run in cold warm; do
    start=$(date +%s%N)
    $bin run --cache-dir "$tmp/cache" --stats-json "$tmp/s.json" tests/testdata/$p/graph.hlo $args > /dev/null
    end=$(date +%s%N)
    python3 - "$p" "$run" "$(( (end - start) / 1000000 ))" "$tmp/s.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[4]))
print("| %s | %s | %.2f | %.1f | %d / %d | %s |" % (sys.argv[1], sys.argv[2], d["codegen_ms"], d["pipeline_ms"], d["cache_hits"], d["cache_misses"], sys.argv[3]))
PY
  done
done
