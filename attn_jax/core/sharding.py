"""Documents and models spread over devices (`jax.sharding`).

Analyses are data-parallel over documents: a batch's rows are split over a
one-axis mesh ('docs') and the parameters are replicated, so each device
computes its rows and nothing crosses devices but the results. The model
axis of the trainer is split the same way over 'models'. Every analysis
and training step is row-independent, so the numbers are those of one
device (to float rounding; tests/end_to_end/test_devices.py checks 8 host devices).

`config.devices` chooses how many of this host's devices
(`jax.local_devices()`) take part (None: all); one device means no mesh at
all, exactly the single-device program. Several hosts (`attn_jax.core.hosts`)
each run their own mesh on their own batches.
"""

import functools
from typing import Any, Callable

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from attn_jax.core.errors import ConfigError


def device_count(requested: int | None) -> int:
  """How many devices `config.devices` asks for, checked against what is here."""
  available = len(jax.local_devices())
  if requested is None:
    return available
  if not 1 <= requested <= available:
    raise ConfigError(f'devices={requested}, but this process sees {available} '
                      f'({jax.local_devices()[0].platform}); set --config.devices between 1 and {available} '
                      '(or leave it unset for all)')
  return requested


def check(batch_size: int, devices: int | None) -> None:
  """Fails before any work when the batches cannot be split evenly.

  Args:
    batch_size: the analysis batch size (`analysis.batch_size`).
    devices: the devices asked for (`devices`; None: all here).

  Raises:
    ConfigError: when `batch_size` is not a multiple of the device count.
  """
  n = device_count(devices)
  if batch_size % n:
    raise ConfigError(f'analysis.batch_size={batch_size} does not split over {n} devices; '
                      f'use a multiple of {n} (or --config.devices=1)')


@functools.lru_cache(maxsize=None)
def mesh(num_devices: int, axis: str) -> Mesh | None:
  """A one-axis mesh over the first `num_devices` devices; None for one."""
  if num_devices <= 1:
    return None
  return Mesh(np.asarray(jax.local_devices()[:num_devices]), (axis,))


def replicated(mesh_: Mesh) -> NamedSharding:
  return NamedSharding(mesh_, PartitionSpec())


def split_rows(mesh_: Mesh) -> NamedSharding:
  return NamedSharding(mesh_, PartitionSpec(mesh_.axis_names[0]))


def place(tree: Any, mesh_: Mesh, rows: int) -> Any:
  """Leaves with `rows` leading rows split over the mesh, the rest replicated."""
  n = mesh_.devices.size
  leading = lambda x: np.ndim(x) >= 1 and np.shape(x)[0] == rows and rows % n == 0
  return jax.tree.map(lambda x: jax.device_put(x, split_rows(mesh_) if leading(x) else replicated(mesh_)),
                      tree)


class RowParallel:
  """`fn(params, *arrays)`, every array and output [rows, ...], run as one
  program per device on its share of the rows (`jax.shard_map`), `params`
  replicated.

  shard_map rather than sharding the inputs of one program and letting XLA
  partition it: the analyses loop over chunks of documents (LOO, g_{h_p}),
  and a loop over a split axis would run on one device at a time. Each
  device runs exactly the single-device program on B/n rows.
  The replicated parameters are kept with the `params` object they were
  made from, so a stage's batches copy them to the devices once.
  """

  def __init__(self, fn: Callable, mesh_: Mesh):
    self.fn, self.mesh = fn, mesh_
    self._programs: dict[int, Callable] = {}
    self._source, self._params = None, None

  def __call__(self, params, *arrays):
    if params is not self._source:
      self._source, self._params = params, jax.device_put(params, replicated(self.mesh))
    if len(arrays) not in self._programs:
      rows = PartitionSpec(self.mesh.axis_names[0])
      self._programs[len(arrays)] = jax.jit(jax.shard_map(
          self.fn, mesh=self.mesh, in_specs=(PartitionSpec(),) + (rows,) * len(arrays),
          out_specs=rows, check_vma=False))
    return self._programs[len(arrays)](self._params, *arrays)
