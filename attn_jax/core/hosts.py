"""One run over several hosts (processes): `jax.distributed`, and who does what.

The same command starts on every host with `run.py --distributed` (on Cloud
TPU, Slurm or Open MPI JAX finds the others itself) or
`--distributed=COORDINATOR:PORT,NUM_HOSTS,HOST_INDEX`. Every host analyses
every P-th batch of documents on its own devices (`attn_jax.core.sharding`),
writes its shard of each stage into the stage's folder, and host 0 merges
the shards and writes the results, figures and summary; the others wait for
it and read the summary. The workdir must be on storage every host sees.
Training and experiments are not split over hosts: train first (one host),
then analyse on many. A documents' numbers do not depend on which host
computes them (per-document random keys), so the results equal one host's.
"""

from typing import Optional

import jax
from jax.experimental import multihost_utils

from attn_jax.core.errors import ConfigError


def initialize(spec: str | None) -> None:
  """Joins this process to the others. `spec`: None or '' (one host), 'auto'
  (JAX detects the cluster) or 'ADDRESS:PORT,NUM_HOSTS,HOST_INDEX'."""
  if not spec:
    return
  if spec == 'auto':
    jax.distributed.initialize()
    return
  try:
    address, num, index = spec.split(',')
    num, index = int(num), int(index)
  except ValueError:
    raise ConfigError(f'--distributed={spec!r}: give auto or ADDRESS:PORT,NUM_HOSTS,HOST_INDEX '
                      '(e.g. 10.0.0.2:1234,4,0)') from None
  if not 0 <= index < num:
    raise ConfigError(f'--distributed={spec!r}: HOST_INDEX must be in 0..{num - 1}')
  jax.distributed.initialize(coordinator_address=address, num_processes=num, process_id=index)


def count() -> int:
  return jax.process_count()


def index() -> int:
  return jax.process_index()


def primary() -> bool:
  """Whether this host writes what all hosts share (results, summaries)."""
  return index() == 0


def barrier(name: str) -> None:
  """Waits until every host reaches `name` (nothing to wait for on one host)."""
  if count() > 1:
    multihost_utils.sync_global_devices(name)


def owns(batch_number: int) -> bool:
  """Whether this host computes the `batch_number`-th batch of a stage."""
  return batch_number % count() == index()


def shard_name(stem: str, host: Optional[int] = None) -> str:
  """`stem` for this host's own file (or host `host`'s): 'partial' -> 'partial.1-of-4'."""
  return stem if count() == 1 else f'{stem}.{index() if host is None else host}-of-{count()}'


def check_runnable(experiments: str, training_finished: bool) -> None:
  """Several hosts analyse a trained model; refuse what they do not split.

  Args:
    experiments: the run's comma-separated experiment names ('' for none).
    training_finished: whether the workdir holds a finished training.

  Raises:
    ConfigError: with several hosts, for training or experiments.
  """
  if count() == 1:
    return
  if not training_finished:
    raise ConfigError(f'{count()} hosts: training is not split over hosts, and this workdir holds '
                      'no finished training; train first on one host (the same command without '
                      "--distributed, with --config.analyses=''), then rerun this one")
  if experiments.strip():
    raise ConfigError(f'{count()} hosts: experiments ({experiments}) train models and are not '
                      "split over hosts; run them on one host, or pass --config.experiments=''")
