#!/usr/bin/env python3
"""Runs the same workloads through fulcrum-sim and through the scheduling paper's own
simulator (HKBU-HPML/dl-scheduling, folder online/) and prints the average job completion
times side by side (docs/scheduling.md, "Same work, two simulators").

The authors' simulator is not part of Fulcrum: give a checkout (or a bare git directory)
of https://github.com/HKBU-HPML/dl-scheduling with --authors. Its Python 2 code is copied
into a temporary folder and converted with lib2to3; nothing of it is kept. The workloads
are Fulcrum's own: `fulcrum-sim --generate microsoft-N --iterations 10-60
--arrival-window-s 12` draws the authors' kind of workload, and the same jobs are written
in the authors' job-file format.

The authors' simulator runs twice per case: as published, and with one line corrected
(`dag_task.get_rest_size` adds the bytes moved since the last rate change to the task's
progress every time it is called, and AdaDUAL's test calls it for every waiting job at
every millisecond, so a running all-reduce finishes early whenever others wait beside it).

Example:
  scripts/compare-dl-scheduling.py --authors /path/to/dl-scheduling --seeds 1 2 3
"""

import argparse
import concurrent.futures
import csv
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
AUTHORS_FILES = ["cluster.py", "job.py", "job_master.py"]

# (label, fulcrum-sim --placement, --comm, the authors' pick_gpu, comm_thres, adaDual).
# Their test `num_comm <= thres` lets thres tasks already run on a link, so SRSF(n) is
# thres = n - 1 with adaDual off, and Ada-SRSF is thres = 1 with adaDual on.
CASES = [
    ("LWF-1 + SRSF(1)", "lwf-1", "srsf-1", "lwf1", 0, False),
    ("LWF-1 + SRSF(2)", "lwf-1", "srsf-2", "lwf1", 1, False),
    ("LWF-1 + Ada-SRSF", "lwf-1", "ada-srsf", "lwf1", 1, True),
    ("FF + Ada-SRSF", "ff", "ada-srsf", "bp", 1, True),
    ("LS + Ada-SRSF", "ls", "ada-srsf", "lwf32", 1, True),
    ("RAND + Ada-SRSF", "rand", "ada-srsf", "random", 1, True),
]

NUMPY_STAND_IN = '''# The two numpy calls the authors' simulator makes, for machines without numpy.
import random as _random
import statistics as _statistics


def mean(xs):
    return _statistics.fmean(list(xs))


class random:
    @staticmethod
    def uniform(lo, hi):
        return _random.uniform(lo, hi)
'''

REST_SIZE_PUBLISHED = """    def get_rest_size(self, time):
        self.transferred_size += (time - self.last_change_time) * self.speed
        return self.model_size - self.transferred_size"""
REST_SIZE_CORRECTED = """    def get_rest_size(self, time):
        return self.model_size - (self.transferred_size + (time - self.last_change_time) * self.speed)"""

# Runs one case in the authors' simulator; prints the average JCT in ms.
AUTHORS_DRIVER = """
import builtins, random, sys
code, jobs_dir, set_name, pick, thres, ada, seed = sys.argv[1:8]
sys.path.insert(0, code)
random.seed(int(seed))
builtins_print = builtins.print
builtins.print = lambda *a, **k: None  # the simulator prints every millisecond
import job_master
arrivals = [int(l.split(':')[1]) for f in __import__('glob').glob(jobs_dir + '/' + set_name + '/job_*.json')
            for l in open(f) if l.startswith('start_time:')]
job_master.ARRIVAL_MAX = max(arrivals) + 1
import os
os.chdir(jobs_dir + '/..')
s = job_master.job_scheduler(set_name)
s.schedule('ssf', pick, 'srsf', int(thres), ada == 'true')
jcts = [j.finish_time for slot in s.job_set for j in slot]
builtins.print = builtins_print
print(len(jcts), sum(jcts) / len(jcts))
"""


def fail(message):
    sys.exit(f"compare-dl-scheduling: {message}")


def read_authors_file(authors, name):
    checkout = pathlib.Path(authors) / "online" / name
    if checkout.is_file():
        return checkout.read_text()
    shown = subprocess.run(["git", "--git-dir", authors, "show", f"HEAD:online/{name}"], capture_output=True, text=True)
    if shown.returncode != 0:
        fail(f"--authors {authors}: expected a checkout or git directory of HKBU-HPML/dl-scheduling with online/{name}")
    return shown.stdout


def prepare_authors(authors, work):
    """Two converted copies of the authors' simulator: as published and corrected."""
    copies = {}
    for variant in ("published", "corrected"):
        code = work / f"authors-{variant}"
        code.mkdir()
        for name in AUTHORS_FILES:
            (code / name).write_text(read_authors_file(authors, name))
        converted = subprocess.run(
            [sys.executable, "-W", "ignore", "-m", "lib2to3", "-w", "-n", *AUTHORS_FILES],
            cwd=code,
            capture_output=True,
            text=True,
        )
        if converted.returncode != 0:
            fail("converting the authors' Python 2 code needs lib2to3 (Python 3.12 or older):\n" + converted.stderr)
        try:
            import numpy  # noqa: F401
        except ImportError:
            (code / "numpy.py").write_text(NUMPY_STAND_IN)
        if variant == "corrected":
            job = (code / "job.py").read_text()
            if REST_SIZE_PUBLISHED not in job:
                fail("the authors' job.py has changed: get_rest_size is not the published one")
            (code / "job.py").write_text(job.replace(REST_SIZE_PUBLISHED, REST_SIZE_CORRECTED))
        copies[variant] = code
    return copies


def models_by_name(sim):
    listed = subprocess.run([sim, "--list-models"], capture_output=True, text=True, check=True).stdout
    return {row["model"]: row for row in csv.DictReader(listed.splitlines())}


def generate_workload(sim, seed, jobs, work):
    folder = work / f"seed-{seed}"
    subprocess.run(
        [sim, "--generate", f"microsoft-{jobs}", "--iterations", "10-60", "--arrival-window-s", "12",
         "--seed", str(seed), "--csv", str(folder), "--json"],
        check=True,
        capture_output=True,
    )
    with open(folder / "jobs.csv") as f:
        rows = list(csv.DictReader(f))
    workload = folder / "workload.csv"
    with open(workload, "w") as f:
        f.write("name,model,gpus,iterations,arrival_s\n")
        for r in rows:
            f.write(f"{r['name']},{r['model']},{r['gpus']},{r['iterations']},{r['arrival_s']}\n")
    return rows, workload


def write_authors_jobs(rows, models, folder):
    """The same jobs in the authors' job-file format (YAML, one file a job)."""
    folder.mkdir(parents=True)
    for i, r in enumerate(rows):
        m = models[r["model"]]
        fields = {
            "job_id": i, "job_name": f"j{i}", "dnn": r["model"], "model_size": float(m["size_mb"]),
            "lr": 0.1, "dataset": "data", "data_dir": "data", "fw_time": int(round(float(m["forward_ms"]))),
            "bw_time": int(round(float(m["backward_ms"]))), "batch_size": int(m["batch"]),
            "train_mem": float(m["memory_mb"]), "nworkers": int(r["gpus"]), "nsteps_update": 1, "cuda_enabled": 1,
            "iters": int(r["iterations"]), "start_time": int(round(float(r["arrival_s"]) * 1000)),
        }
        (folder / f"job_{i}.json").write_text("".join(f"{k}: {v}\n" for k, v in fields.items()))


def run_authors(code, jobs_root, set_name, case, seed):
    _, _, _, pick, thres, ada = case
    out = subprocess.run(
        [sys.executable, "-c", AUTHORS_DRIVER, str(code), str(jobs_root), set_name, pick, str(thres),
         "true" if ada else "false", str(seed)],
        capture_output=True, text=True,
    )
    if out.returncode != 0:
        fail(f"the authors' simulator failed on {case[0]}:\n{out.stderr[-2000:]}")
    count, avg_ms = out.stdout.split()
    return float(avg_ms) / 1000


def run_fulcrum(sim, workload, case, seed, cluster):
    import json
    out = subprocess.run(
        [sim, "--workload", str(workload), "--cluster", str(cluster), "--placement", case[1], "--comm", case[2],
         "--seed", str(seed), "--json"],
        capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout)["avg_jct"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--authors", required=True, help="checkout or git directory of HKBU-HPML/dl-scheduling")
    parser.add_argument("--sim", default=str(ROOT / "build/ci/app/fulcrum-sim"), help="the fulcrum-sim to run")
    parser.add_argument("--cluster", default=str(ROOT / "resources/clusters/dl-scheduling.json"),
                        help="fulcrum-sim's cluster file (default: the authors' constants)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--jobs", type=int, default=160)
    parser.add_argument("--parallel", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    if not os.access(args.sim, os.X_OK):
        fail(f"--sim {args.sim}: not an executable fulcrum-sim (build it first: scripts/build.sh ci)")

    work = pathlib.Path(tempfile.mkdtemp(prefix="fulcrum-vs-dl-scheduling-"))
    try:
        copies = prepare_authors(args.authors, work)
        models = models_by_name(args.sim)
        results = {}  # (case label, seed) -> (published, corrected, fulcrum)
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.parallel) as pool:
            futures = {}
            for seed in args.seeds:
                rows, workload = generate_workload(args.sim, seed, args.jobs, work)
                set_name = f"seed-{seed}"
                write_authors_jobs(rows, models, work / "job_configs" / set_name)
                for case in CASES:
                    for variant, code in copies.items():
                        futures[pool.submit(run_authors, code, work / "job_configs", set_name, case, seed)] = (
                            case[0], seed, variant)
                    futures[pool.submit(run_fulcrum, args.sim, workload, case, seed, args.cluster)] = (
                        case[0], seed, "fulcrum")
            done = 0
            for future in concurrent.futures.as_completed(futures):
                label, seed, variant = futures[future]
                results.setdefault((label, seed), {})[variant] = future.result()
                done += 1
                print(f"\r{done}/{len(futures)} runs", end="", file=sys.stderr, flush=True)
            print(file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"Average JCT in seconds, {args.jobs} jobs (microsoft mix, 10-60 iterations, arrivals over 12 s), "
          f"seeds {' / '.join(map(str, args.seeds))}; fulcrum-sim --cluster {os.path.relpath(args.cluster, ROOT)}\n")
    print("| case | authors' simulator, published | authors' simulator, corrected | fulcrum-sim "
          "| fulcrum-sim against corrected (mean) |")
    print("| --- | --- | --- | --- | --- |")
    means = {}
    for case in CASES:
        cells = {v: [results[(case[0], s)][v] for s in args.seeds] for v in ("published", "corrected", "fulcrum")}
        means[case[0]] = {v: sum(x) / len(x) for v, x in cells.items()}
        gap = means[case[0]]["fulcrum"] / means[case[0]]["corrected"] - 1
        row = " | ".join(" / ".join(f"{x:.2f}" for x in cells[v]) for v in ("published", "corrected", "fulcrum"))
        print(f"| {case[0]} | {row} | {100 * gap:+.1f} % |")
    print()
    for variant in ("published", "corrected", "fulcrum"):
        order = sorted(means, key=lambda label: means[label][variant])
        print(f"order ({variant}): " + " < ".join(order))


if __name__ == "__main__":
    main()
