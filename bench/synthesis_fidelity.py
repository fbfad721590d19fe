#!/usr/bin/env python3
"""How close `chakra synthesize` traces run to the originals (docs/chakra-tools.md).

For each workload: learn a model, generate 10 trace sets (seeds 1..10), and run the original
and every synthetic set on three systems. Prints, per workload and system, the original's
iteration time, the synthetic sets' mean and worst relative error, and the largest error of the
bytes moved per collective type (mean over the seeds).

  bench/synthesis_fidelity.py BUILD_DIR [REFERENCE_DIR]

REFERENCE_DIR (the shared reference material: text-workloads/, chakra-tests/) adds the ASTRA-sim
text workloads and the PyTorch conversion; without it only generated LLM traces are measured.
"""
import json
import os
import subprocess
import sys
import tarfile
import tempfile

BIN = None
SEEDS = range(1, 11)


def run(args, **kw):
    r = subprocess.run([BIN] + args, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(args)}: exit {r.returncode}\n{r.stderr}")
    return r.stdout


def simulate(prefix, groups, system, network, out_json):
    args = ["run", "--workload", prefix, "--system", system, "--network", network, "--json", out_json]
    if groups:
        args += ["--comm-groups", groups]
    run(args)
    j = json.load(open(out_json))
    finish = max(n["finish_ns"] for n in j["npus"])
    volume = {}
    for c in j.get("collectives", []):
        volume[c["kind"]] = volume.get(c["kind"], 0) + c["comm_size_bytes"]
    return finish, volume


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def measure(name, dir, prefix, groups, systems, learn_args=()):
    model = os.path.join(dir, "model.json")
    run(["chakra", "synthesize", "learn", prefix, "--model", model] + (["--comm-groups", groups] if groups else [])
        + list(learn_args))
    size = os.path.getsize(model)
    for sname, (system, network) in systems.items():
        base, base_volume = simulate(prefix, groups, system, network, os.path.join(dir, "o.json"))
        errors, volume_errors = [], []
        for seed in SEEDS:
            out = os.path.join(dir, f"s{seed}")
            run(["chakra", "synthesize", "generate", model, "--out", out, "--seed", str(seed)])
            t, volume = simulate(out, out + ".groups.json" if groups else None, system, network,
                                 os.path.join(dir, "s.json"))
            errors.append(t / base - 1)
            worst = 0.0
            for kind, total in base_volume.items():
                worst = max(worst, abs(volume.get(kind, 0) / total - 1))
            volume_errors.append(worst)
        mean = sum(errors) / len(errors)
        print(f"{name:34s} {sname:10s} {base / 1e6:12.3f} ms  mean {100 * mean:+6.2f}%  worst "
              f"{100 * max(errors, key=abs):+6.2f}%  volume {100 * max(volume_errors):5.2f}%  model {size} B",
              flush=True)


def llm_cases(tmp):
    cases = []
    for name, flags in [
        ("llm dp2 tp2 pp2 zero1", ["--layers", "4", "--hidden", "512", "--heads", "8", "--seq", "256", "--vocab",
                                   "4096", "--dp", "2", "--tp", "2", "--pp", "2", "--global-batch", "8", "--zero",
                                   "1"]),
        ("llm gpt3-13b dp4 tp4 pp2 (64)", ["--model", "gpt3-13b", "--dp", "8", "--tp", "4", "--pp", "2",
                                           "--global-batch", "64"]),
    ]:
        d = tempfile.mkdtemp(dir=tmp)
        prefix = os.path.join(d, "g")
        run(["generate", "llm"] + flags + ["--out", prefix, "--network-out", os.path.join(d, "n0.yml"),
                                           "--system-out", os.path.join(d, "s0.json")])
        s0 = json.load(open(os.path.join(d, "s0.json")))
        rings = dict(s0)
        for k in ("all-reduce-implementation", "reduce-scatter-implementation", "all-gather-implementation"):
            rings[k] = ["ring", "ring"]
        write(os.path.join(d, "s1.json"), json.dumps(rings))
        n0 = open(os.path.join(d, "n0.yml")).read()
        npus = int(subprocess.run(["ls", d], capture_output=True, text=True).stdout.count(".et"))
        inner = 8 if npus % 8 == 0 else 4
        write(os.path.join(d, "n1.yml"), f"topology: [ Ring, Switch ]\nnpus_count: [ {inner}, {npus // inner} ]\n"
                                         "bandwidth: [ 100, 12 ]\nlatency: [ 500, 2000 ]\n")
        direct = dict(s0)
        for k in ("all-reduce-implementation", "reduce-scatter-implementation", "all-gather-implementation"):
            direct[k] = ["direct"]
        direct["roofline-enabled"] = 1
        write(os.path.join(d, "s2.json"), json.dumps(direct))
        systems = {"generated": (os.path.join(d, "s0.json"), os.path.join(d, "n0.yml")),
                   "rings/4x": (os.path.join(d, "s1.json"), os.path.join(d, "n1.yml")),
                   "direct": (os.path.join(d, "s2.json"), os.path.join(d, "n0.yml"))}
        cases.append((name, d, prefix, prefix + ".groups.json", systems))
    return cases


def text_systems(d, npus, dims):
    def net(name, topo, counts, bw, lat):
        p = os.path.join(d, name)
        write(p, f"topology: [ {', '.join(topo)} ]\nnpus_count: [ {', '.join(map(str, counts))} ]\n"
                 f"bandwidth: [ {', '.join(map(str, bw))} ]\nlatency: [ {', '.join(map(str, lat))} ]\n")
        return p

    def sys_(name, algo, n):
        p = os.path.join(d, name)
        write(p, json.dumps({"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
                             "preferred-dataset-splits": 4, "all-reduce-implementation": [algo] * n,
                             "all-gather-implementation": [algo] * n, "reduce-scatter-implementation": [algo] * n,
                             "all-to-all-implementation": ["direct"] * n, "collective-optimization": "localBWAware",
                             "local-mem-bw": 50}))
        return p

    if dims == 1:
        return {"ring 50": (sys_("s0.json", "ring", 1), net("n0.yml", ["Ring"], [npus], [50], [500])),
                "switch 12": (sys_("s1.json", "ring", 1), net("n1.yml", ["Switch"], [npus], [12], [2000])),
                "fc direct": (sys_("s2.json", "direct", 1), net("n2.yml", ["FullyConnected"], [npus], [200], [100]))}
    half = npus // 2 if npus >= 4 else 1
    return {"ring+switch": (sys_("s0.json", "ring", 2), net("n0.yml", ["Ring", "Switch"], [half, npus // half],
                                                             [100, 25], [500, 1000])),
            "ring 4x slower": (sys_("s1.json", "ring", 2), net("n1.yml", ["Ring", "Ring"], [half, npus // half],
                                                                [25, 6], [500, 2000])),
            "fc direct": (sys_("s2.json", "direct", 2), net("n2.yml", ["FullyConnected", "Switch"],
                                                             [half, npus // half], [200, 50], [100, 500]))}


def text_cases(tmp, ref):
    cases = []
    for file, npus, dims, extra in [("Resnet50_DataParallel.txt", 8, 1, []),
                                    ("MLP_HybridParallel_Data_Model.txt", 8, 2, []),
                                    ("Transformer_HybridParallel.txt", 8, 2, []),
                                    ("DLRM_HybridParallel.txt", 8, 1, [])]:
        d = tempfile.mkdtemp(dir=tmp)
        prefix = os.path.join(d, "t")
        run(["chakra", "convert", "text", os.path.join(ref, "text-workloads", file), "--npus", str(npus),
             "--passes", "1", "--out", prefix] + extra)
        groups = prefix + ".groups.json" if os.path.exists(prefix + ".groups.json") else None
        cases.append((file, d, prefix, groups, text_systems(d, npus, dims)))
    return cases


def pytorch_case(tmp, ref):
    d = tempfile.mkdtemp(dir=tmp)
    with tarfile.open(os.path.join(ref, "chakra-tests", "1.0.2-chakra.0.0.4.tgz")) as t:
        t.extractall(d)
    prefix = os.path.join(d, "t")
    for rank in (0, 1):
        run(["chakra", "convert", "pytorch", os.path.join(d, "1.0.2-chakra.0.0.4.json"), "--out",
             f"{prefix}.{rank}.et", "--fix-defects"])
    return [("PyTorch conversion (2 ranks)", d, prefix, None, text_systems(d, 2, 1))]


def main():
    global BIN
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    BIN = os.path.join(sys.argv[1], "chakrasim")
    ref = sys.argv[2] if len(sys.argv) > 2 else None
    with tempfile.TemporaryDirectory() as tmp:
        cases = [] if os.environ.get("SKIP_LLM") else llm_cases(tmp)
        if ref:
            cases += text_cases(tmp, ref) + pytorch_case(tmp, ref)
        learn = ["--resolution", os.environ["RESOLUTION"]] if os.environ.get("RESOLUTION") else []
        for case in cases:
            measure(*case, learn_args=learn)


if __name__ == "__main__":
    main()
