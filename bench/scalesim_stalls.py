#!/usr/bin/env python3
"""How close `chakrasim compute`'s memory stalls come to SCALE-sim v2's USER mode.

Usage: bench/scalesim_stalls.py SCALESIM_SRC [BUILD_DIR] [WORK_DIR]

Writes 90 USER-mode configs (8x8, 16x16 and 32x32 arrays, the three dataflows, SRAMs of 1 to
256 kB, Bandwidth 1 to 50) and two topologies, runs SCALE-sim on each (SCALESIM_SRC is its
source tree's src/ directory, with Debian's python3, python3-numpy and python3-tqdm; a few
minutes in all) and `chakrasim compute`, and prints the error of the total cycles per layer, split
into the layers SCALE-sim streams and those where its prefetch window thrashes (its DRAM reads
above 1.5 x the SRAM reads). docs/systolic.md quotes the result.
"""
import csv
import itertools
import os
import statistics
import subprocess
import sys

CONV_TOPOLOGY = (
    "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n"
)
MIXED = CONV_TOPOLOGY + "conv_a, 16, 16, 3, 3, 8, 16, 1,\nfc_a, 64, 128, 1, 128, 1, 32, 1,\nfc_b, 96, 32, 1, 32, 1, 128, 1,\n"
SMALL_SRAM = CONV_TOPOLOGY + "c32_f3_ch8,32,32,3,3,8,16,1,\ng9,9,9,9,1,1,1,1,\n"


def config(name, array, sram_kb, bandwidth, dataflow):
    return f"""[general]
run_name = {name}

[architecture_presets]
ArrayHeight:    {array}
ArrayWidth:     {array}
IfmapSramSzkB:    {sram_kb}
FilterSramSzkB:   {sram_kb}
OfmapSramSzkB:    {sram_kb}
IfmapOffset:    0
FilterOffset:   10000000
OfmapOffset:    20000000
Bandwidth : {bandwidth}
Dataflow : {dataflow}
MemoryBanks:   1

[run_presets]
InterfaceBandwidth: USER
"""


def cases():
    for array, kb, bw, df in itertools.product([16], [1, 4, 32], [1, 4, 16], ["os", "ws", "is"]):
        yield f"u_{array}_{kb}k_bw{bw}_{df}", config(f"u_{array}_{kb}k_bw{bw}_{df}", array, kb, bw, df), "mixed"
    for array, kb, bw, df in itertools.product([8, 32], [2, 8, 64], [2, 8, 32], ["os", "ws", "is"]):
        yield f"u_{array}_{kb}k_bw{bw}_{df}", config(f"u_{array}_{kb}k_bw{bw}_{df}", array, kb, bw, df), "mixed"
    for bw, df in itertools.product([1, 4, 50], ["os", "ws", "is"]):
        yield f"s_8_1k_bw{bw}_{df}", config(f"s_8_1k_bw{bw}_{df}", 8, 1, bw, df), "small"


def rows(path):
    with open(path) as f:
        table = list(csv.reader(f))
    header = [h.strip() for h in table[0]]
    return [dict(zip(header, [x.strip() for x in row])) for row in table[1:] if row]


def summary(errors):
    magnitudes = sorted(abs(e) for e in errors)
    at = lambda q: magnitudes[int(q * (len(magnitudes) - 1))]
    return (f"{len(errors)} layers: {sum(1 for e in magnitudes if e == 0)} exact, "
            f"{sum(1 for e in magnitudes if e <= 0.05)} within 5%, median {100 * statistics.median(magnitudes):.1f}%, "
            f"90th percentile {100 * at(0.9):.1f}%, max {100 * magnitudes[-1]:.1f}%, "
            f"mean signed {100 * statistics.mean(errors):+.1f}%")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    scalesim = os.path.abspath(sys.argv[1])
    build = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else "build")
    work = os.path.abspath(sys.argv[3] if len(sys.argv) > 3 else "scalesim_stalls")
    os.makedirs(work, exist_ok=True)
    topologies = {"mixed": os.path.join(work, "mixed.csv"), "small": os.path.join(work, "small.csv")}
    for key, text in (("mixed", MIXED), ("small", SMALL_SRAM)):
        with open(topologies[key], "w") as f:
            f.write(text)
    streaming, thrashing = [], []
    for name, text, topology in cases():
        cfg = os.path.join(work, name + ".cfg")
        with open(cfg, "w") as f:
            f.write(text)
        theirs = os.path.join(work, "scalesim", name)
        if not os.path.exists(os.path.join(theirs, "COMPUTE_REPORT.csv")):
            subprocess.run([sys.executable, "-m", "scalesim.scale", "-c", cfg, "-t", topologies[topology], "-p",
                            os.path.join(work, "scalesim")], cwd=scalesim, env={**os.environ, "PYTHONPATH": scalesim},
                           check=True, capture_output=True)
        ours = os.path.join(work, "chakrasim", name)
        subprocess.run([os.path.join(build, "chakrasim"), "compute", "--config", cfg, "--topology",
                        topologies[topology], "--out", ours], check=True, capture_output=True)
        their_totals, our_totals = rows(os.path.join(theirs, "COMPUTE_REPORT.csv")), rows(
            os.path.join(ours, "COMPUTE_REPORT.csv"))
        their_access = rows(os.path.join(theirs, "DETAILED_ACCESS_REPORT.csv"))
        our_access = rows(os.path.join(ours, "DETAILED_ACCESS_REPORT.csv"))
        for t, o, ta, oa in zip(their_totals, our_totals, their_access, our_access):
            total = int(t["Total Cycles"])
            error = (int(o["Total Cycles"]) - total) / total
            dram = max(int(ta["DRAM IFMAP Reads"]), int(ta["DRAM Filter Reads"]))
            sram = max(int(oa["SRAM IFMAP Reads"]), int(oa["SRAM Filter Reads"]))
            (thrashing if dram > 1.5 * sram else streaming).append(error)
    print("total cycles, chakrasim compute against SCALE-sim v2 (USER mode):")
    print("  streaming:", summary(streaming))
    print("  thrashing:", summary(thrashing))


if __name__ == "__main__":
    main()
