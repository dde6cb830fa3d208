"""An output folder (--save, --out, --directory) that cannot be written ends
in one line naming that folder, why, and the option that chooses another
(issue 76): a read-only mount, no permission, a full disk."""

import errno
import os

import pytest

from attn_jax.core import atomic_io, output_folders
from attn_jax.core.errors import StorageError
from attn_jax.studies import __main__ as studies_cli
from attn_jax.tables import report_command_line as report_cli
import helpers



def atomic_write_failing(path: str, code: int) -> None:
  """What `atomic_io.write_bytes` raises when the write meets `code`."""
  error = OSError(code, os.strerror(code))
  raise atomic_io.storage_error(path, error) from error



@pytest.mark.parametrize('code,why', [(errno.EROFS, 'the file system is read-only'),
                                      (errno.EACCES, 'permission denied')])
def test_a_folder_that_cannot_be_made_or_written_names_the_folder_and_the_option(tmp_path, code, why):
  folder = str(tmp_path / 'out' / 'deeper')
  with pytest.raises(StorageError) as raised:
    with output_folders.writing_into(folder, '--save'):
      raise OSError(code, os.strerror(code), str(tmp_path / 'out'))  # os.makedirs fails at a parent
  assert str(raised.value) == (f'cannot write {folder}: {why} (errno {code}); give another folder with --save')
  with pytest.raises(StorageError, match=f'cannot write {folder}: {why}'):  # atomic_io's, deep inside
    with output_folders.writing_into(folder, '--out'):
      atomic_write_failing(os.path.join(folder, 'a', 'x.json'), code)


def test_other_paths_and_other_errors_are_left_alone(tmp_path):
  with pytest.raises(StorageError) as raised:
    with output_folders.writing_into(str(tmp_path / 'out'), '--save'):
      atomic_write_failing(str(tmp_path / 'README.md'), errno.EROFS)
  assert str(raised.value).startswith(f'cannot write {tmp_path / "README.md"}: ')  # a --readme keeps its own
  with pytest.raises(FileNotFoundError):
    with output_folders.writing_into(str(tmp_path / 'out'), '--save'):
      raise FileNotFoundError(errno.ENOENT, 'No such file', str(tmp_path / 'out' / 'x'))
  with output_folders.writing_into(None, '--save'):  # nothing asked to be written
    pass


def test_a_full_disk_says_the_free_space_and_what_is_needed(tmp_path, monkeypatch):
  monkeypatch.setattr(output_folders, 'free_bytes', lambda path: 4096)
  error = output_folders.folder_error(str(tmp_path), OSError(errno.ENOSPC, 'No space left on device'), '--directory',
                                      'about 58.3 MB more needed for the vectors')
  assert str(error) == (f'cannot write {tmp_path}: the disk is full (errno 28; 4 KB free; about 58.3 MB more '
                        'needed for the vectors); free space there or give another folder with --directory')
  with pytest.raises(StorageError) as raised:  # an outer option replaces the inner, the rest is kept
    with output_folders.writing_into(str(tmp_path), '--directory'):
      with output_folders.writing_into(str(tmp_path), '--config.vectors.directory'):
        raise error
  assert str(raised.value) == str(error)
  with pytest.raises(StorageError, match=r'the disk is full \(errno 28; 4 KB free\); free space there'):
    with output_folders.writing_into(str(tmp_path), '--out'):
      raise OSError(errno.ENOSPC, 'No space left on device')  # a buffered write's: no file name
  assert [output_folders.size(n) for n in (0, 999, 4096, 58_300_000, 2.5e9)] == [
      '0 bytes', '999 bytes', '4 KB', '58.3 MB', '2.5 GB']


def test_report_and_study_outputs_on_a_read_only_mount_are_one_line(capsys, smoke_trained, tmp_path):
  root = tmp_path / 'root'
  helpers.trained_copy(smoke_trained, root / 'sst_average_dot' / 'seed0')
  (tmp_path / 'ro').mkdir()
  with helpers.read_only_mount(tmp_path / 'ro'):
    for inside in ('', 'a/b'):
      target = str(tmp_path / 'ro' / inside) if inside else str(tmp_path / 'ro')
      assert helpers.one_line_exit(capsys, studies_cli.main, ['report', 'jw_grid', f'--root={root}', '--save', target]) == (
          f'error: cannot write {target}: the file system is read-only (errno 30); give another folder with --save')
      assert helpers.one_line_exit(capsys, report_cli.main, ['reproduce', str(smoke_trained), '--out', target]) == (
          f'error: cannot write {target}: the file system is read-only (errno 30); give another folder with --out')
      assert helpers.one_line_exit(capsys, report_cli.main, ['training', str(smoke_trained), '--save', target]).endswith(
          'give another folder with --save')
