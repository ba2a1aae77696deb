#!/usr/bin/env python3
"""LB-BSP for PyTorch jobs against equal batches, with one rank slowed by a real competing
process on its core. Prints each run's time per epoch and test accuracy, the ratios against
the baselines measured in the same run, and the client's per-iteration overhead.

Two gloo ranks, one per core (these machines have two; each rank one thread), train the
example's MLP (784-256-128-10) on Fashion-MNIST for one epoch (118 iterations of X = 512):

  plain DDP               equal batches, DDP's own averaging, no fulcrumd   (baseline, no slow rank)
  fulcrum uniform         equal batches through fulcrumd                    (no slow rank: the client's cost)
  uniform + competitor    equal batches, a busy process shares rank 1's core
  lbbsp   + competitor    LB-BSP Algorithm 1 sizes, same competitor

Each repeat runs every case once, the two competitor cases back to back (A B A B ...), so a
load that comes and goes on the machine meets both alike; the gain is taken pair by pair.
Each fulcrumd run reports every rank's measured compute time per sample: the bench checks
that the competitor did slow rank 1 (by --min-slowdown, 1.3x by default, against rank 0
under equal batches), and refuses to print a gain when it did not, exiting 2. Medians are
printed with their spread (the lowest to the highest of the repeats).

    /usr/bin/python3 bench/torch_lbbsp.py [--fulcrumd build/ci/app/fulcrumd] [--epochs 1] [--repeats 3]
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "clients", "python", "examples", "torch_ddp_fashion_mnist.py")


def start_fulcrumd(binary, folder):
    log = open(os.path.join(folder, "fulcrumd.log"), "w")
    process = subprocess.Popen([binary, "--data-dir", folder, "--listen", "127.0.0.1:0", "--no-demo"],
                               stdout=log, stderr=subprocess.STDOUT)
    for _ in range(200):
        text = open(os.path.join(folder, "fulcrumd.log")).read()
        if "serving ws://127.0.0.1:" in text:
            port = "".join(c for c in text.split("serving ws://127.0.0.1:")[1].split()[0] if c.isdigit())
            return process, f"ws://127.0.0.1:{port}"
        time.sleep(0.05)
    raise RuntimeError("fulcrumd did not start:\n" + text)


def competitor(core):
    """A busy loop on `core`: the slowed rank gets about half of it."""
    return subprocess.Popen([sys.executable, "-c",
                             f"import os; os.sched_setaffinity(0, {{{core}}})\nwhile True: pass"])


def run(args, folder, server, label, extra, slow):
    out = os.path.join(folder, label.replace(" ", "_"))
    command = [sys.executable, EXAMPLE, "--ranks", "2", "--cores", "0", "1", "--threads-per-rank", "1",
               "--iterations", str(args.iterations), "--total-batch", str(args.total_batch),
               "--eval-interval", str(args.iterations), "--json-out", out, "--name", label] + extra
    if "--plain-ddp" not in extra:
        command += ["--server", server, "--token-file", os.path.join(folder, "tokens")]
    busy = competitor(1) if slow else None
    try:
        started = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - started
    finally:
        if busy:
            busy.send_signal(signal.SIGKILL)
            busy.wait()
    ranks = [json.load(open(f"{out}.rank{r}")) for r in range(2)]
    # Each rank's own compute seconds per sample over the run (its log: iteration, sizes,
    # compute_s, sync_s, report_s), the time the competitor stretches.
    per_sample = []
    for r, rank in enumerate(ranks):
        samples = sum(entry[1][r] for entry in rank.get("log") or [])
        per_sample.append(sum(entry[2] for entry in rank.get("log") or []) / samples if samples else None)
    # The training loop's time (the fulcrumd runs: from the first plan; connecting, submitting
    # and joining are the job's start-up, not its epoch).
    result = {"label": label, "epoch_s": max(r["train_s"] for r in ranks), "process_s": wall,
              "accuracy": ranks[0].get("accuracy"), "ms_per_sample": [1e3 * s if s else None for s in per_sample]}
    log = ranks[0].get("log") or []
    if log:
        result["sizes"] = log[-1][1]
        # The client's cost: the round trip of the rank that reported last in its iteration,
        # which waited for no other rank (the smaller of the two ranks' trips).
        trips = sorted(min(a[4], b[4]) for a, b in zip(ranks[0]["log"], ranks[1]["log"]))
        result["report_p50_ms"] = 1e3 * trips[len(trips) // 2]
        result["report_p99_ms"] = 1e3 * trips[min(len(trips) - 1, int(0.99 * len(trips)))]
    return result


def spread(values, unit="", digits=2):
    """The median, then the lowest and highest of the repeats."""
    values = sorted(values)
    median = statistics.median(values)
    return f"{median:.{digits}f}{unit} ({values[0]:.{digits}f} to {values[-1]:.{digits}f})"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fulcrumd", default=os.path.join(ROOT, "build", "ci", "app", "fulcrumd"))
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--total-batch", type=int, default=512)
    p.add_argument("--repeats", type=int, default=3, help="runs of each case, the competitor cases in pairs")
    p.add_argument("--min-slowdown", type=float, default=1.3,
                   help="rank 1's time per sample against rank 0's, under equal batches with the competitor, "
                        "below which no gain is printed")
    args = p.parse_args()
    if os.cpu_count() < 2:
        sys.exit("needs two cores: one rank per core")
    args.iterations = max(1, round(args.epochs * 60000 / args.total_batch))
    folder = tempfile.mkdtemp(prefix="fulcrum-torch-bench-")
    daemon, server = start_fulcrumd(args.fulcrumd, folder)
    cases = [("plain DDP", ["--plain-ddp"], False),
             ("fulcrum uniform", ["--policy", '{"type": "uniform"}'], False),
             ("uniform + competitor", ["--policy", '{"type": "uniform"}'], True),
             ("lbbsp + competitor", ["--policy", '{"type": "lbbsp-cpu"}'], True)]
    results = {}
    try:
        for repeat in range(args.repeats):
            for label, extra, slow in cases:
                r = run(args, folder, server, label, extra, slow)
                results.setdefault(label, []).append(r)
                print(f"  [{repeat + 1}/{args.repeats}] {label:22s} {r['epoch_s']:.2f} s", file=sys.stderr, flush=True)
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(30)
    print(f"{args.iterations} iterations of X = {args.total_batch} on 2 gloo ranks (one core each); "
          f"median (lowest to highest) of {args.repeats}")
    print(f"{'case':22s} {'epoch s':>20s} {'accuracy':>9s} {'last sizes':>12s} {'ms/sample rank 0, 1':>22s} "
          f"{'report p50/p99 ms':>18s}")
    for label, _, _ in cases:
        rs = results[label]
        r = sorted(rs, key=lambda x: x["epoch_s"])[len(rs) // 2]
        trips = f"{r['report_p50_ms']:.2f} / {r['report_p99_ms']:.2f}" if "report_p50_ms" in r else "-"
        accuracy = f"{r['accuracy']:.4f}" if r.get("accuracy") is not None else "-"
        if all(x["ms_per_sample"][0] is not None for x in rs):
            per_sample = " / ".join(f"{statistics.median(x['ms_per_sample'][k] for x in rs):.3f}" for k in range(2))
        else:
            per_sample = "-"
        print(f"{label:22s} {spread([x['epoch_s'] for x in rs]):>20s} {accuracy:>9s} {str(r.get('sizes', '-')):>12s} "
              f"{per_sample:>22s} {trips:>18s}")
    print("report p50/p99: the round trip of the rank that reported last (report, fulcrumd's barrier, answer)")
    plain, through = results["plain DDP"], results["fulcrum uniform"]
    overhead = [100 * (b["epoch_s"] / a["epoch_s"] - 1) for a, b in zip(plain, through)]
    print(f"through fulcrumd vs plain DDP, no slowed rank, pair by pair: {spread(overhead, ' %', 1)} "
          f"(target within 3 %)")
    uniform, lbbsp = results["uniform + competitor"], results["lbbsp + competitor"]
    slowdowns = [u["ms_per_sample"][1] / u["ms_per_sample"][0] for u in uniform]
    print(f"rank 1 against rank 0 under equal batches with the competitor: {spread(slowdowns, 'x')} per sample")
    if statistics.median(slowdowns) < args.min_slowdown:
        print(f"no gain printed: the competitor did not slow rank 1 by {args.min_slowdown}x "
              "(another load on the machine, or the competitor off rank 1's core)")
        sys.exit(2)
    shares = [lb["sizes"][1] / sum(lb["sizes"]) for lb in lbbsp if lb.get("sizes")]
    gains = [100 * (1 - lb["epoch_s"] / u["epoch_s"]) for u, lb in zip(uniform, lbbsp)]
    points = [100 * (lb["accuracy"] - u["accuracy"]) for u, lb in zip(uniform, lbbsp)]
    print(f"LB-BSP's last share for the slowed rank: {spread(shares)} of X")
    print(f"LB-BSP vs equal batches, slowed rank, pair by pair: {spread(gains, ' %', 1)} less time per epoch "
          f"(target >= 25 %), accuracy {spread(points, ' points')} (target within 0.5)")


if __name__ == "__main__":
    main()
