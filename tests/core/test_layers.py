"""The package's layers, read from its own imports: no circles, and every
import points down (or sideways) in docs/architecture.md's order.

A lower layer that needs what a higher one registers (config lists the
stages; the report CLI lists the report commands) reads a registry, which
imports the higher package by name at run time: no import statement."""

import ast
import os
import helpers

ROOT = helpers.ROOT
PACKAGE = os.path.join(ROOT, 'attn_jax')
# Lowest first; a module may import from its own layer and those below.
LAYERS = (
    ('attn_jax.papers', 'attn_jax.core'),
    ('attn_jax.data', 'attn_jax.models', 'attn_jax.plots'),
    ('attn_jax.analysis',),
    ('attn_jax.training',),
    ('attn_jax.config',),
    ('attn_jax.stages', 'attn_jax.vectors'),
    ('attn_jax.workdirs',),
    ('attn_jax.experiments',),
    ('attn_jax.pipeline', 'attn_jax.tables', 'attn_jax.explain', 'attn_jax.contents'),
    ('attn_jax.studies', 'attn_jax.report', 'attn_jax'),
)
MAX_TOP_LEVEL_MODULES = 8


def modules() -> dict[str, str]:
  found = {}
  for folder, _, files in os.walk(PACKAGE):
    for name in files:
      if name.endswith('.py'):
        path = os.path.join(folder, name)
        module = os.path.relpath(path, ROOT)[:-3].replace(os.sep, '.')
        found[module.removesuffix('.__init__')] = path
  return found


def imports(found: dict[str, str]) -> dict[str, set[str]]:
  """module -> the attn_jax modules it imports (in functions too)."""
  def resolve(name):
    while name and name not in found:
      name = name.rpartition('.')[0]
    return name

  edges = {}
  for module, path in found.items():
    with open(path) as f:
      tree = ast.parse(f.read())
    package = module if path.endswith('__init__.py') else module.rpartition('.')[0]
    targets = set()
    for node in ast.walk(tree):
      if isinstance(node, ast.Import):
        targets |= {resolve(a.name) for a in node.names if a.name.startswith('attn_jax')}
      elif isinstance(node, ast.ImportFrom):
        base = node.module or ''
        if node.level:
          base = '.'.join(package.split('.')[:len(package.split('.')) - node.level + 1] + ([base] if base else []))
        if base.startswith('attn_jax'):
          targets |= {resolve(f'{base}.{a.name}') for a in node.names}
    edges[module] = targets - {module, ''}
  return edges


def layer(module: str) -> int:
  best = None
  for rank, prefixes in enumerate(LAYERS):
    for prefix in prefixes:
      if module == prefix or module.startswith(prefix + '.'):
        if best is None or len(prefix) > best[1]:
          best = (rank, len(prefix))
  assert best is not None, f'{module} is in no layer of tests/core/test_layers.py (and of docs/architecture.md)'
  return best[0]


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
  """The strongly connected components of more than one module (Tarjan)."""
  index, low, stack, on, out = {}, {}, [], set(), []

  def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v)
    on.add(v)
    for w in edges.get(v, ()):
      if w not in index:
        visit(w)
        low[v] = min(low[v], low[w])
      elif w in on:
        low[v] = min(low[v], index[w])
    if low[v] == index[v]:
      component = []
      while True:
        w = stack.pop()
        on.discard(w)
        component.append(w)
        if w == v:
          break
      if len(component) > 1:
        out.append(sorted(component))

  for v in edges:
    if v not in index:
      visit(v)
  return out


def test_the_resolver_reads_relative_and_in_function_imports(tmp_path):
  assert layer('attn_jax.core.errors') < layer('attn_jax.config.schema') < layer('attn_jax.stages.loo_x')
  assert cycles({'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}) == [['a', 'b', 'c']]


def test_no_import_circles():
  assert cycles(imports(modules())) == []


def test_imports_run_one_way():
  wrong = [f'{a} (layer {layer(a)}) imports {b} (layer {layer(b)})'
           for a, targets in imports(modules()).items() for b in targets if layer(b) > layer(a)]
  assert wrong == []


def test_few_modules_at_the_top():
  top = [n for n in os.listdir(PACKAGE) if n.endswith('.py')]
  assert len(top) <= MAX_TOP_LEVEL_MODULES, sorted(top)


# One name per paper in every layer, so that searching a paper's name finds all
# of it: a module named for a paper spells it out (`attn_jax.papers` keys are
# the short forms that stages and reports declare, not module names).
PAPER_NAMES = {'jw': 'jain_wallace', 'wp': 'wiegreffe_pinter', 'ss': 'serrano_smith'}


def paper_name_problems(paths) -> list[str]:
  """The module paths whose name abbreviates a paper (`ss_models.py`,
  `reports/wp/…`), each with the name it should use."""
  problems = []
  for path in paths:
    for part in path.replace('.py', '').split(os.sep):
      for word in part.split('_'):
        if word in PAPER_NAMES:
          problems.append(f'{path}: {word!r} abbreviates a paper; name it {PAPER_NAMES[word]}_…')
  return problems


def test_the_naming_rule_catches_an_abbreviated_paper():
  assert paper_name_problems([os.path.join('reports', 'ss_models.py'), os.path.join('plots', 'wp', 'a.py'),
                              os.path.join('studies', 'jw_grid.py')]) != []
  assert len(paper_name_problems([os.path.join('reports', 'ss_models.py')])) == 1
  assert paper_name_problems([os.path.join('reports', 'serrano_smith_models.py'), 'meister.py',
                              os.path.join('analysis', 'loss.py')]) == []


def test_every_module_test_and_benchmark_names_its_paper_in_full():
  for top in (PACKAGE, os.path.join(ROOT, 'tests'), os.path.join(ROOT, 'benchmarks')):
    paths = [os.path.relpath(os.path.join(folder, name), top)
             for folder, _, names in os.walk(top) for name in names if name.endswith('.py')]
    assert paper_name_problems(paths) == [], top


def run_config_parameters(paths) -> list[str]:
  """`file:function(cfg)` for every function in `paths` with a parameter named
  like the run config (`cfg`, `config`): the bottom layer takes values."""
  found = []
  for path in paths:
    with open(path) as f:
      tree = ast.parse(f.read())
    for node in ast.walk(tree):
      if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        names = [a.arg for a in node.args.args + node.args.kwonlyargs]
        found += [f'{os.path.basename(path)}:{node.name}({n})' for n in names if n in ('cfg', 'config')]
  return found


def test_the_core_takes_values_not_the_run_config(tmp_path):
  probe = tmp_path / 'probe.py'
  probe.write_text('def guarded(path, cfg):\n  pass\n')
  assert run_config_parameters([str(probe)]) == ['probe.py:guarded(cfg)']
  core = [p for m, p in modules().items() if m.startswith('attn_jax.core.') or m == 'attn_jax.core']
  # registry.Section.check receives (section, cfg) by contract: a callback a
  # component supplies, not a core function that reads the config itself.
  assert run_config_parameters(core) == []


# Parallel packages whose modules are one per dataset (docs/architecture.md, Layers).
PARALLEL = (('attn_jax.data.builders', 'attn_jax.data.datasets'),)


def shared_names(found: dict[str, str]) -> dict[str, list[str]]:
  """File name -> the modules that share it, less `__init__`/`__main__` and
  the parallel packages' one-per-dataset modules."""
  by_name = {}
  for module, path in found.items():
    name = os.path.basename(path)
    if name not in ('__init__.py', '__main__.py'):
      by_name.setdefault(name, []).append(module)
  parallel = lambda modules: len(modules) == 2 and any(
      sorted(m.rpartition('.')[0] for m in modules) == sorted(pair) for pair in PARALLEL)
  return {n: sorted(ms) for n, ms in by_name.items() if len(ms) > 1 and not parallel(ms)}


def test_the_name_check_finds_a_shared_name():
  assert shared_names({'attn_jax.a.runner': 'a/runner.py', 'attn_jax.b.runner': 'b/runner.py',
                       'attn_jax.data.builders.sst': 'x/sst.py', 'attn_jax.data.datasets.sst': 'y/sst.py'}) == {
                           'runner.py': ['attn_jax.a.runner', 'attn_jax.b.runner']}


def test_no_two_modules_share_a_file_name():
  assert shared_names(modules()) == {}
