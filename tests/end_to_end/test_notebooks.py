"""The notebooks in notebooks/ run top to bottom, headless, on smoke configs.

Each notebook runs in a fresh Jupyter kernel (nbclient), started in
notebooks/ as Jupyter starts it, with its parameters replaced the way
papermill replaces them: a cell tagged `injected-parameters` right after the
cell tagged `parameters`. The quickstart gets `configs/synthetic.py:smoke`;
the paper notebooks get `configs/sst_bilstm.py:smoke` and need the real data
(ATTN_JAX_DATA; skipped without it: on the synthetic task they would compare
nothing with the papers, and their English example texts would be all UNK).
They share one workdir, in the order of PAPERS: the first trains the smoke
model, the others restore it (as `pipeline.run` does), and each analyses only
the first SMOKE_DOCS test documents, so the module adds about two minutes
(2 CPU cores, empty compilation cache), not tens.
"""

import ast
import copy
import glob
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from conftest import REAL_DATA
import helpers

nbformat = pytest.importorskip('nbformat')
needs_jupyter = pytest.mark.skipif(
    importlib.util.find_spec('nbclient') is None or importlib.util.find_spec('ipykernel') is None,
    reason='pip install -e ".[test]" (nbclient, ipykernel) to run the notebooks')

ROOT = helpers.ROOT
NOTEBOOKS = os.path.join(ROOT, 'notebooks')
QUICKSTART = 'quickstart'
PAPERS = ('jain_wallace', 'serrano_smith', 'wiegreffe_pinter', 'meister')  # the first trains
SMOKE_DOCS = 16  # one analysis batch: one compilation per stage
# Padded lengths 8 and 64 instead of the smoke config's 8, 16, 32, 64: half as
# many training programs to compile, for every model the notebooks train.
SMOKE_TRAINING = {'data.bucket_growth': 8.0}
CELL_TIMEOUT = 600
PARAMETER_NAMES = {'CONFIG', 'WORKDIR', 'OVERRIDES', 'MAX_DOCS'}


def notebook_names():
  return sorted(os.path.basename(p)[:-len('.ipynb')] for p in glob.glob(os.path.join(NOTEBOOKS, '*.ipynb')))


def read(name):
  with open(os.path.join(NOTEBOOKS, f'{name}.ipynb')) as f:
    return nbformat.read(f, as_version=4)


def tagged(nb, tag):
  return [i for i, cell in enumerate(nb.cells) if tag in cell.get('metadata', {}).get('tags', [])]


def assigned_names(source):
  return {t.id for node in ast.parse(source).body if isinstance(node, ast.Assign)
          for t in node.targets if isinstance(t, ast.Name)}


def inject(nb, parameters: dict):
  """A copy of `nb` with `parameters` assigned in a cell tagged
  `injected-parameters` after its `parameters` cell (replacing an earlier one)."""
  nb = copy.deepcopy(nb)
  nb.cells = [c for c in nb.cells if 'injected-parameters' not in c.get('metadata', {}).get('tags', [])]
  [index] = tagged(nb, 'parameters')
  source = '# Parameters injected by tests/end_to_end/test_notebooks.py\n' + '\n'.join(
      f'{name} = {value!r}' for name, value in parameters.items())
  nb.cells.insert(index + 1, nbformat.v4.new_code_cell(source, metadata={'tags': ['injected-parameters']}))
  return nb


# nbclient runs in a child process: the test process never loads jupyter_client,
# zmq or their event loop, so the notebooks cannot change the tests after them.
RUNNER = """
import sys
import nbclient, nbformat
source, target, kernel, cwd, timeout = sys.argv[1:]
nb = nbformat.read(source, as_version=4)
try:
  nbclient.NotebookClient(nb, timeout=int(timeout), kernel_name=kernel,
                          resources={'metadata': {'path': cwd}}).execute()
except nbclient.exceptions.CellExecutionError as e:
  print(e)
  sys.exit(3)
finally:
  nbformat.write(nb, target)
"""


@pytest.fixture(scope='module')
def kernel(tmp_path_factory):
  """(kernel name, environment): a kernelspec for this interpreter, so the
  notebooks run in the test's environment whatever other Python kernels the
  machine has, and their own compilation cache."""
  name = 'attn_jax_test'
  folder = tmp_path_factory.mktemp('jupyter')
  spec = folder / 'kernels' / name
  spec.mkdir(parents=True)
  (spec / 'kernel.json').write_text(json.dumps({
      'argv': [sys.executable, '-m', 'ipykernel_launcher', '-f', '{connection_file}'],
      'display_name': 'attn-jax tests', 'language': 'python'}))
  paths = [str(folder)] + ([os.environ['JUPYTER_PATH']] if os.environ.get('JUPYTER_PATH') else [])
  # The notebooks share a compilation cache of their own: what they compile
  # never reaches the cache the other tests read.
  cache = str(tmp_path_factory.mktemp('notebook_compilation_cache'))
  return name, {**os.environ, 'JUPYTER_PATH': os.pathsep.join(paths), 'ATTN_JAX_COMPILATION_CACHE': cache}


def execute(nb, name, kernel, folder):
  """`nb` executed in a fresh kernel started in notebooks/; a cell that raises
  fails the test with its number, its source and the error."""
  kernel_name, env = kernel
  source, target = os.path.join(folder, f'{name}.ipynb'), os.path.join(folder, f'{name}.out.ipynb')
  with open(source, 'w') as f:
    nbformat.write(nb, f)
  result = subprocess.run([sys.executable, '-c', RUNNER, source, target, kernel_name, NOTEBOOKS,
                           str(CELL_TIMEOUT)], capture_output=True, text=True, env=env, check=False)
  executed = nbformat.read(target, as_version=4) if os.path.exists(target) else None
  if result.returncode:
    failed = next((i for i, c in enumerate(executed.cells if executed else []) if c.cell_type == 'code'
                   and any(o.get('output_type') == 'error' for o in c.get('outputs', []))), None)
    where = f'cell {failed} of' if failed is not None else 'a cell of'
    pytest.fail(f'{where} {name}.ipynb raised:\n{result.stdout.strip() or result.stderr[-4000:]}',
                pytrace=False)
  return executed


def outputs(nb, mime):
  return [o['data'][mime] for c in nb.cells if c.cell_type == 'code' for o in c.get('outputs', [])
          if mime in o.get('data', {})]


def test_every_notebook_is_stripped_has_a_parameters_cell_and_a_setup_cell():
  names = notebook_names()
  assert QUICKSTART in names and set(PAPERS) <= set(names)
  assert set(names) <= {QUICKSTART, *PAPERS}, 'a new notebook needs its smoke parameters in this file'
  for name in names:
    nb = read(name)
    code = [c for c in nb.cells if c.cell_type == 'code']
    for i, cell in enumerate(code):
      assert not cell.get('outputs') and cell.get('execution_count') is None, (
          f'{name}.ipynb code cell {i} has outputs: strip them (jupyter nbconvert --clear-output '
          '--inplace notebooks/*.ipynb)')
    parameters = tagged(nb, 'parameters')
    assert len(parameters) == 1, f'{name}.ipynb needs exactly one cell tagged "parameters"'
    cell = nb.cells[parameters[0]]
    assert cell.cell_type == 'code' and PARAMETER_NAMES <= assigned_names(cell.source), (
        f'{name}.ipynb: its parameters cell must assign {sorted(PARAMETER_NAMES)}')
    assert not tagged(nb, 'injected-parameters'), f'{name}.ipynb holds injected parameters'
    setup = code[0].source
    assert "'google.colab' in sys.modules" in setup and 'REPO_URL' in setup and 'jax.devices()' in setup, (
        f'{name}.ipynb must start with the set-up cell (Colab or local, data, devices)')
    assert nb.cells.index(code[0]) < parameters[0]


def test_injection_replaces_earlier_injected_parameters():
  nb = nbformat.v4.new_notebook(cells=[
      nbformat.v4.new_code_cell("CONFIG = 'a'", metadata={'tags': ['parameters']}),
      nbformat.v4.new_code_cell('print(CONFIG)')])
  twice = inject(inject(nb, {'CONFIG': 'b'}), {'CONFIG': 'c', 'OVERRIDES': {'x.y': None}})
  assert [c.source.splitlines()[-1] for c in twice.cells] == ["CONFIG = 'a'", "OVERRIDES = {'x.y': None}",
                                                              'print(CONFIG)']
  assert "CONFIG = 'c'" in twice.cells[1].source and len(nb.cells) == 2


@needs_jupyter
def test_a_cell_that_raises_fails_the_run_with_the_cell_shown(kernel, tmp_path):
  nb = nbformat.v4.new_notebook(cells=[
      nbformat.v4.new_code_cell('x = 1'), nbformat.v4.new_code_cell("raise ValueError('planted failure')")])
  with pytest.raises(pytest.fail.Exception, match=r"(?s)cell 1 of broken\.ipynb.*raise ValueError.*planted failure"):
    execute(nb, 'broken', kernel, tmp_path)


@pytest.fixture(scope='module')
def paper_workdir(tmp_path_factory):
  """One SST smoke workdir for every paper notebook: trained by the first."""
  return str(tmp_path_factory.mktemp('notebooks') / 'sst_bilstm_smoke')


@pytest.mark.heavy
@needs_jupyter
def test_quickstart_runs(kernel, tmp_path):
  nb = execute(inject(read(QUICKSTART), {
      'CONFIG': 'configs/synthetic.py:smoke', 'WORKDIR': str(tmp_path / 'synthetic'),
      'OVERRIDES': SMOKE_TRAINING, 'MAX_DOCS': SMOKE_DOCS}), QUICKSTART, kernel, tmp_path)
  assert any('ŷ =' in html for html in outputs(nb, 'text/html'))  # the explanations' heatmaps
  assert len(outputs(nb, 'image/png')) >= 3  # training curves, the stages' figures, the attention mass


@pytest.mark.heavy
@needs_jupyter
@pytest.mark.skipif(not REAL_DATA, reason='set ATTN_JAX_DATA to the data folder (../shared/data) to run')
@pytest.mark.parametrize('name', PAPERS)
def test_paper_notebook_runs_on_the_sst_smoke_config(name, kernel, paper_workdir, tfds_dir, tmp_path):
  overrides = {**SMOKE_TRAINING, 'data.tfds_data_dir': tfds_dir}  # the prepared data test_real_data shares
  parameters = {'CONFIG': 'configs/sst_bilstm.py:smoke', 'WORKDIR': paper_workdir,
                'OVERRIDES': overrides, 'MAX_DOCS': SMOKE_DOCS}
  if name == 'meister':  # two λ, the fewest the sweep takes: each λ's model compiles its own analyses
    parameters['OVERRIDES'] = {**overrides, 'experiment.sparsegen_sweep.lambdas': '0,0.5'}
    parameters['SPARSE_WORKDIR'] = paper_workdir + '_sparsemax'
  nb = execute(inject(read(name), parameters), name, kernel, tmp_path)
  assert outputs(nb, 'image/png'), f'{name}.ipynb showed no figure'
  assert any('ŷ' in html for html in outputs(nb, 'text/html')), f'{name}.ipynb showed no heatmap'
