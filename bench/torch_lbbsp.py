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
    # The training loop's time (the fulcrumd runs: from the first plan; connecting, submitting
    # and joining are the job's start-up, not its epoch).
    result = {"label": label, "epoch_s": max(r["train_s"] for r in ranks), "process_s": wall,
              "accuracy": ranks[0].get("accuracy")}
    log = ranks[0].get("log") or []
    if log:
        result["sizes"] = log[-1][1]
        # The client's cost: the round trip of the rank that reported last in its iteration,
        # which waited for no other rank (the smaller of the two ranks' trips).
        trips = sorted(min(a[4], b[4]) for a, b in zip(ranks[0]["log"], ranks[1]["log"]))
        result["report_p50_ms"] = 1e3 * trips[len(trips) // 2]
        result["report_p99_ms"] = 1e3 * trips[min(len(trips) - 1, int(0.99 * len(trips)))]
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fulcrumd", default=os.path.join(ROOT, "build", "ci", "app", "fulcrumd"))
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--total-batch", type=int, default=512)
    p.add_argument("--repeats", type=int, default=1, help="runs of each case; the median is reported")
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
    median = {label: sorted(rs, key=lambda r: r["epoch_s"])[len(rs) // 2] for label, rs in results.items()}
    print(f"{args.iterations} iterations of X = {args.total_batch} on 2 gloo ranks (one core each), "
          f"median of {args.repeats}")
    print(f"{'case':24s} {'epoch s':>8s} {'accuracy':>9s} {'last sizes':>12s} {'report p50/p99 ms':>18s}")
    for label, _, _ in cases:
        r = median[label]
        trips = f"{r['report_p50_ms']:.2f} / {r['report_p99_ms']:.2f}" if "report_p50_ms" in r else "-"
        accuracy = f"{r['accuracy']:.4f}" if r.get("accuracy") is not None else "-"
        print(f"{label:24s} {r['epoch_s']:8.2f} {accuracy:>9s} {str(r.get('sizes', '-')):>12s} {trips:>18s}")
    print("report p50/p99: the round trip of the rank that reported last (report, fulcrumd's barrier, answer)")
    uniform, lbbsp = median["uniform + competitor"], median["lbbsp + competitor"]
    print(f"LB-BSP vs equal batches, slowed rank: {100 * (1 - lbbsp['epoch_s'] / uniform['epoch_s']):.1f} % less time "
          f"per epoch (target >= 25 %), accuracy {100 * (lbbsp['accuracy'] - uniform['accuracy']):+.2f} points "
          f"(target within 0.5)")
    plain, through = median["plain DDP"], median["fulcrum uniform"]
    print(f"through fulcrumd vs plain DDP, no slowed rank: {100 * (through['epoch_s'] / plain['epoch_s'] - 1):+.1f} % "
          f"(target within 3 %)")


if __name__ == "__main__":
    main()
