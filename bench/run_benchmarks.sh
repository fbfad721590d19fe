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
echo "Real (asymmetric) traces: GPT-3 175B generated with TP 8, PP 8, --sp, ZeRO 1 on H100s (issue 17's cases),"
echo "median of $runs; each run folds its ranks into classes (one per stage) unless --no-folding:"
# Runs `chakrasim run` on PREFIX's files RUNS times: "median wall s, peak RSS MB, events".
time_run() {
  local dir=$1; shift
  local walls=() rsss=() t
  for _ in $(seq "$runs"); do
    t=$(mktemp)
    /usr/bin/time -f "%e %M" -o "$t" "$build/chakrasim" run --workload "$dir/t" --comm-groups "$dir/t.groups.json" \
      --network "$dir/network.yml" --system "$dir/system.json" "$@" > "$dir/run.txt" 2>&1
    read -r wall rss < "$t"
    rm -f "$t"
    walls+=("$wall"); rsss+=("$rss")
  done
  echo "median wall $(printf '%s\n' "${walls[@]}" | median) s, peak RSS $(( $(printf '%s\n' "${rsss[@]}" | median) / 1024 )) MB," \
    "$(awk '/ events, / {for (i = 1; i < NF; ++i) if ($(i + 1) == "events,") print $i}' "$dir/run.txt") events" \
    "($(grep -o 'fall into [0-9]* classes' "$dir/run.txt" || echo 'every NPU simulated'))"
}
for c in "256 GPUs (dp 4, global batch 64; reference 22 s, 1.36 GB)|4|64" \
         "1024 GPUs (dp 16, global batch 1536; bar 3 s, 300 MB)|16|1536" \
         "4096 GPUs (dp 64, global batch 1024; bar 5 s)|64|1024"; do
  IFS='|' read -r name dp batch <<< "$c"
  tmp=$(mktemp -d)
  "$build/chakrasim" generate llm --model gpt3-175b --tp 8 --pp 8 --dp "$dp" --global-batch "$batch" --sp --zero 1 \
    --gpu H100 --out "$tmp/t" --network-out "$tmp/network.yml" --system-out "$tmp/system.json" > /dev/null
  echo "  $name, $(du -sm "$tmp" | cut -f1) MB of traces:"
  echo "    run: $(time_run "$tmp")"
  if [ "$dp" = 16 ]; then
    walls=(); line=""
    for _ in $(seq "$runs"); do
      line=$("$build/bench/chakrasim_load_bench" "$tmp/t" 1024)
      walls+=("$(sed -E 's/.*wall_s=([0-9.]+).*/\1/' <<< "$line")")
    done
    echo "    load alone (load_workload, as run does): median wall $(printf '%s\n' "${walls[@]}" | median) s; last run: $line"
    echo "    every NPU simulated (--no-folding, as ranks that all differ cost): $(time_run "$tmp" --no-folding)"
  fi
  rm -rf "$tmp"
done
echo "  32768 GPUs (TP 8, PP 16, DP 256, global batch 4096) generated and simulated in memory on one core"
echo "  (generate llm --run; bar 60 s, 4 GB):"
walls=(); rsss=()
for _ in $(seq "$runs"); do
  t=$(mktemp)
  /usr/bin/time -f "%e %M" -o "$t" taskset -c 0 "$build/chakrasim" generate llm --model gpt3-175b --tp 8 --pp 16 \
    --dp 256 --global-batch 4096 --zero 1 --gpu H100 --run > /dev/null 2>&1
  read -r wall rss < "$t"
  rm -f "$t"
  walls+=("$wall"); rsss+=("$rss")
done
echo "    median wall $(printf '%s\n' "${walls[@]}" | median) s, peak RSS $(( $(printf '%s\n' "${rsss[@]}" | median) / 1024 )) MB"

echo
echo "Systolic compute model (issue 18): the same shaped traces (--op-shapes) timed by the roofline and by"
echo "the systolic model (tpu-v4), median of $runs:"
tmp=$(mktemp -d)
"$build/chakrasim" generate llm --model gpt3-175b --tp 8 --pp 8 --dp 16 --global-batch 1536 --sp --zero 1 --gpu H100 \
  --op-shapes --out "$tmp/t" --network-out "$tmp/network.yml" --system-out "$tmp/generated.json" > /dev/null
sed 's/"roofline-enabled": 0/"roofline-enabled": 1/' "$tmp/generated.json" > "$tmp/system.json"
echo "  1024 GPUs, roofline: $(time_run "$tmp")"
sed 's/"roofline-enabled": 0/"systolic": {"preset": "tpu-v4"}/' "$tmp/generated.json" > "$tmp/system.json"
echo "  1024 GPUs, systolic: $(time_run "$tmp")"
rm -rf "$tmp"
for how in "--op-shapes|replayed durations" "--systolic tpu-v4|the systolic model"; do
  IFS='|' read -r flags name <<< "$how"
  walls=(); rsss=()
  for _ in $(seq "$runs"); do
    t=$(mktemp)
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e %M" -o "$t" taskset -c 0 "$build/chakrasim" generate llm --model gpt3-175b --tp 8 --pp 16 \
      --dp 256 --global-batch 4096 --zero 1 --gpu H100 $flags --run > /dev/null 2>&1
    read -r wall rss < "$t"
    rm -f "$t"
    walls+=("$wall"); rsss+=("$rss")
  done
  echo "  32768 GPUs in memory on one core, $name: median wall $(printf '%s\n' "${walls[@]}" | median) s," \
    "peak RSS $(( $(printf '%s\n' "${rsss[@]}" | median) / 1024 )) MB"
done

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
