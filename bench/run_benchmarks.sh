#!/usr/bin/env bash
# Reproduces the benchmark figures: each case runs RUNS times (default 3) in a fresh process and
# the median wall time and peak RSS are printed. Usage: bench/run_benchmarks.sh [BUILD_DIR]
# Each collective case also runs once in full (every NPU simulated, CHAKRASIM_FULL_RUN=1) up to
# FULL_MAX_NPUS NPUs (default 16384), and the last column says whether its figure is the same.
set -euo pipefail
build=${1:-build}
runs=${RUNS:-3}
bench="$build/bench/chakrasim_collective_bench"

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# name | dims | splits | active chunks [| bytes | backend | Ring or Switch]
cases=(
  "CU 1-D ring 1024 NPUs, s4|1024|4|1"
  "CU 1-D ring 2048 NPUs, s4|2048|4|1"
  "CU 3-D 8x32x16 = 4096 NPUs, s16 a4|8x32x16|16|4"
  "CU 3-D 16x32x32 = 16384 NPUs, s1|16x32x32|1|1"
  "CU 3-D 32x64x64 = 131072 NPUs, s1|32x64x64|1|1"
  "CA 1-D Ring 512 NPUs, s4|512|4|1|1073741824|congestion-aware|Ring"
  "CA 1-D Switch 512 NPUs, s4|512|4|1|1073741824|congestion-aware|Switch"
  "CU 1-D ring 8 NPUs, 1 MiB, s100000|8|100000|1|1048576"
)
if [ -n "${CASES:-}" ]; then IFS=';' read -r -a cases <<< "$CASES"; fi

full_max=${FULL_MAX_NPUS:-16384}
printf '%-40s %10s %10s %16s %10s %12s\n' "case (1 GiB all-reduce)" "wall s" "RSS MB" "simulated ns" "events" "full run"
for c in "${cases[@]}"; do
  IFS='|' read -r name dims splits active bytes backend kind <<< "$c"
  walls=(); rsss=(); line=""
  for _ in $(seq "$runs"); do
    line=$("$bench" "$dims" "$splits" "$active" ${bytes:-1073741824} ${backend:-congestion-unaware} ${kind:-Ring})
    walls+=("$(sed -E 's/.*wall_s=([0-9.]+).*/\1/' <<< "$line")")
    rsss+=("$(sed -E 's/.*rss_mb=([0-9.]+).*/\1/' <<< "$line")")
  done
  finish=$(sed -E 's/.*finish_ns=([0-9]+).*/\1/' <<< "$line")
  events=$(sed -E 's/.*events=([0-9]+).*/\1/' <<< "$line")
  npus=$(sed -E 's/.*npus=([0-9]+).*/\1/' <<< "$line")
  check="-"
  if [ "$npus" -le "$full_max" ]; then
    full=$(CHAKRASIM_FULL_RUN=1 "$bench" "$dims" "$splits" "$active" ${bytes:-1073741824} ${backend:-congestion-unaware} ${kind:-Ring})
    full_finish=$(sed -E 's/.*finish_ns=([0-9]+).*/\1/' <<< "$full")
    full_wall=$(sed -E 's/.*wall_s=([0-9.]+).*/\1/' <<< "$full")
    if [ "$full_finish" = "$finish" ]; then check="same (${full_wall} s)"; else check="DIFFERS: $full_finish"; fi
  fi
  printf '%-40s %10s %10s %16s %10s %12s\n' "$name" "$(printf '%s\n' "${walls[@]}" | median)" \
    "$(printf '%s\n' "${rsss[@]}" | median)" "$finish" "$events" "$check"
done

echo
echo "Training-like trace: 1024 NPUs x 1000 x (compute 100 us -> 64 MiB all-reduce), reading the traces included:"
tmp=$(mktemp -d)
walls=()
for _ in $(seq "$runs"); do
  line=$("$build/bench/chakrasim_training_bench" "$tmp" 1024 1000)
  walls+=("$(sed -E 's/.*wall_s=([0-9.]+).*/\1/' <<< "$line")")
done
rm -rf "$tmp"
echo "  median wall $(printf '%s\n' "${walls[@]}" | median) s; last run: $line"

echo
echo "Real (asymmetric) traces: GPT-3 175B on 1024 H100s (TP 8, PP 8, DP 16, ZeRO 1, global batch 1536),"
echo "generated once; loading alone (load_workload, as run does) and the whole run, median of $runs:"
tmp=$(mktemp -d)
"$build/chakrasim" generate llm --model gpt3-175b --tp 8 --pp 8 --dp 16 --global-batch 1536 --zero 1 --gpu H100 \
  --out "$tmp/t" --network-out "$tmp/network.yml" --system-out "$tmp/system.json" > /dev/null
walls=(); rsss=(); line=""
for _ in $(seq "$runs"); do
  line=$("$build/bench/chakrasim_load_bench" "$tmp/t" 1024)
  walls+=("$(sed -E 's/.*wall_s=([0-9.]+).*/\1/' <<< "$line")")
done
echo "  load: median wall $(printf '%s\n' "${walls[@]}" | median) s; last run: $line"
walls=()
for _ in $(seq "$runs"); do
  t=$(mktemp)
  /usr/bin/time -f "%e %M" -o "$t" "$build/chakrasim" run --workload "$tmp/t" --comm-groups "$tmp/t.groups.json" \
    --network "$tmp/network.yml" --system "$tmp/system.json" > "$tmp/run.txt" 2>&1
  read -r wall rss < "$t"
  rm -f "$t"
  walls+=("$wall"); rsss+=("$rss")
done
events=$(awk '/ events, / {print $1}' "$tmp/run.txt")
echo "  run: median wall $(printf '%s\n' "${walls[@]}" | median) s, peak RSS $(( $(printf '%s\n' "${rsss[@]}" | median) / 1024 )) MB, $events events"
rm -rf "$tmp"

echo
echo "Tools on inputs that were quadratic (median wall s of $runs runs):"
for which in inspect msccl; do
  walls=()
  for _ in $(seq "$runs"); do
    line=$("$build/bench/chakrasim_tool_scaling_bench" "$which")
    walls+=("$(sed -E 's/.*wall_s=([0-9.]+).*/\1/' <<< "$line")")
  done
  echo "  $(sed -E 's/ wall_s=[0-9.]+//' <<< "$line"): median wall $(printf '%s\n' "${walls[@]}" | median) s"
done

echo
echo "Flow backend, k = 16 fat-tree (1024 NPUs), random flows of 64 KiB to 16 MiB, 400000 arrivals and departures"
echo "(the bar: >= 1 M per second with <= 1k flows in flight):"
for concurrent in 100 1000; do
  rates=()
  for _ in $(seq "$runs"); do
    line=$("$build/bench/chakrasim_flow_bench" "$concurrent" 400000)
    rates+=("$(sed -E 's/.*events_per_s=([0-9.]+).*/\1/' <<< "$line")")
  done
  echo "  $concurrent concurrent: median $(printf '%s\n' "${rates[@]}" | median) events/s; last run: $line"
done

if [ -x "$build/bench/chakrasim_ns3_bench" ]; then
  echo
  echo "ns3 backend, k = 8 fat-tree (128 NPUs, 100 Gb/s): median wall s of $runs runs:"
  for c in "ring 4194304 4" "all-to-all 262144" "all-to-all 4096"; do
    walls=()
    for _ in $(seq "$runs"); do
      # shellcheck disable=SC2086
      line=$("$build/bench/chakrasim_ns3_bench" $c)
      walls+=("$(sed -E 's/.*wall_s=([0-9.]+).*/\1/' <<< "$line")")
    done
    echo "  $c: median wall $(printf '%s\n' "${walls[@]}" | median) s; last run: $line"
  done
fi

echo
echo "Event queue microbenchmark:"
"$build/bench/chakrasim_event_queue_bench" --benchmark_repetitions="$runs" --benchmark_report_aggregates_only=true
