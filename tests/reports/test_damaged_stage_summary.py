"""`report analyses RUN` on a run whose stage summary.json is `{}` (it parses
but records nothing, issue 76): the other stages are shown and one line names
the damaged file and the fix; nothing is left out silently."""

import glob
import os
import shutil

from attn_jax.tables import report_command_line as report_cli
import helpers


def test_an_empty_stage_summary_is_named_damaged_in_one_line(tmp_path, capsys):
  run = tmp_path / 'sst_bilstm'
  shutil.copytree(os.path.join(helpers.ROOT, 'results', 'sst_bilstm'), run)
  summary, = glob.glob(str(run / 'analyses' / 'loo' / '*' / 'summary.json'))
  with open(summary, 'w') as f:
    f.write('{}')
  report_cli.main(['analyses', str(run)])
  out = capsys.readouterr().out
  named = [line for line in out.splitlines() if summary in line]
  assert named == [f'{run}: loo not shown, damaged: {summary} is not a stage summary (it records no key): '
                   'rerun the stage, or restore the file']
  assert 'adversarial max JSD' in out  # the intact stages are still shown
