"""Orbax checkpoints: the latest training state of a program, the best params of a model.

    <group>/checkpoints/latest/<step>/{state, progress}    all models of one program
    <workdir>/checkpoints/best/<step>/{params, selection}  one model

A run of one model is its own group (the two folders share its workdir); a
program of M models keeps its stacked state in the group folder and each
model's selected params in that model's own workdir, so `restore(workdir)`
loads it like any other. A checkpoint is written by orbax into the writer's
private staging folder (`attn_jax.core.leases`: the training lease's holder's,
which a new holder fences off), sealed there, and committed with one rename to
`<kind>/<step>`; the older step is then removed (a rename into the staging
folder, fenced the same way). So a killed run leaves the previous checkpoint
intact, and a holder paused past a takeover, wherever the pause hit, lands
nothing beside the new holder. Use the store as a context manager.

Nothing read back is trusted blindly. Orbax has no checksums (a flipped byte
in an array file restores silently different values), so each step folder
gets a `sha256.json` of its files once orbax has finalised it, and restoring
checks it first: a damaged, truncated or missing file is a one-line
`CheckpointError` naming the step folder and what to do, never an orbax
traceback, and never mistaken for a checkpoint that "does not fit" the
config. Folders written before attn-jax 0.3 (which sealed them after the
rename) may lack the manifest; they are restored unverified, with orbax's own failures classified.

Restoring writes nothing: it lists the step folders itself and reads them
with a plain `Checkpointer` (a `CheckpointManager` creates folders, cleans
temporary ones and logs warnings), so a workdir on a read-only mount restores.
"""

import ctypes
import errno
import json
import os
import re
import shutil
from typing import Any, Optional

import jax
import orbax.checkpoint as ocp

from attn_jax.core import atomic_io, digests, interrupts, leases
from attn_jax.core.errors import CheckpointError, StorageError
from attn_jax.training import orbax_noise

MANIFEST = 'sha256.json'

# Orbax/tensorstore report I/O failures as ValueError/Exception text; these
# mark a file that is unreadable or not what was written, not a model mismatch.
_DAMAGE_TEXT = re.compile(r'DATA_LOSS|OUT_OF_RANGE|NOT_FOUND|Encountered error while reading|'
                          r'os_error_code|[Cc]orrupt|[Tt]runcated|[Ii]nvalid .*header|Error reading')
_OS_ERROR_CODE = re.compile(r"os_error_code='?(\d+)")


def _abstract(tree):
  return jax.tree.map(ocp.utils.to_shape_dtype_struct, tree)


def _files(step_dir: str) -> dict[str, str]:
  """relative path -> absolute path of every file of a step folder but the manifest."""
  found = {}
  for root, _, names in os.walk(step_dir):
    for name in names:
      path = os.path.join(root, name)
      relative = os.path.relpath(path, step_dir)
      if relative != MANIFEST:
        found[relative] = path
  return found


def _seal(step_dir: str) -> None:
  """Writes the step folder's sha256 manifest."""
  atomic_io.write_json(os.path.join(step_dir, MANIFEST), digests.of_files(step_dir, _files(step_dir)))


def _damage(step_dir: str) -> Optional[str]:
  """What differs from the step folder's manifest (None: intact, or no manifest)."""
  try:
    with open(os.path.join(step_dir, MANIFEST), 'rb') as f:
      recorded = json.loads(f.read().decode('utf-8'))
  except FileNotFoundError:
    return None
  except (OSError, ValueError) as e:
    return f'its {MANIFEST} is unreadable ({type(e).__name__})'
  if not isinstance(recorded, dict):
    return f'its {MANIFEST} is not a manifest'
  mismatch = digests.first_mismatch(step_dir, recorded)
  if mismatch is None:
    return None
  relative, why = mismatch
  return f'{relative} changed since it was saved' if why == 'changed' else f'{relative} is {why}'


def _looks_damaged(error: BaseException) -> bool:
  """Whether an orbax restore failure is an unreadable file, not a mismatch."""
  if isinstance(error, (OSError, UnicodeDecodeError, json.JSONDecodeError, RuntimeError)):
    return True
  if type(error) is Exception:  # pylint: disable=unidiomatic-typecheck
    return True  # orbax's "Encountered error while reading array index"
  return bool(_DAMAGE_TEXT.search(str(error)))


def _brief(error: BaseException) -> str:
  text = str(error).strip().splitlines()
  return f'{type(error).__name__}: {text[0][:160] if text else ""}'


def steps(folder: str) -> list[int]:
  """The finalised steps in an orbax folder, oldest first (temporary folders
  of an unfinished save have a suffix and are skipped)."""
  try:
    names = os.listdir(folder)
  except FileNotFoundError:
    return []
  return sorted(int(n) for n in names if n.isdigit() and os.path.isdir(os.path.join(folder, n)))


class DamagedCheckpointError(CheckpointError):
  """A step folder whose files are damaged (not merely of another model);
  `problem` says what is wrong without the fix (for messages that combine it)."""

  def __init__(self, message: str, problem: str = ''):
    super().__init__(message)
    self.problem = problem or message


class CheckpointStore:
  """The `latest` and `best` checkpoints under `<workdir>/checkpoints`; each
  orbax manager (for saving) is opened on first use."""

  def __init__(self, workdir: str):
    self.directory = os.path.abspath(os.path.join(workdir, 'checkpoints'))
    self._writer: Optional[ocp.Checkpointer] = None
    self._verified: set[str] = set()
    self.rescued: Optional[str] = None  # what `restore_best` found wrong with best/, when latest stood in

  def __enter__(self):
    return self

  def __exit__(self, *exc):
    self.close()

  def close(self):
    writer, self._writer = self._writer, None
    if writer is not None:
      try:
        writer.close()
      except Exception:  # pylint: disable=broad-except
        pass  # a failed save already raised its own error

  def step_dir(self, kind: str, step: int) -> str:
    return os.path.join(self.directory, kind, str(step))

  def _checkpointer(self) -> ocp.Checkpointer:
    if self._writer is None:
      self._writer = ocp.Checkpointer(ocp.CompositeCheckpointHandler())
    return self._writer

  def _staging(self, target: str) -> str:
    """Where a save to `target` is written before its commit: this holder's
    private staging folder of the training lease (fenced off by a new holder),
    or, with no lease held (a test, a read-only workdir), one beside `kind/`."""
    private = leases.staging_dir(target)
    if private is None:
      private = os.path.join(self.directory, '.staging')
      os.makedirs(private, exist_ok=True)
    return private

  def _save(self, kind: str, step: int, args: ocp.args.Composite):
    """Writes the checkpoint into this holder's staging folder, seals it, and
    commits it with one rename into `<kind>/<step>` (`_commit`): a holder
    paused past a takeover, wherever the pause hit, lands nothing beside the
    new holder (`attn_jax.core.leases`, Fencing)."""
    target = self.step_dir(kind, step)
    leases.verify(target)  # before the first byte
    staged = None
    try:
      # Ctrl-C waits for the commit: one interrupting orbax's save leaves its
      # event loop's callbacks printing tracebacks (`interrupts`).
      with interrupts.deferred():
        with orbax_noise.without_event_loop_tracebacks(), orbax_noise.quiet_logs():
          staged = os.path.join(self._staging(target), f'{kind}-{step}')
          if os.path.lexists(staged):
            shutil.rmtree(staged, ignore_errors=True)  # our own, from a save that failed
          self._checkpointer().save(staged, args=args)
        _seal(staged)
        self._commit(kind, step, staged, target)
    except (leases.LeaseLost, StorageError):
      raise  # the lease's own line; or the disk's, the previous checkpoint intact
    except Exception as e:  # pylint: disable=broad-except
      lost = leases.lost_or(target, e)
      if isinstance(lost, leases.LeaseLost):
        raise lost from None  # a new holder fenced off our staging folder mid-save
      raise _save_error(target, e) from e
    finally:
      if staged is not None and os.path.isdir(staged):
        shutil.rmtree(staged, ignore_errors=True)  # a save that did not commit: our own, private
    self._verified.add(target)

  def _commit(self, kind: str, step: int, staged: str, target: str) -> None:
    """Moves the sealed `staged` folder to `target` with one rename, then
    removes the older steps (and temporary folders older versions left).

    A rename out of a staging folder fenced off by a new holder fails (no
    source), so the check of the lock just before it is not all that keeps a
    woken holder out. A step already there (a resumed run redoing it, perhaps
    in another environment) is replaced by an atomic exchange where the file
    system has one, so no moment is left without the step.
    """
    leases.verify(target)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    _commit_rename(staged, target)
    self._remove_others(kind, step)

  def _remove_others(self, kind: str, step: int) -> None:
    """Removes every step of `kind` but `step` (one checkpoint of each kind is
    kept), and the temporary folders of saves older versions left there."""
    folder = os.path.join(self.directory, kind)
    for name in sorted(os.listdir(folder)):
      if name != str(step) and (name.isdigit() or 'orbax-checkpoint-tmp' in name):
        leases.remove(os.path.join(folder, name))

  def save_latest(self, step: int, state: Any, progress: dict) -> None:
    self._save('latest', step, ocp.args.Composite(
        state=ocp.args.StandardSave(state), progress=ocp.args.JsonSave(progress)))

  def save_best(self, step: int, params: Any, selection: dict) -> None:
    self._save('best', step, ocp.args.Composite(
        params=ocp.args.StandardSave(params), selection=ocp.args.JsonSave(selection)))

  def latest_step(self, kind: str) -> Optional[int]:
    found = steps(os.path.join(self.directory, kind))
    return found[-1] if found else None

  def _restore(self, kind: str, items: dict, step: Optional[int] = None):
    step = self.latest_step(kind) if step is None else step
    if step is None:
      return None
    target = self.step_dir(kind, step)
    if target not in self._verified:
      why = _damage(target)
      if why is not None:
        raise self.damaged(kind, target, why)
      self._verified.add(target)
    try:
      with orbax_noise.quiet_logs(), ocp.Checkpointer(ocp.CompositeCheckpointHandler()) as checkpointer:
        return checkpointer.restore(target, args=ocp.args.Composite(**items))
    except Exception as e:  # pylint: disable=broad-except
      if isinstance(e, PermissionError):
        raise CheckpointError(f'cannot read the checkpoint {target}: permission denied; ask its '
                              'owner for read access, or train in a new --workdir.') from e
      # Files that match their manifest are intact: then a failure is a mismatch.
      verified = os.path.isfile(os.path.join(target, MANIFEST))
      if isinstance(e, OSError) or (not verified and _looks_damaged(e)):
        raise self.damaged(kind, target, _brief(e), verified) from e
      raise CheckpointError(
          f'the checkpoint in {target} does not fit the model of this config '
          f'({_brief(e)[:300]}). Use a new --workdir, or the config it was trained with.') from e

  def damaged(self, kind: str, target: str, why: str, verified: bool = True) -> 'DamagedCheckpointError':
    """The one-line error for a damaged step folder, with the fix for its kind.

    `verified`: the folder has a sha256 manifest, so damage is certain; a
    folder of attn-jax <= 0.2 has none, and a failure to read it may also be
    another version's layout — then nothing is declared lost.
    """
    if not verified:
      return DamagedCheckpointError(
          f'the checkpoint {target} cannot be read ({why}): it is damaged, or was saved by another '
          'attn-jax/orbax version (it has no sha256 manifest to tell). Keep the folder; restore it '
          'from a backup, use the version that wrote it, or train in a new --workdir.')
    if kind == 'latest':
      fix = (f'delete {target} to restart this training from scratch (the rest of the workdir '
             'is kept), or train in a new --workdir')
    else:
      fix = ('the selected model is lost: train again in a new --workdir (or restore the folder '
             'from a backup)')
    return DamagedCheckpointError(f'the checkpoint {target} is damaged ({why}); {fix}.',
                                  f'the checkpoint {target} is damaged ({why})')

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
    """(params, selection) of the selected model, or None if none was saved.

    When the best folder is damaged or missing but the latest checkpoint of
    this same workdir is intact and was saved at the selected step (the last
    epoch was the best), the params come from there, and `rescued` says what
    was wrong (`replace_best` then writes the best folder anew).

    Raises:
      DamagedCheckpointError: best is damaged, or missing after a selection
        was made, and latest cannot stand in for it (the message says why).
    """
    self.rescued = None
    if self.latest_step('best') is not None:
      try:
        restored = self._restore('best', {
            'params': ocp.args.StandardRestore(_abstract(template_params)),
            'selection': ocp.args.JsonRestore()})
        return restored['params'], restored['selection']
      except DamagedCheckpointError as e:
        failure, problem = e, e.problem
    else:
      failure, problem = None, f'{os.path.join(self.directory, "best")} holds no checkpoint (deleted?)'
    rescued, why_not = self._params_from_latest(template_params)
    if rescued is not None:
      self.rescued = problem
      return rescued
    if failure is not None:
      raise failure
    if why_not is None:
      return None  # nothing selected yet: a training that has not reached its first selection
    raise DamagedCheckpointError(f'{problem}, and the selected model cannot be rebuilt from '
                                 f'{os.path.join(self.directory, "latest")}: {why_not}. The selected '
                                 'model is lost: train again in a new --workdir (or restore the folder '
                                 'from a backup).')

  def replace_best(self, params: Any, selection: dict) -> None:
    """Writes the best folder anew (after `restore_best` rescued it from
    latest), removing the damaged one first."""
    folder = os.path.join(self.directory, 'best')
    if os.path.isdir(folder):
      for name in os.listdir(folder):
        leases.remove(os.path.join(folder, name))
    self.save_best(selection['step'], params, selection)

  def _params_from_latest(self, template_params: Any) -> tuple[Optional[tuple[Any, dict]], Optional[str]]:
    """((params, selection) from latest, or None; why latest cannot stand in,
    or None when nothing has been selected yet)."""
    latest = self.latest_step('latest')
    if latest is None:
      return None, None
    try:
      models = self.latest_progress()['models']
      if len(models) != 1:
        return None, f'it holds a program of {len(models)} models'
      best = models[0]['best']
      if best is None:
        return None, None
      if best['step'] != latest:
        return None, (f'it was saved at step {latest}, the selected model at step {best["step"]} '
                      f'(epoch {best["epoch"] + 1})')
      state = self._restore('latest', {'state': ocp.args.StandardRestore()})['state']
      params = jax.tree.map(lambda x: x[0], state['params'])  # the model axis, of length 1
      if (jax.tree.structure(params) != jax.tree.structure(template_params) or
          [x.shape for x in jax.tree.leaves(params)] !=
          [x.shape for x in jax.tree.leaves(template_params)]):
        return None, 'it does not fit this model'
      return (jax.tree.map(lambda x, t: jax.numpy.asarray(x, t.dtype), params, template_params), best), None
    except DamagedCheckpointError as e:
      return None, e.problem
    except CheckpointError as e:
      return None, str(e)
    except (KeyError, TypeError, IndexError) as e:
      return None, f'its progress record is not readable ({type(e).__name__})'


def damage(step_dir: str) -> Optional[str]:
  """What differs from a step folder's sha256 manifest (None: intact, or
  no manifest), for readers that list checkpoints (`attn_jax.contents`)."""
  return _damage(step_dir)


def _save_error(target: str, error: BaseException) -> Exception:
  """A StorageError for a full disk or unwritable folder, else a CheckpointError;
  orbax reports tensorstore's OSErrors as text with an os_error_code."""
  code = error.errno if isinstance(error, OSError) else None
  if code is None:
    match = _OS_ERROR_CODE.search(str(error))
    code = int(match.group(1)) if match else None
  if code is not None and atomic_io.is_storage_error(OSError(code, os.strerror(code))):
    return atomic_io.storage_error(target, OSError(code, os.strerror(code)))
  if code == errno.ENOENT:
    return CheckpointError(f'cannot save the checkpoint {target}: a folder vanished while it was '
                           'written (was the workdir deleted?); rerun to resume.')
  return CheckpointError(f'cannot save the checkpoint {target} ({_brief(error)[:300]}); '
                         'the previous checkpoint is intact: fix the cause and rerun to resume.')


def _commit_rename(staged: str, target: str) -> None:
  """The commit of a checkpoint: `staged` becomes `target` in one rename, or,
  where `target` exists, in one exchange (Linux's renameat2 RENAME_EXCHANGE;
  elsewhere the old folder is moved into the staging folder first); the old
  folder, if any, then lies at `staged` and is removed. Its own function, so
  the fault suite can pause a holder between the lock check and the rename."""
  if not os.path.isdir(target):
    os.rename(staged, target)
    return
  if not _exchange(staged, target):
    leases.remove(target)
    os.rename(staged, target)
    return
  shutil.rmtree(staged, ignore_errors=True)


_RENAME_EXCHANGE = 2


def _exchange(a: str, b: str) -> bool:
  """Swaps paths `a` and `b` atomically; False where the system cannot."""
  try:
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = libc.renameat2
  except (OSError, AttributeError):
    return False
  at_cwd = -100
  if renameat2(at_cwd, os.fsencode(a), at_cwd, os.fsencode(b), _RENAME_EXCHANGE) == 0:
    return True
  code = ctypes.get_errno()
  if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
    return False
  raise OSError(code, os.strerror(code), a)
