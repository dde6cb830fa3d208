"""Orbax checkpoints: the latest training state of a program, the best params of a model.

    <group>/checkpoints/latest/<step>/{state, progress}    all models of one program
    <workdir>/checkpoints/best/<step>/{params, selection}  one model

A run of one model is its own group (the two folders share its workdir); a
program of M models keeps its stacked state in the group folder and each
model's selected params in that model's own workdir, so `restore(workdir)`
loads it like any other. Orbax writes each checkpoint to a temporary folder
and renames it when complete, so a killed run leaves the previous checkpoint
intact. Use the store as a context manager: an unclosed manager can lose its
last save.
"""

import os
from typing import Any, Optional

import jax
import orbax.checkpoint as ocp

from attn_jax.errors import CheckpointError


def _abstract(tree):
  return jax.tree.map(ocp.utils.to_shape_dtype_struct, tree)


class CheckpointStore:
  """The `latest` and `best` checkpoints under `<workdir>/checkpoints`; each
  orbax manager is opened on first use."""

  def __init__(self, workdir: str):
    self.directory = os.path.join(workdir, 'checkpoints')
    self._managers: dict[str, ocp.CheckpointManager] = {}

  def __enter__(self):
    return self

  def __exit__(self, *exc):
    self.close()

  def close(self):
    for manager in self._managers.values():
      manager.close()
    self._managers.clear()

  def _manager(self, kind: str) -> ocp.CheckpointManager:
    if kind not in self._managers:
      options = ocp.CheckpointManagerOptions(max_to_keep=1, create=True,
                                             enable_async_checkpointing=False)
      self._managers[kind] = ocp.CheckpointManager(
          os.path.abspath(os.path.join(self.directory, kind)), options=options)
    return self._managers[kind]

  def _save(self, kind: str, step: int, args: ocp.args.Composite):
    manager = self._manager(kind)
    if step in manager.all_steps():
      manager.delete(step)  # a resumed run redoing a step writes the same values again
    manager.save(step, args=args, force=True)
    manager.wait_until_finished()

  def save_latest(self, step: int, state: Any, progress: dict) -> None:
    self._save('latest', step, ocp.args.Composite(
        state=ocp.args.StandardSave(state), progress=ocp.args.JsonSave(progress)))

  def save_best(self, step: int, params: Any, selection: dict) -> None:
    self._save('best', step, ocp.args.Composite(
        params=ocp.args.StandardSave(params), selection=ocp.args.JsonSave(selection)))

  def _restore(self, kind: str, items: dict):
    if not os.path.isdir(os.path.join(self.directory, kind)):
      return None
    manager = self._manager(kind)
    step = manager.latest_step()
    if step is None:
      return None
    try:
      return manager.restore(step, args=ocp.args.Composite(**items))
    except (ValueError, KeyError, TypeError) as e:
      raise CheckpointError(
          f'the checkpoint in {manager.directory} does not fit the model of this config '
          f'({type(e).__name__}: {str(e)[:300]}). Use a new --workdir, or the config it '
          'was trained with.') from e

  def latest_progress(self) -> Optional[dict]:
    """The progress record of the latest checkpoint (no arrays read), or None."""
    restored = self._restore('latest', {'progress': ocp.args.JsonRestore()})
    return None if restored is None else restored['progress']

  def restore_latest(self, template_state: Any) -> Optional[tuple[Any, dict]]:
    """(state, progress) of the latest checkpoint, or None if there is none."""
    restored = self._restore('latest', {'state': ocp.args.StandardRestore(_abstract(template_state)),
                                        'progress': ocp.args.JsonRestore()})
    return None if restored is None else (restored['state'], restored['progress'])

  def restore_best(self, template_params: Any) -> Optional[tuple[Any, dict]]:
    """(params, selection) of the selected model, or None if none was saved."""
    restored = self._restore('best', {'params': ocp.args.StandardRestore(_abstract(template_params)),
                                      'selection': ocp.args.JsonRestore()})
    return None if restored is None else (restored['params'], restored['selection'])
