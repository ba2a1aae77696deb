"""The training loop of one rank under fulcrumd: its batch from the plan, eq. 7 through
the DDP hook, the report after each iteration."""

import contextlib
import datetime
import os
import socket
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

from .client import FulcrumClient, FulcrumError
from .hooks import WeightedAllReduce, weighted_allreduce_hook
from .sampler import FulcrumBatchSampler
from .state_folder import StateFolder
from .steps import RankTimer, Step, iterate_steps, memory_share


def external_scenario(name: str, ranks: int, total_batch: int, iterations: int,
                      policy: Optional[Dict[str, Any]] = None, eval_interval: int = 100,
                      rank_timeout_s: float = 120, framework: str = "pytorch",
                      worker_timeout_s: Optional[float] = None,
                      evaluation_timeout_s: Optional[float] = None, plan_ahead: int = 0,
                      min_batch: int = 1, samples_per_epoch: Optional[int] = None,
                      max_restarts: int = 0) -> Dict[str, Any]:
    """The scenario fulcrumd runs an external job from (docs/scenarios.md, "external").

    A rank whose process sends nothing, not even the client's heartbeat, for
    `worker_timeout_s` (fulcrumd's --worker-timeout when None, 10 s by default) while fulcrumd
    waits for its report is lost, and so is the job. A rank that has not reported
    `rank_timeout_s` after fulcrumd sent it its plan is lost too, unless it
    announced an evaluation (`ExternalJob.evaluating()`, which `train` uses): then the time
    runs from the evaluation's end, and the evaluation itself may last
    `evaluation_timeout_s`. `plan_ahead`: how many iterations after the next one fulcrumd
    plans at once, for a DataLoader that prefetches (`FulcrumBatchSampler`: at least its
    num_workers x prefetch_factor). `min_batch`: the least batch a rank that trains gets (2
    or more for a model with BatchNorm, which refuses one sample in training); LB-BSP then
    sizes no rank below it, however slow. `samples_per_epoch` (the training set's size) lets
    the job's progress and run summary count epochs; without it they name none.
    `max_restarts`: as torchrun's --max_restarts; a lost rank then ends only the attempt,
    and the restarted group rejoins the job (ExternalJob's `state_dir`)."""
    scenario = {
        "name": name,
        "external": {"framework": framework, "rank_timeout_s": rank_timeout_s},
        "training": {"total_batch": total_batch, "iterations": iterations, "eval_interval": eval_interval},
        "policy": policy or {"type": "lbbsp-cpu"},
        "workers": [{"name": "rank", "count": ranks}],
    }
    if worker_timeout_s is not None:
        scenario["worker_timeout_s"] = worker_timeout_s
    if evaluation_timeout_s is not None:
        scenario["external"]["evaluation_timeout_s"] = evaluation_timeout_s
    if plan_ahead:
        scenario["external"]["plan_ahead"] = plan_ahead
    if min_batch != 1:
        scenario["training"]["min_batch"] = min_batch
    if samples_per_epoch is not None:
        scenario["external"]["samples_per_epoch"] = samples_per_epoch
    if max_restarts:
        scenario["external"]["max_restarts"] = max_restarts
    return scenario


DEFAULT_WORKER_TIMEOUT_S = 10.0  # fulcrumd's --worker-timeout


def process_group_timeout(scenario: Dict[str, Any], floor_s: float = 60) -> datetime.timedelta:
    """The timeout to give `dist.init_process_group` for a job of `scenario`: its
    rank_timeout_s (the longest a rank may take from its plan to its report, an announced
    evaluation apart) plus its worker timeout, and at least `floor_s` (the rendezvous of processes that start torch on
    a loaded machine takes its time too). Past it, a collective waiting for a lost rank
    raises, and `train` turns that into a FulcrumError naming the lost rank, instead of
    waiting for gloo's or NCCL's default 30 minutes. A rank's evaluation does not count: the
    other ranks wait for it in their report, not in a collective."""
    external = scenario.get("external", {})
    rank_timeout = float(external.get("rank_timeout_s", 120))
    worker_timeout = float(scenario.get("worker_timeout_s", DEFAULT_WORKER_TIMEOUT_S))
    return datetime.timedelta(seconds=max(floor_s, rank_timeout + worker_timeout))


REJOIN_WAIT_S = 60.0  # a restarted rank asks this long while fulcrumd takes the last attempt's loss in


class ExternalJob:
    """One rank's place in an external job. Without `job`, rank 0 submits `scenario` (an
    operator token) and the id reaches the other ranks by torch.distributed; every rank
    then joins its rank and says it is ready. `plan` is fulcrumd's first answer.

    With `state_dir` (a folder every rank reads; shared, on several hosts) the job outlives
    a torchrun restart (`external_scenario(max_restarts=N)`, `torchrun --max_restarts N`):
    rank 0 notes the job's id there, and a restarted group's rank 0 rejoins that job while
    it runs instead of submitting another. `checkpoint(state, k)` saves the user's state
    after iteration k; the restarted group finds it (`resume()`), and fulcrumd goes on from
    iteration k + 1 (`resumed_from`)."""

    def __init__(self, client: FulcrumClient, rank: int, scenario: Optional[Dict[str, Any]] = None,
                 job: Optional[int] = None, state_dir: Optional[str] = None):
        self.client = client
        self.rank = rank
        self._folder = StateFolder(state_dir) if state_dir else None
        # fulcrumd loses the last attempt's rank within its worker timeout: ask that long and more.
        worker_timeout = float((scenario or {}).get("worker_timeout_s", DEFAULT_WORKER_TIMEOUT_S))
        self._rejoin_wait_s = max(REJOIN_WAIT_S, worker_timeout + 30)
        rejoining = False
        if job is None:
            if rank == 0 and scenario is None:
                raise ValueError("rank 0 submits the job: give its scenario (external_scenario(...))")
            box = [None]
            if rank == 0:
                earlier = self._job_to_rejoin()
                rejoining = earlier is not None
                box[0] = (earlier if rejoining else client.submit_job(scenario), rejoining)
                if self._folder is not None:
                    self._folder.remember_job(box[0][0])
            if dist.is_available() and dist.is_initialized():
                dist.broadcast_object_list(box, src=0)
            job, rejoining = box[0]
        self.job = int(job)
        self._saved = self._folder.checkpoint(self.job) if self._folder is not None else None
        self.resumed_from = int(self._saved["iteration"]) if self._saved else 0
        assignment = self._join(rejoining)
        self.scenario = assignment.get("scenario", {})
        self.iterations = int(self.scenario.get("training", {}).get("iterations", 0))
        self.plan = client.report(self.job, rank, -1, resume_from=self.resumed_from if self._saved else None)
        self._hook: Optional[WeightedAllReduce] = None
        self._model: Optional[torch.nn.Module] = None
        self._device: Optional[torch.device] = None

    def _job_to_rejoin(self) -> Optional[int]:
        """The job an earlier attempt in the state folder submitted, while it still runs."""
        earlier = self._folder.job() if self._folder is not None else None
        if earlier is None:
            return None
        try:
            state = self.client.job(earlier).get("state", "")
        except FulcrumError:  # unknown to this fulcrumd (another one's folder), or not to be asked
            return None
        return earlier if state in ("queued", "running", "paused") else None

    def _join(self, rejoining: bool) -> Dict[str, Any]:
        host = f"{socket.gethostname()} pid {os.getpid()}"
        deadline = time.monotonic() + self._rejoin_wait_s
        while True:
            try:
                return self.client.join(self.job, self.rank, host=host)
            except FulcrumError as e:
                # A restarted group can come before fulcrumd has taken the last attempt's
                # loss in: its rank still reads lost, or held by the last process.
                if not rejoining or e.code not in ("rank-lost", "rank-taken") or time.monotonic() >= deadline:
                    raise
                time.sleep(0.2)

    def checkpoint(self, state: Dict[str, Any], iteration: int) -> None:
        """After iteration `iteration` has trained: rank 0 saves `state` (say the model's and
        the optimizer's state_dicts) in the state folder, whole or not at all; a restarted
        group goes on from iteration + 1. The other ranks save nothing: they share it."""
        if self._folder is None:
            raise RuntimeError("give ExternalJob a state_dir to keep checkpoints in")
        if self.rank == 0:
            self._folder.save(self.job, iteration + 1, state)

    @property
    def keeps_checkpoints(self) -> bool:
        """It was given a state folder (`state_dir`)."""
        return self._folder is not None

    def resume(self) -> Optional[Dict[str, Any]]:
        """The state the last attempt's checkpoint saved for this job; None on its first
        attempt, or when it failed before its first checkpoint."""
        return self._saved["state"] if self._saved else None

    def distribute(self, model: torch.nn.Module, device: Optional[torch.device] = None,
                   process_group: Optional[dist.ProcessGroup] = None) -> DistributedDataParallel:
        """`model` (already on `device`) in DDP with LB-BSP eq. 7's hook registered, which
        `steps` sets each iteration; tells fulcrumd when this rank enters the all-reduce."""
        device_ids = [device.index] if device is not None and device.type == "cuda" else None
        ddp = DistributedDataParallel(model, device_ids=device_ids, process_group=process_group)
        self._hook = WeightedAllReduce(process_group, on_first_bucket=lambda: self.client.announce_collective(True))
        ddp.register_comm_hook(self._hook, weighted_allreduce_hook)
        self._model, self._device = model, device
        return ddp

    def steps(self, dataset_size: int = 0, seed: int = 1, sampler: Optional[FulcrumBatchSampler] = None
              ) -> Iterator[Step]:
        """This rank's iterations until fulcrumd's plan says the job ended (then `plan`
        says how): each a `Step` to run in a `with step:` block (fulcrum_torch.steps). Every
        rank draws the same global batch of a seeded pass over `dataset_size` samples and
        takes its slice, `step.indices`; with `sampler` (a DataLoader's batch sampler) the
        step's indices are the ones the sampler gave the DataLoader for its iteration."""
        if self._hook is None:
            raise RuntimeError("call job.distribute(model) first: the steps weight the gradients through its hook")
        if sampler is None and dataset_size <= 0:
            raise ValueError("give the dataset's size, or the DataLoader's FulcrumBatchSampler")
        return iterate_steps(self, self._hook, dataset_size, seed, self._model, self._device, sampler)

    def planned_sizes(self, iteration: int) -> Optional[List[int]]:
        """Every rank's batch size at `iteration` if fulcrumd has planned it (the plan under
        way and the job's plan_ahead after it); None otherwise."""
        if self.plan.get("state") != "train":
            return None
        offset = iteration - int(self.plan["iteration"])
        if offset == 0:
            return [int(x) for x in self.plan["batch_sizes"]]
        ahead = self.plan.get("ahead", [])
        if 0 < offset <= len(ahead):
            return [int(x) for x in ahead[offset - 1]]
        return None

    def report(self, iteration: int, **measured: Any) -> Dict[str, Any]:
        self.plan = self.client.report(self.job, self.rank, iteration, **measured)
        # Out of the all-reduce since its report: said once the report is in, so fulcrumd
        # never sees this rank neither reporting nor waiting for its peers.
        self.client.announce_collective(False)
        return self.plan

    def why_collective_failed(self, wait_s: Optional[float] = None) -> Optional[FulcrumError]:
        """After a collective of this job raised (its process-group timeout, a peer's reset
        connection): asks fulcrumd, for up to `wait_s` (the job's worker timeout plus 5 s, at
        least 30 s, by default: fulcrumd may not have lost the rank yet), whether the job has
        ended. A FulcrumError with the job's end and fulcrumd's reason ("job-lost: rank 1
        (rank-1): was silent for 10 s ...") if so; None when fulcrumd knows of nothing wrong.
        Asking takes a viewer's or an operator's token: with a worker token the error says
        that fulcrumd could not be asked.

            try:
                loss.backward()
            except RuntimeError as e:
                reason = job.why_collective_failed()
                if reason:
                    raise reason from e
                raise
        """
        if wait_s is None:
            wait_s = max(30.0, float(self.scenario.get("worker_timeout_s", DEFAULT_WORKER_TIMEOUT_S)) + 5)
        deadline = time.monotonic() + wait_s
        while True:
            try:
                status = self.client.job(self.job)
            except FulcrumError as e:  # a worker token may not list jobs
                return FulcrumError(e.code, f"job {self.job}'s collective failed, and fulcrumd could not be asked "
                                            f"why: {e.message}")
            except Exception:  # fulcrumd is gone too: nothing more to learn
                return None
            state = status.get("state", "")
            if state in ("lost", "stopped", "failed", "finished"):
                return FulcrumError(f"job-{state}", f"job {self.job} is {state}: {status.get('message', '')}")
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.1)

    @contextlib.contextmanager
    def evaluating(self):
        """Wraps an evaluation between two reports: fulcrumd learns that this rank's report
        comes late by design and does not lose it to the job's rank_timeout_s while it lasts,
        up to the job's evaluation_timeout_s (1 h by default: a rank stuck in its evaluation
        still heartbeats, so this limit is what loses it). A rank whose process stops is lost
        after the worker timeout, evaluating or not. `train` wraps its `evaluate` in it.

            with job.evaluating():
                accuracy, loss = evaluate(model)
        """
        self.client.announce_evaluation(True)
        try:
            yield
        except BaseException:
            with contextlib.suppress(Exception):  # the evaluation's own error is the one to see
                self.client.announce_evaluation(False)
            raise
        self.client.announce_evaluation(False)


@dataclass
class TrainResult:
    iterations: int = 0
    state: str = "train"  # finished, stopped or lost: how the job ended
    message: str = ""
    wall_s: float = 0.0
    accuracy: Optional[float] = None
    # Per iteration: (iteration, every rank's batch sizes, compute s, all-reduce s, report round trip s).
    log: List[Tuple[int, List[int], float, float, float]] = field(default_factory=list)


def train(model: torch.nn.Module, inputs: torch.Tensor, targets: torch.Tensor, *, job: ExternalJob,
          rank: int, lr: float = 0.05, momentum: float = 0.0, seed: int = 1,
          loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = F.cross_entropy,
          evaluate: Optional[Callable[[torch.nn.Module], Tuple[float, float]]] = None,
          eval_interval: int = 100, device: Optional[torch.device] = None,
          on_iteration: Optional[Callable[[int, Dict[str, Any]], None]] = None,
          checkpoint_every: int = 0) -> TrainResult:
    """Trains `model` on (inputs, targets) until fulcrumd's plan says the job ended.

    torch.distributed must be initialised (gloo on CPU, NCCL on GPU). Each iteration this
    rank trains on its slice of the global batch with the size fulcrumd gave it, DDP sums
    the eq. 7-weighted gradients, and the rank reports its compute time (up to its first
    gradient bucket), its all-reduce time, CPU and memory shares and loss; rank 0 adds
    `evaluate(model)`'s (accuracy, loss) every `eval_interval` iterations and at the end.
    `on_iteration(k, plan)` sees every plan before the iteration runs. The reported compute
    time is forward, backward (up to the first gradient bucket) and the optimizer step.

    When the all-reduce raises because a peer is gone (killed, or stopped past the process
    group's timeout: `process_group_timeout`), fulcrumd is asked why, and a FulcrumError
    ("job-lost: job 3 is lost: rank 1 (rank-1): was silent for 10 s ...") is raised from the
    collective's error once it has lost the rank.

    `checkpoint_every` N (with the job's `state_dir`): the model's and the optimizer's state
    is saved after every N-th iteration, and a restarted group (torchrun --max_restarts)
    starts from the last one saved. The restarted attempt draws a new pass over the data."""
    if checkpoint_every > 0 and not job.keeps_checkpoints:
        raise ValueError("checkpoint_every needs the job's state_dir (ExternalJob(..., state_dir=DIR))")
    device = device or torch.device("cpu")
    saved = job.resume()
    if saved is not None:  # before DDP takes the parameters: every rank reads the same checkpoint
        model.load_state_dict(saved["model"])
    ddp = job.distribute(model, device)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=lr, momentum=momentum)
    if saved is not None:
        optimizer.load_state_dict(saved["optimizer"])
    result = TrainResult()
    started = time.perf_counter()
    for step in job.steps(len(inputs), seed):
        k = step.iteration
        if on_iteration:
            on_iteration(k, step.plan)
        with step:
            x, y = inputs[step.indices].to(device), targets[step.indices].to(device)
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(ddp(x), y)
            loss.backward()  # the all-reduce: a lost peer makes it raise (process_group_timeout)
            optimizer.step()
            step.loss = loss
            last = job.iterations > 0 and k + 1 >= job.iterations
            if evaluate and rank == 0 and ((k + 1) % eval_interval == 0 or last):
                with step.evaluation():
                    accuracy, test_loss = evaluate(model)
                step.measured["test_accuracy"], step.measured["test_loss"] = accuracy, test_loss
                result.accuracy = accuracy
        result.log.append((k, step.sizes, step.compute_s, step.sync_s, step.report_s))
        result.iterations += 1
        if checkpoint_every > 0 and (k + 1) % checkpoint_every == 0:
            job.checkpoint({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, k)
    plan = job.plan
    result.state = plan["state"]
    result.message = plan.get("message", "")
    result.wall_s = time.perf_counter() - started
    return result


__all__ = ["ExternalJob", "RankTimer", "TrainResult", "external_scenario", "memory_share", "train",
           "FulcrumError", "process_group_timeout"]
