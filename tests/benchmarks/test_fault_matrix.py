"""The fault suite's entry-point × bad-input matrix: its cells and its table
(the cells themselves run in `tests/fault_tool/fault_injection.py`, minutes)."""

import os
import sys

import helpers

sys.path.insert(0, os.path.join(helpers.ROOT, 'tests', 'fault_tool'))
import fault_cases  # noqa: E402  pylint: disable=wrong-import-position
import fault_matrix  # noqa: E402  pylint: disable=wrong-import-position


def test_every_user_entry_point_meets_each_bad_input_that_applies_to_it():
  cells = [c.name.split(' | ') for c in fault_matrix.matrix_cases()]
  assert len(cells) == len({tuple(c) for c in cells})  # no cell twice
  assert all(bad in fault_matrix.COLUMNS for _, bad in cells)
  entries = {entry.split()[0] + ' ' + entry.split()[1] for entry, _ in cells}
  for command in ('run.py --config=FILE', 'report training', 'report data', 'report study', 'studies run',
                  'studies report', 'contents DIR', 'vectors sst', 'benchmarks/original_code/jain_wallace_reference.py --jw-repo=DIR',
                  'benchmarks/original_code/wiegreffe_pinter_reference.py --wp-repo=DIR', 'tests/fault_tool/fault_injection.py report'):
    assert command in entries, command
  interrupted = {entry for entry, bad in cells if bad == 'Ctrl-C'}
  assert {'run.py --workdir=DIR', 'studies run jw_grid --root=DIR', 'vectors sst --directory=DIR'} <= interrupted
  # Each folder a command writes its output into, read-only and on a full disk (issue 76).
  for bad in ('read-only', 'disk full'):
    assert {'run.py --workdir=DIR', 'report reproduce RUN --out DIR', 'report training RUN --save DIR',
            'studies report jw_grid --save DIR', 'vectors sst --directory=DIR'} <= {e for e, b in cells if b == bad}
  assert "report analyses RUN (a stage's summary.json {})" in {entry for entry, _ in cells}


def test_the_probe_cases_number_one_to_ten_with_ctrl_c_as_its_own_kind():
  numbers = {int(c.name.split(':')[0]) for c in fault_cases.odd_input_cases()}
  assert numbers == set(range(1, 11)) - {8}  # 8, Ctrl-C during training, is interrupt_case
  assert fault_cases.interrupt_case(3).kind.startswith('Ctrl-C during training')


def test_the_table_puts_each_outcome_in_its_cell():
  attempt = lambda entry, bad, outcome: {'kind': fault_matrix.KIND, 'entry': entry, 'bad': bad, 'outcome': outcome}
  record = {'faults': [{'fault': fault_matrix.KIND, 'attempts': [
      attempt('contents DIR', 'missing path', 'clear error'), attempt('contents DIR', 'empty', 'survived'),
      attempt('run.py --workdir=DIR', 'Ctrl-C', 'survived'), attempt('run.py --workdir=DIR', 'damaged', 'traceback'),
  ]}, {'fault': 'other', 'attempts': [{'kind': 'other', 'outcome': 'survived'}]}]}
  assert fault_matrix.table_rows(record) == [
      ['entry point', *fault_matrix.COLUMNS],
      ['`contents DIR`', 'one line', '·', 'ran', '·', '·', '·', '·'],
      ['`run.py --workdir=DIR`', '·', '·', '·', 'TRACEBACK', '·', '·', 'one line'],
  ]
