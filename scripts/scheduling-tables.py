#!/usr/bin/env python3
"""Prints the scheduling paper's Tables IV and V (and the kappa sweep) as fulcrum-sim
gives them, under both workload models, as the Markdown tables of docs/results.md.

- Fulcrum's model: `--generate microsoft-160` (1,000 to 6,000 iterations, arrivals over
  20 minutes) on the default cluster (16 x 4 V100 16 GB, the paper's a and b).
- The authors' model: `--generate microsoft-160 --iterations 10-60 --arrival-window-s 12
  --cluster resources/clusters/dl-scheduling.json` (their simulator's workload kind and
  constants, docs/scheduling.md).

Every cell is the average JCT of one `fulcrum-sim ... --json` run; the command of each
table is printed above it.

Example:
  scripts/scheduling-tables.py --sim build/release/app/fulcrum-sim --seeds 1 2 3
"""

import argparse
import concurrent.futures
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

MODELS = {
    "fulcrum": ("Fulcrum's model", []),
    "authors": (
        "the authors' model",
        ["--iterations", "10-60", "--arrival-window-s", "12", "--cluster", "resources/clusters/dl-scheduling.json"],
    ),
}
PLACEMENTS = [("RAND", "rand"), ("FF", "ff"), ("LS", "ls"), ("LWF-1", "lwf-1")]
COMMS = [("SRSF(1)", "srsf-1"), ("SRSF(2)", "srsf-2"), ("SRSF(3)", "srsf-3"), ("Ada-SRSF", "ada-srsf")]
KAPPAS = [1, 2, 4, 8, 32]


def run(sim, model, placement, comm, seed):
    command = [sim, "--generate", "microsoft-160", *MODELS[model][1], "--placement", placement, "--comm", comm,
               "--seed", str(seed), "--json"]
    out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        sys.exit(f"scheduling-tables: {' '.join(command)} failed:\n{out.stderr}")
    return json.loads(out.stdout)


def fmt(x, unit):
    return f"{x:.0f}" if unit == "s" and x >= 100 else f"{x:.2f}" if unit == "s" else f"{x:.1f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sim", default="build/release/app/fulcrum-sim", help="the fulcrum-sim to run")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    args = parser.parse_args()
    sim = str((ROOT / args.sim) if not os.path.isabs(args.sim) else args.sim)

    wanted = set()
    for model in args.models:
        for seed in args.seeds:
            wanted.update((model, p, "ada-srsf", seed) for _, p in PLACEMENTS)
            wanted.update((model, "lwf-1", c, seed) for _, c in COMMS)
            wanted.update((model, f"lwf-{k}", "ada-srsf", seed) for k in KAPPAS)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        futures = {key: pool.submit(run, sim, *key) for key in sorted(wanted)}
        results = {key: f.result() for key, f in futures.items()}

    seeds = " / ".join(map(str, args.seeds))
    for model in args.models:
        name, extra = MODELS[model]
        base = " ".join(["fulcrum-sim --generate microsoft-160", *extra])

        def cell(p, c, metric):
            return [results[(model, p, c, s)][metric] for s in args.seeds]

        def mean(xs):
            return sum(xs) / len(xs)

        print(f"### Table IV, {name}: Ada-SRSF, four placements\n")
        print(f"`{base} --placement P --comm ada-srsf --seed S --json`, S = {seeds}\n")
        print(f"| placement (Ada-SRSF) | avg JCT s (seeds {seeds}) | mean | p95 JCT s (mean) | makespan s (mean) "
              "| GPU util % (mean) |")
        print("| --- | --- | --- | --- | --- | --- |")
        for label, p in PLACEMENTS:
            jct = cell(p, "ada-srsf", "avg_jct")
            print(f"| {label} | {' / '.join(fmt(x, 's') for x in jct)} | {fmt(mean(jct), 's')} "
                  f"| {fmt(mean(cell(p, 'ada-srsf', 'p95_jct')), 's')} "
                  f"| {fmt(mean(cell(p, 'ada-srsf', 'makespan')), 's')} "
                  f"| {100 * mean(cell(p, 'ada-srsf', 'gpu_util')):.1f} |")
        print()
        print(f"### Table V, {name}: LWF-1, four communication schedulers\n")
        print(f"`{base} --placement lwf-1 --comm C --seed S --json`, S = {seeds}\n")
        print(f"| communication (LWF-1) | avg JCT s (seeds {seeds}) | mean | Ada-SRSF against it (seeds {seeds}) "
              "| p95 JCT s (mean) | makespan s (mean) |")
        print("| --- | --- | --- | --- | --- | --- |")
        ada = cell("lwf-1", "ada-srsf", "avg_jct")
        for label, c in COMMS:
            jct = cell("lwf-1", c, "avg_jct")
            against = "" if c == "ada-srsf" else " / ".join(f"{100 * (a / x - 1):+.1f} %" for a, x in zip(ada, jct))
            print(f"| {label} | {' / '.join(fmt(x, 's') for x in jct)} | {fmt(mean(jct), 's')} | {against} "
                  f"| {fmt(mean(cell('lwf-1', c, 'p95_jct')), 's')} | {fmt(mean(cell('lwf-1', c, 'makespan')), 's')} |")
        print()
        print(f"### kappa sweep, {name}: LWF-kappa with Ada-SRSF\n")
        print(f"`{base} --placement lwf-K --comm ada-srsf --seed S --json`, S = {seeds}\n")
        print(f"| kappa | avg JCT s (seeds {seeds}) | mean | GPU util % (mean) |")
        print("| --- | --- | --- | --- |")
        for k in KAPPAS:
            jct = cell(f"lwf-{k}", "ada-srsf", "avg_jct")
            print(f"| {k} | {' / '.join(fmt(x, 's') for x in jct)} | {fmt(mean(jct), 's')} "
                  f"| {100 * mean(cell(f'lwf-{k}', 'ada-srsf', 'gpu_util')):.1f} |")
        print()


if __name__ == "__main__":
    main()
