#!/usr/bin/env bash
# Sweep throughput (docs/sweep.md): the 1024-point sweep of bench/sweep/gpt64.yaml (a 64-GPU
# GPT-3 13B iteration over 16 layouts x 8 bandwidths x 8 algorithm pairs) run RUNS times each on
# one thread, on two threads, and as two MPI ranks of one thread; prints the medians, points per
# minute per core, and the speed-ups over one thread.
#   bench/sweep_throughput.sh BUILD_DIR [RUNS]
set -euo pipefail
build=${1:?usage: bench/sweep_throughput.sh BUILD_DIR [RUNS]}
runs=${2:-5}
spec="$(cd "$(dirname "$0")" && pwd)/sweep/gpt64.yaml"
bin="$(cd "$build" && pwd)/chakrasim"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

measure() {  # label, then the command; prints the median wall time in seconds
  local label=$1; shift
  for _ in $(seq "$runs"); do
    rm -f "$tmp/r.csv"
    local start end
    start=$(date +%s.%N)
    "$@" --out "$tmp/r.csv" --quiet > /dev/null
    end=$(date +%s.%N)
    awk "BEGIN { print $end - $start }"
  done | median
}

one=$(measure one "$bin" sweep "$spec" --jobs 1)
two=$(measure threads "$bin" sweep "$spec" --jobs 2)
points=$(($(wc -l < "$tmp/r.csv") - 1))
echo "points: $points; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "1 thread:       %6.2f s  %7.0f points/min/core\n" "$one" "$(awk "BEGIN { print 60 * $points / $one }")"
printf "2 threads:      %6.2f s  %7.0f points/min/core  speed-up %.2f\n" "$two" \
  "$(awk "BEGIN { print 30 * $points / $two }")" "$(awk "BEGIN { print $one / $two }")"
if command -v mpirun > /dev/null && [ -x "$(dirname "$bin")/chakrasim-sweep-mpi" ]; then
  mpi=$(measure mpi mpirun -np 2 "$bin" sweep "$spec")
  printf "2 MPI ranks:    %6.2f s  %7.0f points/min/core  speed-up %.2f\n" "$mpi" \
    "$(awk "BEGIN { print 30 * $points / $mpi }")" "$(awk "BEGIN { print $one / $mpi }")"
fi
