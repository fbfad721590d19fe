#!/usr/bin/env bash
# Rewrites the examples' traces from their text workloads (and the tutorial from the built-in
# demo) with the chakrasim binary given (default build/chakrasim). Run from the repository root.
set -euo pipefail
bin=${1:-build/chakrasim}
rm -f examples/tutorial/*.et
"$bin" demo --write-inputs examples/tutorial > /dev/null
for example in h100-node:8 cluster-2d:32 cluster-3d:128; do
  dir=examples/${example%%:*}
  npus=${example##*:}
  rm -rf "$dir/traces"
  mkdir -p "$dir/traces"
  "$bin" chakra convert text "$dir/workload.txt" --npus "$npus" --passes 1 --out "$dir/traces/workload" > /dev/null
done
