#!/usr/bin/env python3
"""The recorder's cost to training: one scenario trained with recording on and off,
alternating (on, off, on, off, ...) so machine drift hits both alike; prints each pair's
wall-time ratio and the median.

    python3 bench/recording_overhead.py [--build build/release] [--pairs 5] [SCENARIO]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run(exe, scenario, database):
    command = [exe, scenario, "--mode", "virtual", "--json"]
    command += ["--out", database] if database else ["--no-record"]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["wall_seconds"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario", nargs="?", default="resources/scenarios/aggregation-equal.json")
    parser.add_argument("--build", default="build/release")
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args()
    exe = os.path.join(args.build, "app", "fulcrum-run")
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        for pair in range(args.pairs):
            on = run(exe, args.scenario, os.path.join(tmp, f"run{pair}.db"))
            off = run(exe, args.scenario, None)
            ratios.append(on / off)
            print(f"pair {pair + 1}: recording on {on:.2f} s, off {off:.2f} s, ratio {on / off:.3f}")
    median = statistics.median(ratios)
    print(f"median ratio on/off: {median:.3f} ({(median - 1) * 100:+.1f} %; target within 3 %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
