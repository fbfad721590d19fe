#!/usr/bin/env bash
# The `chakrasim generate llm` bar cases: generates each workload, simulates it, and prints the
# wall (and CPU) time of both steps, the simulated iteration time and the model FLOPs
# utilisation it implies (model FLOPs / (iteration time x GPUs x peak)).
# Usage: bench/llm_bench.sh [BUILD_DIR]   (CASES="name|flags;..." to run others; TMPDIR for
# the traces, which take about 1 GB per case and are removed afterwards)
set -euo pipefail
build=${1:-build}
bin="$build/chakrasim"
[ -x "$bin" ] || { echo "no $bin: build the chakrasim target first" >&2; exit 1; }

# name | generator flags (besides --out, --network-out, --system-out)
cases=(
  "GPT-3 175B, 1024 H100: TP 8, PP 8, DP 16|--model gpt3-175b --tp 8 --pp 8 --dp 16 --global-batch 1536 --zero 1 --gpu H100"
  "GPT-3 175B, 4096 H100: TP 8, PP 16, DP 32|--model gpt3-175b --tp 8 --pp 16 --dp 32 --global-batch 1536 --zero 1 --gpu H100"
  "  the same, interleaved (vpp 2)|--model gpt3-175b --tp 8 --pp 16 --dp 32 --global-batch 1536 --zero 1 --schedule interleaved --vpp 2 --gpu H100"
)
if [ -n "${CASES:-}" ]; then IFS=';' read -r -a cases <<< "$CASES"; fi

# "wall user sys" of a command, its output in $out.
timed() {
  local t
  t=$(mktemp)
  /usr/bin/time -f "%e %U %S %M" -o "$t" "$@" > "$out" 2>&1
  cat "$t"
  rm -f "$t"
}

dir=""
trap 'rm -rf "$dir"' EXIT
printf '%-44s %16s %16s %12s %8s %10s\n' "case" "generate s (cpu)" "simulate s (cpu)" "iteration" "MFU" "sim RSS"
for c in "${cases[@]}"; do
  IFS='|' read -r name flags <<< "$c"
  dir=$(mktemp -d)
  out="$dir/generate.txt"
  # shellcheck disable=SC2086
  read -r gwall guser gsys _ < <(timed "$bin" generate llm $flags --out "$dir/t" --network-out "$dir/network.yml" \
    --system-out "$dir/system.json")
  flops=$(awk '/^model FLOPs per iteration:/ {print $5}' "$out")
  ranks=$(awk '/ GPUs: TP / {print $3}' "$out")
  peak=$(awk '/^peak per GPU:/ {print $4}' "$out")
  cp "$out" "$dir/summary.txt"
  out="$dir/run.txt"
  read -r swall suser ssys srss < <(timed "$bin" run --workload "$dir/t" --comm-groups "$dir/t.groups.json" \
    --network "$dir/network.yml" --system "$dir/system.json" -q)
  # The iteration ends when the last NPU finishes (one cycle is one ns).
  ns=$(awk '/finished,/ {gsub(",", "", $3); if ($3 + 0 > m) m = $3 + 0} END {printf "%.0f", m}' "$out")
  finished=$(grep -c 'finished,' "$out" || true)
  if [ "$finished" != "$ranks" ]; then
    echo "$name: only $finished of $ranks NPUs finished" >&2
    tail -20 "$out" >&2
  fi
  mfu=$(awk -v f="$flops" -v n="$ns" -v r="$ranks" -v p="$peak" 'BEGIN {printf "%.1f%%", 100 * f / (n * 1e-9 * r * p * 1e12)}')
  printf '%-44s %16s %16s %12s %8s %10s\n' "$name" \
    "$gwall ($(awk -v a="$guser" -v b="$gsys" 'BEGIN {printf "%.1f", a + b}'))" \
    "$swall ($(awk -v a="$suser" -v b="$ssys" 'BEGIN {printf "%.1f", a + b}'))" \
    "$(awk -v n="$ns" 'BEGIN {printf "%.3f s", n / 1e9}')" "$mfu" "$((srss / 1024)) MB"
  if [ -n "${VERBOSE:-}" ]; then cat "$dir/summary.txt"; fi
  rm -rf "$dir"
done
echo "(CPU = user + system seconds; the machine is shared, so wall times vary with its load.)"
