"""Orbax checkpoints of a workdir: the latest training state and the best params.

    <workdir>/checkpoints/latest/<step>/{state, progress}
    <workdir>/checkpoints/best/<step>/{params, selection}

Orbax writes each checkpoint to a temporary folder and renames it when
complete, so a killed run leaves the previous checkpoint intact. Use the
store as a context manager: an unclosed manager can lose its last save.
"""

import os
from typing import Any, Optional

import jax
import orbax.checkpoint as ocp

from attn_jax.errors import CheckpointError


def _manager(directory: str) -> ocp.CheckpointManager:
  options = ocp.CheckpointManagerOptions(max_to_keep=1, create=True,
                                         enable_async_checkpointing=False)
  return ocp.CheckpointManager(os.path.abspath(directory), options=options)


def _abstract(tree):
  return jax.tree.map(ocp.utils.to_shape_dtype_struct, tree)


class CheckpointStore:

  def __init__(self, workdir: str):
    self.directory = os.path.join(workdir, 'checkpoints')
    self._latest = _manager(os.path.join(self.directory, 'latest'))
    self._best = _manager(os.path.join(self.directory, 'best'))

  def __enter__(self):
    return self

  def __exit__(self, *exc):
    self.close()

  def close(self):
    self._latest.close()
    self._best.close()

  @staticmethod
  def _save(manager, step: int, args: ocp.args.Composite):
    if step in manager.all_steps():
      manager.delete(step)  # a resumed run redoing a step writes the same values again
    manager.save(step, args=args, force=True)
    manager.wait_until_finished()

  def save_latest(self, step: int, state: Any, progress: dict) -> None:
    self._save(self._latest, step, ocp.args.Composite(
        state=ocp.args.StandardSave(state), progress=ocp.args.JsonSave(progress)))

  def save_best(self, step: int, params: Any, selection: dict) -> None:
    self._save(self._best, step, ocp.args.Composite(
        params=ocp.args.StandardSave(params), selection=ocp.args.JsonSave(selection)))

  def _restore(self, manager, name: str, template: Any, meta: str):
    step = manager.latest_step()
    if step is None:
      return None
    try:
      restored = manager.restore(step, args=ocp.args.Composite(
          **{name: ocp.args.StandardRestore(_abstract(template)), meta: ocp.args.JsonRestore()}))
    except (ValueError, KeyError, TypeError) as e:
      raise CheckpointError(
          f'the checkpoint in {manager.directory} does not fit the model of this config '
          f'({type(e).__name__}: {str(e)[:300]}). Use a new --workdir, or the config it '
          'was trained with.') from e
    return restored[name], restored[meta]

  def restore_latest(self, template_state: Any) -> Optional[tuple[Any, dict]]:
    """(state, progress) of the latest checkpoint, or None if there is none."""
    return self._restore(self._latest, 'state', template_state, 'progress')

  def restore_best(self, template_params: Any) -> Optional[tuple[Any, dict]]:
    """(params, selection) of the selected model, or None if none was saved."""
    return self._restore(self._best, 'params', template_params, 'selection')
