#!/usr/bin/env python3
"""fulcrum_torch with real torch.distributed (gloo) ranks, and a real fulcrumd on loopback.

Run by ctest (label torch) with FULCRUMD_BINARY set; each case starts what it needs.
"""

import functools
import importlib.util
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.parallel import DistributedDataParallel  # noqa: E402

import fulcrum_torch  # noqa: E402

# Batch sizes of three steps of three ranks: unequal, one rank excluded (0), one tiny.
STEPS = [[10, 30, 24], [40, 0, 24], [5, 5, 54]]


def data(seed=3, n=256, dim=12, classes=4):
    g = torch.Generator()
    g.manual_seed(seed)
    return torch.randn(n, dim, generator=g), torch.randint(0, classes, (n,), generator=g)


def model_of(seed=5, batch_norm=False):
    torch.manual_seed(seed)
    if batch_norm:
        return torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.BatchNorm1d(16), torch.nn.ReLU(),
                                   torch.nn.Linear(16, 4)).double()
    return torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)).double()


def free_port():
    """A port free on every address: torch.distributed's store binds the wildcard address."""
    import socket
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def eq7_rank(rank, world, init, out):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    x, y = data()
    x = x.double()
    model = model_of()
    ddp = DistributedDataParallel(model)
    state = fulcrum_torch.WeightedAllReduce()
    ddp.register_comm_hook(state, fulcrum_torch.weighted_allreduce_hook)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
    slicer = fulcrum_torch.GlobalBatchSlicer(len(x), seed=7)
    for sizes in STEPS:
        idx = slicer.next_slice(sizes, rank)
        if sizes[rank] == 0:
            idx = torch.zeros(1, dtype=torch.long)
        state.start_iteration(sizes[rank], sum(sizes))
        optimizer.zero_grad()
        F.cross_entropy(ddp(x[idx]), y[idx]).backward()
        optimizer.step()
    if rank == 0:
        torch.save([p.detach() for p in model.parameters()], out)
    dist.barrier()
    dist.destroy_process_group()
    end_rank(0)


def end_rank(status):
    """torch 1.13's gloo process group can deadlock when a DDP whose comm hook is a Python
    callback is destroyed (a gloo thread waits for the GIL the destructor holds): ranks end
    with os._exit once their results are written, as the example does."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def slow_evaluation(seconds, model):
    """A validation pass that takes `seconds` (longer than the job's rank timeout)."""
    time.sleep(seconds)
    return 0.5, 1.0


def fulcrum_rank(rank, server, token, scenario, log_path, die_at, stop_at=None, eval_s=None, batch_norm=False,
                 hang_at=None):
    """One rank of an external job: trains a small MLP, logging every plan it gets (and,
    with `batch_norm`, its BatchNorm's running statistics as they are before the iteration)."""
    torch.set_num_threads(1)
    # The process group gives up on a peer after the job's rank timeout plus its worker
    # timeout, so the ranks left are not held in an all-reduce for gloo's default 30 minutes.
    timeout = fulcrum_torch.process_group_timeout(scenario)
    dist.init_process_group("gloo", init_method=scenario.pop("_init"), rank=rank, world_size=3, timeout=timeout)
    x, y = data(n=2000)
    model = model_of(batch_norm=batch_norm).float()
    log = open(log_path, "w", encoding="utf-8")

    def on_iteration(k, plan):
        entry = {"iteration": k, "batch_sizes": plan["batch_sizes"]}
        if batch_norm:
            norm = model[1]
            entry["running"] = norm.running_mean.tolist() + norm.running_var.tolist()
            entry["tracked"] = int(norm.num_batches_tracked)
        log.write(json.dumps(entry) + "\n")
        log.flush()
        if die_at is not None and k == die_at:
            os.kill(os.getpid(), signal.SIGKILL)  # as an OOM killer or a lost node would
        if stop_at is not None and k == stop_at:
            os.kill(os.getpid(), signal.SIGSTOP)  # a hung process: alive, silent
        while hang_at is not None and k == hang_at:
            time.sleep(1)  # hung in its own Python code: the client's heartbeat thread goes on

    with fulcrum_torch.FulcrumClient(server, token) as client:
        job = fulcrum_torch.ExternalJob(client, rank, scenario=scenario)
        try:
            evaluate = functools.partial(slow_evaluation, eval_s) if eval_s is not None else None
            result = fulcrum_torch.train(model, x.float(), y, job=job, rank=rank, lr=0.05,
                                         on_iteration=on_iteration, evaluate=evaluate, eval_interval=10)
            log.write(json.dumps({"end": result.state, "message": result.message}) + "\n")
        except fulcrum_torch.FulcrumError as e:  # the all-reduce failed and fulcrumd said why
            log.write(json.dumps({"end": "fulcrum-error", "code": e.code, "message": e.message}) + "\n")
        except RuntimeError as e:  # the all-reduce's peer died with the lost rank
            log.write(json.dumps({"end": "error", "message": str(e)}) + "\n")
    log.close()
    end_rank(0)


def own_loop_rank(rank, server, token, scenario, log_path):
    """One rank of an external job running a loop of its own through job.steps: momentum
    SGD with a step LR schedule, gradient clipping and bfloat16 autocast on the CPU, and an
    evaluation inside a step."""
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=scenario.pop("_init"), rank=rank, world_size=3,
                            timeout=fulcrum_torch.process_group_timeout(scenario))
    x, y = data(n=2000)
    x = x.float()
    model = model_of(batch_norm=True).float()
    log = open(log_path, "w", encoding="utf-8")
    with fulcrum_torch.FulcrumClient(server, token) as client:
        job = fulcrum_torch.ExternalJob(client, rank, scenario=scenario)
        ddp = job.distribute(model)
        optimizer = torch.optim.SGD(ddp.parameters(), lr=0.2, momentum=0.9)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
        for step in job.steps(len(x), seed=3):
            with step:
                optimizer.zero_grad(set_to_none=True)
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    loss = F.cross_entropy(ddp(x[step.indices]), y[step.indices])
                loss.backward()
                torch.nn.utils.clip_grad_norm_(ddp.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                step.loss = loss
                if rank == 0 and step.iteration == 9:
                    with step.evaluation():
                        model.eval()
                        with torch.no_grad():
                            correct = (model(x).argmax(1) == y).float().mean().item()
                        model.train()
                    step.measured["test_accuracy"], step.measured["test_loss"] = correct, 0.0
            log.write(json.dumps({"iteration": step.iteration, "batch_sizes": step.sizes,
                                  "compute_s": step.compute_s, "sync_s": step.sync_s,
                                  "lr": optimizer.param_groups[0]["lr"]}) + "\n")
        log.write(json.dumps({"end": job.plan["state"]}) + "\n")
    log.close()
    end_rank(0)


def loader_rank(rank, server, token, scenario, log_path):
    """One rank feeding its steps from a DataLoader with two worker processes that prefetch
    (num_workers 2 x prefetch_factor 2: the job plans 4 iterations ahead). Its model has
    BatchNorm: the job's least batch of 2 keeps LB-BSP from sizing a rank to one sample."""
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=scenario.pop("_init"), rank=rank, world_size=3,
                            timeout=fulcrum_torch.process_group_timeout(scenario))
    x, y = data(n=2000)
    dataset = torch.utils.data.TensorDataset(x.float(), y)
    model = model_of(batch_norm=True).float()
    log = open(log_path, "w", encoding="utf-8")
    with fulcrum_torch.FulcrumClient(server, token) as client:
        job = fulcrum_torch.ExternalJob(client, rank, scenario=scenario)
        ddp = job.distribute(model)
        optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
        sampler = fulcrum_torch.FulcrumBatchSampler(job, len(dataset), seed=3)
        loader = torch.utils.data.DataLoader(dataset, batch_sampler=sampler, num_workers=2, prefetch_factor=2)
        batches = iter(loader)
        for step, (xb, yb) in zip(job.steps(sampler=sampler), batches):
            with step:
                optimizer.zero_grad(set_to_none=True)
                loss = F.cross_entropy(ddp(xb), yb)
                loss.backward()
                optimizer.step()
                step.loss = loss
            log.write(json.dumps({"iteration": step.iteration, "batch_sizes": step.sizes, "loaded": len(xb),
                                  "same": bool(torch.equal(xb, x.float()[step.indices]))}) + "\n")
        del batches  # its worker processes end before the rank does
        log.write(json.dumps({"end": job.plan["state"]}) + "\n")
    log.close()
    end_rank(0)


class Fulcrumd:
    """A real fulcrumd on loopback with its own data folder."""

    def __init__(self, folder):
        binary = os.environ.get("FULCRUMD_BINARY")
        if not binary:
            raise unittest.SkipTest("FULCRUMD_BINARY is not set (ctest sets it)")
        self.folder = folder
        self.log = open(os.path.join(folder, "fulcrumd.log"), "w")
        self.process = subprocess.Popen([binary, "--data-dir", folder, "--listen", "127.0.0.1:0", "--no-demo"],
                                        stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(200):
            with open(os.path.join(folder, "fulcrumd.log")) as f:
                text = f.read()
            if "serving ws://127.0.0.1:" in text:
                port = text.split("serving ws://127.0.0.1:")[1].split()[0].strip(" .,)")
                self.server = f"ws://127.0.0.1:{int(''.join(c for c in port if c.isdigit()))}"
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("fulcrumd did not announce its port:\n" + text)
        self.token = fulcrum_torch.read_token_file(os.path.join(folder, "tokens"), "operator")

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(30)
        self.log.close()


class FulcrumTorch(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="fulcrum-torch-")

    def tearDown(self):
        subprocess.run(["rm", "-rf", self.dir], check=False)

    def run_resnet18_example(self, launcher):
        """The ResNet-18 example for 3 iterations of X = 32 on 2 ranks under fulcrumd, its
        test accuracy on 200 images; `launcher` runs the example's command line."""
        if importlib.util.find_spec("torchvision") is None:
            self.skipTest("python3-torchvision is not installed (install-deps.sh --test-tools)")
        example = os.path.join(ROOT, "clients", "python", "examples", "resnet18_fashion_mnist.py")
        daemon = Fulcrumd(self.dir)
        try:
            figures = os.path.join(self.dir, "resnet18.json")
            command = [example, "--server", daemon.server, "--token-file", os.path.join(self.dir, "tokens"),
                       "--iterations", "3", "--total-batch", "32", "--test-samples", "200", "--progress", "0",
                       "--cache", os.path.join(self.dir, "cache"), "--json-out", figures]
            done = subprocess.run(launcher + command, capture_output=True, text=True, timeout=300)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            with open(figures, encoding="utf-8") as f:
                result = json.load(f)
        finally:
            daemon.stop()
        self.assertEqual(result["state"], "finished")
        self.assertGreaterEqual(result["test_accuracy"], 0.0)
        store = sqlite3.connect(os.path.join(self.dir, "runs", f"job-{result['job']}.db"))
        rows = store.execute("SELECT iteration, worker_id, batch_size FROM iterations ORDER BY iteration, worker_id")
        rows = rows.fetchall()
        self.assertEqual([(k, w) for k, w, _ in rows], [(k, w) for k in range(3) for w in range(2)])
        self.assertTrue(all(x >= 2 for _, _, x in rows), "the example's least batch is 2 (BatchNorm)")
        self.assertEqual(sum(x for k, _, x in rows if k == 2), 32)

    def test_the_resnet18_example_trains_under_fulcrumd_spawning_its_ranks(self):
        self.run_resnet18_example([sys.executable])

    def test_the_resnet18_example_trains_under_fulcrumd_started_by_torchrun(self):
        # Debian 12's torchrun needs --redirects and --tee given for a rank that does not
        # exist on Python 3.11 (clients/python/README.md).
        self.run_resnet18_example([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
                                   "--master_port", str(free_port()), "--redirects", "9:0", "--tee", "9:0"])

    def test_a_torchrun_restart_goes_on_in_the_same_job_from_its_checkpoint(self):
        """Issue 43 item 4 with a real torchrun --max_restarts 1: rank 1 is killed at
        iteration 12 of the first attempt; the restarted group rejoins the same job and goes on
        from the checkpoint after iteration 9, each attempt a run of the job's store."""
        daemon = Fulcrumd(self.dir)
        try:
            out = os.path.join(self.dir, "restart.json")
            script = os.path.join(HERE, "restart_rank.py")
            command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--max_restarts", "1",
                       "--master_port", str(free_port()), "--redirects", "9:0", "--tee", "9:0", script,
                       daemon.server, os.path.join(self.dir, "tokens"), os.path.join(self.dir, "state"), out]
            done = subprocess.run(command, capture_output=True, text=True, timeout=300)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            with open(out, encoding="utf-8") as f:
                seen = json.load(f)
            with fulcrum_torch.FulcrumClient(daemon.server, daemon.token) as client:
                jobs = client.jobs()
        finally:
            daemon.stop()
        self.assertEqual(seen["attempt"], 1, "written by the restarted group")
        self.assertEqual((seen["resumed_from"], seen["first"], seen["state"]), (10, 10, "finished"))
        self.assertEqual([j["job"] for j in jobs], [seen["job"]], "one job, kept across the restart")
        store = sqlite3.connect(os.path.join(self.dir, "runs", f"job-{seen['job']}.db"))
        runs = store.execute("SELECT id, status FROM runs ORDER BY id").fetchall()
        self.assertEqual([status for _, status in runs], ["lost", "finished"])
        second = store.execute("SELECT MIN(iteration), MAX(iteration), COUNT(*) FROM iterations WHERE run_id = ?",
                               (runs[1][0],)).fetchone()
        self.assertEqual(second, (10, 29, 40), "iterations 10 to 29 of two ranks")
        kinds = [k for (k,) in store.execute("SELECT kind FROM events WHERE run_id = ? ORDER BY id", (runs[1][0],))]
        self.assertEqual(kinds[0], "job-restarted")

    def test_the_server_is_named_in_every_form_every_fulcrum_program_takes(self):
        """Issue 45 item 3: ws://HOST:PORT, HOST:PORT and $FULCRUM_SERVER reach the same real
        fulcrumd; anything else is refused before a connection, naming the forms."""
        daemon = Fulcrumd(self.dir)
        try:
            plain = daemon.server[len("ws://"):]
            for form in (daemon.server, plain, daemon.server + "/"):
                with fulcrum_torch.FulcrumClient(form, daemon.token) as client:
                    self.assertEqual(client.server, daemon.server, form)
                    self.assertEqual(client.jobs(), [])
            os.environ["FULCRUM_SERVER"] = plain
            try:
                with fulcrum_torch.FulcrumClient(None, daemon.token) as client:
                    self.assertEqual(client.server, daemon.server, "from $FULCRUM_SERVER")
            finally:
                del os.environ["FULCRUM_SERVER"]
            with self.assertRaisesRegex(ValueError, r"expected ws://HOST:PORT, wss://HOST:PORT \(TLS\) or HOST:PORT"):
                fulcrum_torch.FulcrumClient("http://" + plain, daemon.token)
        finally:
            daemon.stop()
        self.assertEqual(fulcrum_torch.server_url("[::1]"), "ws://[::1]:7480")
        for bad in ("a]b:1", "[a[b]:1", "head :1", "::1:7480"):  # as the C++ parser refuses them
            with self.assertRaises(ValueError):
                fulcrum_torch.server_url(bad)
        self.assertEqual(fulcrum_torch.server_url("wss://head:7481/"), "wss://head:7481")

    def test_a_batch_sampler_asked_past_the_plan_says_how_far_to_plan_ahead(self):
        class Job:  # a plan of iteration 3 with 2 iterations ahead, as fulcrumd sends it
            rank, iterations = 1, 100
            plan = {"state": "train", "iteration": 3, "batch_sizes": [5, 0, 7], "ahead": [[4, 4, 4], [6, 6, 0]]}
            planned_sizes = fulcrum_torch.ExternalJob.planned_sizes

        sampler = fulcrum_torch.FulcrumBatchSampler(Job(), 50, seed=2)
        batches = iter(sampler)
        self.assertEqual(len(next(batches)), fulcrum_torch.EXCLUDED_SAMPLES, "excluded at iteration 3")
        self.assertEqual(len(next(batches)), 4)
        self.assertEqual(len(next(batches)), 6)
        with self.assertRaises(RuntimeError) as asked:
            next(batches)
        self.assertIn("planned up to iteration 5", str(asked.exception))
        self.assertIn("external.plan_ahead (now 2)", str(asked.exception))
        slicer = fulcrum_torch.GlobalBatchSlicer(50, seed=2)
        for sizes in ([5, 0, 7], [4, 4, 4]):
            expected = slicer.next_slice(sizes, 1)
        self.assertTrue(torch.equal(sampler.indices_of(4), expected), "the same draws as a slicer's")

    def test_eq7_through_the_hook_is_one_process_on_the_union_batch(self):
        out = os.path.join(self.dir, "params.pt")
        mp.spawn(eq7_rank, args=(3, f"tcp://127.0.0.1:{free_port()}", out), nprocs=3, join=True)
        distributed = torch.load(out)
        x, y = data()
        x = x.double()
        model = model_of()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        slicer = fulcrum_torch.GlobalBatchSlicer(len(x), seed=7)
        for sizes in STEPS:
            idx = slicer.next_global(sum(sizes))  # the union of the ranks' slices
            optimizer.zero_grad()
            F.cross_entropy(model(x[idx]), y[idx]).backward()
            optimizer.step()
        moved = max(float((p - q).abs().max()) for p, q in zip(model.parameters(), model_of().parameters()))
        self.assertGreater(moved, 1e-3, "the steps changed the parameters")
        for mine, theirs in zip(distributed, model.parameters()):
            self.assertLess(float((mine - theirs.detach()).abs().max()), 1e-5)

    def start_ranks(self, daemon, iterations, die_at=None, stop_at=None, worker_timeout_s=None, rank_timeout_s=60,
                    eval_s=None, batch_norm=False, hang_at=None):
        scenario = fulcrum_torch.external_scenario("torch-test", 3, 120, iterations, policy={"type": "uniform"},
                                                   rank_timeout_s=rank_timeout_s, worker_timeout_s=worker_timeout_s)
        scenario["_init"] = f"tcp://127.0.0.1:{free_port()}"
        context = mp.get_context("spawn")
        ranks = []
        for rank in range(3):
            ranks.append(context.Process(target=fulcrum_rank, args=(
                rank, daemon.server, daemon.token, dict(scenario), os.path.join(self.dir, f"rank{rank}.log"),
                die_at if rank == 1 else None, stop_at if rank == 1 else None, eval_s, batch_norm,
                hang_at if rank == 1 else None)))
            ranks[-1].start()
        return ranks

    def finished_steps(self, rank, iterations):
        """Rank `rank`'s logged steps, after checking that it ran all of them and finished."""
        log = self.read_log(rank)
        self.assertEqual(log[-1]["end"], "finished", f"rank {rank}")
        steps = log[:-1]
        self.assertEqual([s["iteration"] for s in steps], list(range(iterations)))
        return steps

    def read_log(self, rank):
        with open(os.path.join(self.dir, f"rank{rank}.log"), encoding="utf-8") as f:
            return [json.loads(line) for line in f]

    def test_pin_and_exclusion_reach_the_ranks_at_the_next_iteration(self):
        daemon = Fulcrumd(self.dir)
        try:
            ranks = self.start_ranks(daemon, 400)
            with fulcrum_torch.FulcrumClient(daemon.server, daemon.token) as op:
                deadline = time.time() + 120
                while time.time() < deadline:
                    jobs = op.jobs()
                    if jobs and jobs[0]["iteration"] >= 5:
                        break
                    time.sleep(0.05)
                job = jobs[0]["job"]
                op.pause(job)
                while op.job(job)["state"] != "paused" and time.time() < deadline:
                    time.sleep(0.05)
                op.pin(job, 0, 70)
                op.exclude(job, 2)
                with self.assertRaises(fulcrum_torch.FulcrumError) as refused:
                    op.pin(job, 1, 50)  # the one rank left to take the rest of X
                self.assertIn("no unpinned worker", refused.exception.message)
                op.resume(job)
            for p in ranks:
                p.join(180)
                self.assertEqual(p.exitcode, 0)
        finally:
            daemon.stop()
        store = sqlite3.connect(os.path.join(self.dir, "runs", f"job-{job}.db"))
        paused_before = store.execute("SELECT iteration FROM events WHERE kind = 'job-paused'").fetchone()[0]
        rows = store.execute("SELECT COUNT(*) FROM iterations").fetchone()[0]
        self.assertEqual(rows, 400 * 3)
        for rank in range(3):
            plans = {e["iteration"]: e["batch_sizes"] for e in self.read_log(rank) if "iteration" in e}
            self.assertEqual(plans[paused_before - 1], [40, 40, 40])
            self.assertEqual(plans[paused_before], [70, 50, 0], f"rank {rank}: the plan right after the pause")
            self.assertEqual(plans[399], [70, 50, 0])
            self.assertEqual(self.read_log(rank)[-1]["end"], "finished")

    def spawn_ranks(self, target, daemon, scenario):
        """Three ranks running `target(rank, server, token, scenario, log_path)`."""
        scenario["_init"] = f"tcp://127.0.0.1:{free_port()}"
        context = mp.get_context("spawn")
        ranks = [context.Process(target=target, args=(
            rank, daemon.server, daemon.token, dict(scenario), os.path.join(self.dir, f"rank{rank}.log")))
            for rank in range(3)]
        for p in ranks:
            p.start()
        return ranks

    def join_ranks(self, ranks):
        for p in ranks:
            p.join(180)
            self.assertEqual(p.exitcode, 0)

    def exclude_for_a_while(self, daemon, rank, start, end):
        """An operator excludes `rank` once the job reaches iteration `start`, and includes it
        again at `end`."""
        with fulcrum_torch.FulcrumClient(daemon.server, daemon.token) as op:
            deadline = time.time() + 120
            job = self.wait_for_iteration(op, start, deadline)
            op.exclude(job, rank)
            self.wait_for_iteration(op, end, deadline)
            op.include(job, rank)

    def wait_for_iteration(self, op, iteration, deadline):
        while time.time() < deadline:
            jobs = op.jobs()
            if jobs and jobs[0]["iteration"] >= iteration:
                return jobs[0]["job"]
            time.sleep(0.05)
        self.fail(f"the job never reached iteration {iteration}")

    def test_an_excluded_rank_trains_a_batch_norm_model_without_moving_its_statistics(self):
        # Rank 0 (whose buffers DDP broadcasts to the others at every forward) is excluded
        # for a while. It still runs DDP's forward and backward, on two samples weighted 0:
        # BatchNorm1d would refuse one, and its running statistics must not move.
        daemon = Fulcrumd(self.dir)
        try:
            ranks = self.start_ranks(daemon, 60, batch_norm=True)
            self.exclude_for_a_while(daemon, 0, 5, 25)
            self.join_ranks(ranks)
        finally:
            daemon.stop()
        for rank in range(3):
            self.assertEqual(self.read_log(rank)[-1]["end"], "finished", f"rank {rank}")
        plans = [e for e in self.read_log(0) if "iteration" in e]
        excluded = [e["iteration"] for e in plans if e["batch_sizes"][0] == 0]
        self.assertGreaterEqual(len(excluded), 5, "rank 0 sat out several iterations")
        self.assertLess(excluded[-1], 59, "and was included again")
        by_iteration = {e["iteration"]: e for e in plans}
        for k in excluded:
            before, after = by_iteration[k], by_iteration[k + 1]
            self.assertEqual(before["running"], after["running"], f"iteration {k}: the statistics held")
            self.assertEqual(before["tracked"], after["tracked"])
        trained = [k for k in by_iteration if k + 1 in by_iteration and k not in excluded]
        moved = [k for k in trained if by_iteration[k]["running"] != by_iteration[k + 1]["running"]]
        self.assertEqual(moved, trained, "a rank that trains moves them")

    def test_a_loop_of_its_own_trains_through_the_steps_with_a_schedule_clipping_and_autocast(self):
        daemon = Fulcrumd(self.dir)
        try:
            # Its model has BatchNorm: the least batch of 2 keeps LB-BSP from sizing a rank to one sample.
            scenario = fulcrum_torch.external_scenario("own-loop", 3, 120, 30, policy={"type": "lbbsp-cpu"},
                                                       min_batch=2)
            self.join_ranks(self.spawn_ranks(own_loop_rank, daemon, scenario))
        finally:
            daemon.stop()
        for rank in range(3):
            steps = self.finished_steps(rank, 30)
            self.assertEqual(steps[-1]["lr"], 0.2 * 0.5 ** 3, "the schedule stepped every iteration")
            self.assertTrue(all(s["compute_s"] > 0 and s["sync_s"] >= 0 for s in steps))
        stores = [f for f in os.listdir(os.path.join(self.dir, "runs")) if f.endswith(".db")]
        self.assertEqual(len(stores), 1)
        store = sqlite3.connect(os.path.join(self.dir, "runs", stores[0]))
        self.assertEqual(store.execute("SELECT COUNT(*) FROM iterations").fetchone()[0], 30 * 3)
        first, last = (store.execute("SELECT AVG(loss) FROM iterations WHERE iteration " + where).fetchone()[0]
                       for where in ("< 5", ">= 25"))
        self.assertLess(last, first, "it learned")
        self.assertEqual(store.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0], 1)
        # fulcrumd's LB-BSP sized the ranks from what the steps reported.
        sizes = store.execute("SELECT batch_size FROM iterations WHERE iteration = 29").fetchall()
        self.assertEqual(sum(s[0] for s in sizes), 120)

    def test_a_prefetching_data_loader_gets_the_planned_batches_ahead(self):
        daemon = Fulcrumd(self.dir)
        try:
            scenario = fulcrum_torch.external_scenario("loader", 3, 120, 40, policy={"type": "lbbsp-cpu"},
                                                       plan_ahead=4, min_batch=2)
            ranks = self.spawn_ranks(loader_rank, daemon, scenario)
            self.exclude_for_a_while(daemon, 2, 5, 20)
            self.join_ranks(ranks)
        finally:
            daemon.stop()
        for rank in range(3):
            for s in self.finished_steps(rank, 40):
                planned = s["batch_sizes"][rank]
                self.assertEqual(s["loaded"], planned or 2, f"rank {rank}, iteration {s['iteration']}")
                self.assertNotEqual(planned, 1, "the job's least batch is 2")
                self.assertTrue(s["same"], "the step's indices are the batch the loader loaded")
        excluded = [s["iteration"] for s in self.read_log(2)[:-1] if s["batch_sizes"][2] == 0]
        self.assertGreaterEqual(len(excluded), 3, "rank 2 sat out, 4 iterations after the command at the latest")

    def test_an_evaluation_longer_than_the_rank_timeout_does_not_lose_the_job(self):
        # Rank 0 evaluates for 12 s after iterations 9 and 19 before it reports; the others
        # report at once, which starts the 8 s rank timeout. train() announces the evaluation.
        daemon = Fulcrumd(self.dir)
        try:
            ranks = self.start_ranks(daemon, 20, rank_timeout_s=8, eval_s=12)
            for p in ranks:
                p.join(180)
                self.assertEqual(p.exitcode, 0)
            with fulcrum_torch.FulcrumClient(daemon.server, daemon.token) as op:
                deadline = time.time() + 30  # the ranks have their last plan before the job's end is recorded
                while op.jobs()[0]["state"] == "running" and time.time() < deadline:
                    time.sleep(0.05)
                status = op.jobs()[0]
        finally:
            daemon.stop()
        self.assertEqual(status["state"], "finished", status.get("message"))
        for rank in range(3):
            self.assertEqual(self.read_log(rank)[-1]["end"], "finished")
        store = sqlite3.connect(os.path.join(self.dir, "runs", f"job-{status['job']}.db"))
        self.assertEqual(store.execute("SELECT COUNT(*) FROM iterations").fetchone()[0], 20 * 3)
        self.assertEqual(store.execute("SELECT COUNT(*) FROM events WHERE kind = 'worker-lost'").fetchone()[0], 0)
        waited = store.execute("SELECT MAX(wait_s) FROM iterations WHERE iteration IN (9, 19)").fetchone()[0]
        self.assertGreater(waited, 10.0, "the other ranks waited for the evaluation at the barrier")
        self.assertEqual(store.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0], 2)

    def test_a_killed_rank_is_reported_and_the_others_are_not_left_hanging(self):
        daemon = Fulcrumd(self.dir)
        try:
            ranks = self.start_ranks(daemon, 100000, die_at=8)
            started = time.time()
            for p in ranks:
                p.join(120)
                self.assertIsNotNone(p.exitcode, "a rank still hangs two minutes after its peer died")
            self.assertLess(time.time() - started, 120)
            self.assertEqual(ranks[1].exitcode, -signal.SIGKILL)
            with fulcrum_torch.FulcrumClient(daemon.server, daemon.token) as op:
                deadline = time.time() + 30
                while op.jobs()[0]["state"] != "lost" and time.time() < deadline:
                    time.sleep(0.1)
                status = op.jobs()[0]
            self.assertEqual(status["state"], "lost")
            self.assertIn("rank 1 (rank-1)", status["message"])
        finally:
            daemon.stop()
        for rank in (0, 2):  # their all-reduce raised, and fulcrumd said why
            end = self.read_log(rank)[-1]
            self.assertEqual(end["end"], "fulcrum-error", end)
            self.assertEqual(end["code"], "job-lost", end)
            self.assertIn("rank 1 (rank-1)", end["message"])
        store = sqlite3.connect(os.path.join(self.dir, "runs", f"job-{status['job']}.db"))
        self.assertEqual(store.execute("SELECT status FROM runs").fetchone()[0], "lost")
        self.assertGreaterEqual(store.execute("SELECT COUNT(*) FROM iterations").fetchone()[0], 8 * 3)
        lost = store.execute("SELECT worker_id FROM events WHERE kind = 'worker-lost'").fetchall()
        self.assertEqual(lost, [(1,)])

    def test_a_stopped_rank_is_lost_after_the_worker_timeout_and_its_peers_released(self):
        # SIGSTOP: the rank's process, its heartbeat thread included, is silent; its peers
        # wait in the all-reduce, so no rank reports. The operator excludes it at once: the
        # exclusion is taken, but it cannot release an all-reduce that waits for the rank
        # (issue 42's external case), so fulcrumd loses it after the job's worker timeout (3 s)
        # as without one, and the peers' process group gives up after its timeout
        # (process_group_timeout: 60 s here, its floor), then learns from fulcrumd why. A
        # lost rank's job goes on only by a restart of its group (torchrun --max_restarts).
        lost_after = self.lose_rank_1("silent for 3 s", stop_at=8, worker_timeout_s=3, exclude_when_stopped=True)
        self.assertGreater(lost_after, 1.9, "not lost before its last heartbeat was 3 s old")
        self.assertLess(lost_after, 3 + 5, "lost within the worker timeout of the stop, with slack")

    def test_a_rank_hung_in_its_own_code_is_stalled_then_lost_and_its_peers_released(self):
        # Rank 1 hangs in Python at iteration 8 (a sleep that never ends): its process and
        # its client's heartbeat thread live on, so it is not silent. Its peers say they wait
        # in the all-reduce, so it is reported stalled past the 2 s floor, and lost once the
        # job's rank timeout (4 s) has run from its plan; their process group gives up after
        # its timeout (60 s, its floor) and learns from fulcrumd why.
        lost_after = self.lose_rank_1("did not report iteration 8 within 4 s of its plan", hang_at=8, rank_timeout_s=4)
        self.assertLess(lost_after, 4 + 5, "lost within the rank timeout of the hang, with slack")
        store = sqlite3.connect(os.path.join(self.dir, "runs", f"job-{self.lost_job}.db"))
        stalled = store.execute("SELECT worker_id, iteration, message FROM events WHERE kind = 'worker-stalled'")
        stalled = stalled.fetchall()
        self.assertEqual([(w, k) for w, k, _ in stalled], [(1, 8)], "reported stalled before it was lost")
        self.assertIn("predicted", stalled[0][2])

    def lose_rank_1(self, why, exclude_when_stopped=False, **start):
        """Three ranks, rank 1 stopped or hung at iteration 8 (`start`: start_ranks's
        arguments; `exclude_when_stopped`: an operator then excludes it): the job is lost naming
        rank 1 and `why`, the other ranks are released with fulcrumd's reason, and the store
        says so. The seconds from rank 1's plan of iteration 8 to the job's loss."""
        daemon = Fulcrumd(self.dir)
        ranks = []
        try:
            ranks = self.start_ranks(daemon, 100000, **start)
            deadline = time.time() + 60
            stopped = self.when_rank_1_reaches(8, deadline)  # it logs the plan, then stops or hangs
            if exclude_when_stopped:
                with fulcrum_torch.FulcrumClient(daemon.server, daemon.token) as op:
                    op.exclude(op.jobs()[0]["job"], 1)  # taken: refused would raise FulcrumError
            status, lost_after = self.when_lost(daemon, stopped, deadline)
            self.assertEqual(status["state"], "lost", status.get("message"))
            self.assertIn("rank 1 (rank-1)", status["message"])
            self.assertIn(why, status["message"])
            for rank in (0, 2):
                ranks[rank].join(120)
                self.assertIsNotNone(ranks[rank].exitcode, f"rank {rank} still hangs after its peer was lost")
        finally:
            for p in ranks:
                if p.exitcode is None:
                    p.kill()  # rank 1: SIGKILL ends a stopped process too
                    p.join(10)
            daemon.stop()
        self.lost_job = status["job"]
        self.assert_peers_released_and_rank_1_lost(status["job"], why)
        return lost_after

    def when_rank_1_reaches(self, iteration, deadline):
        """The time rank 1 logged the plan of `iteration` (it then stops or hangs)."""
        while time.time() < deadline:
            if os.path.exists(os.path.join(self.dir, "rank1.log")) \
                    and any(line.get("iteration") == iteration for line in self.read_log(1)):
                return time.time()
            time.sleep(0.02)
        self.fail(f"rank 1 never reached iteration {iteration}")

    def when_lost(self, daemon, since, deadline):
        """The job's status once fulcrumd has it lost, and the seconds from `since` to then."""
        with fulcrum_torch.FulcrumClient(daemon.server, daemon.token) as op:
            while op.jobs()[0]["state"] != "lost" and time.time() < deadline:
                time.sleep(0.05)
            return op.jobs()[0], time.time() - since

    def assert_peers_released_and_rank_1_lost(self, job, why):
        for rank in (0, 2):  # their all-reduce raised, and fulcrumd said why
            end = self.read_log(rank)[-1]
            self.assertEqual(end["end"], "fulcrum-error", end)
            self.assertEqual(end["code"], "job-lost", end)
            self.assertIn("rank 1 (rank-1)", end["message"])
        store = sqlite3.connect(os.path.join(self.dir, "runs", f"job-{job}.db"))
        self.assertEqual(store.execute("SELECT status FROM runs").fetchone()[0], "lost")
        lost = store.execute("SELECT worker_id, message FROM events WHERE kind = 'worker-lost'").fetchall()
        self.assertEqual([w for w, _ in lost], [1])
        self.assertIn(why, lost[0][1])


if __name__ == "__main__":
    unittest.main(verbosity=2)
