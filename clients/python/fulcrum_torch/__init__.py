"""fulcrum_torch: PyTorch jobs under fulcrumd.

A torch.distributed job registers with fulcrumd as an external job; each rank reports
every iteration (batch, compute and all-reduce time, CPU share, loss) and receives the
next batch sizes of all ranks from fulcrumd's BatchSizeManager (LB-BSP Algorithm 1 or 2,
with the operator's pins and exclusions). Gradients are aggregated with LB-BSP eq. 7:
each rank's mean gradient weighted by its batch over the global batch, then summed by
the all-reduce (a DDP communication hook). The job appears in fulcrumd's streams, run
stores and console like a built-in job.
"""

from .client import FulcrumClient, FulcrumError, read_token_file, server_url
from .exclusion import EXCLUDED_SAMPLES, excluded_indices, held_batch_norm
from .hooks import WeightedAllReduce, weighted_allreduce_hook
from .sampler import FulcrumBatchSampler, GlobalBatchSlicer
from .steps import RankTimer, Step, memory_share
from .state_folder import StateFolder
from .train import ExternalJob, TrainResult, external_scenario, process_group_timeout, train

__all__ = [
    "EXCLUDED_SAMPLES",
    "ExternalJob",
    "FulcrumClient",
    "FulcrumBatchSampler",
    "FulcrumError",
    "GlobalBatchSlicer",
    "RankTimer",
    "StateFolder",
    "Step",
    "TrainResult",
    "WeightedAllReduce",
    "excluded_indices",
    "external_scenario",
    "held_batch_norm",
    "memory_share",
    "process_group_timeout",
    "read_token_file",
    "server_url",
    "train",
    "weighted_allreduce_hook",
]
