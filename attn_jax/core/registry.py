"""Registries: what attn-jax can run, declared where each thing is built.

An analysis stage, an experiment, an encoder family, a dataset or a report command
declares its name, its paper and (stages, experiments) its config section, and registers itself when
its module is imported:

    LOO = registry.STAGES.register(Stage(name='loo', paper='jw', order=20, ...))

Lower layers read a registry without importing what fills it: the first
read imports every module of the registry's package by name (as big_vision
finds its evaluators by name), so `attn_jax.config` lists the stages and
builds their sections while the import graph runs one way (config < stages).
A registry lists its entries by `order` (the running order of stages and
experiments; the order of rows and sections in reports).
"""

import contextlib
import dataclasses
import difflib
import importlib
import pkgutil
import sys
import threading
from typing import Any, Callable, Iterator, Mapping

from attn_jax import papers


@dataclasses.dataclass(frozen=True)
class Section:
  """The config section a stage or experiment owns (`config.analysis.<name>`,
  `config.experiment.<name>`).

  defaults: (dataset, encoder, variant) -> the section's keys and values
    ({} or None: the entry has no section).
  check: (section, run config) -> an error message or None, before any work.
  choices: key -> its allowed values (checked, and listed by `run.py --help`).
  help: key -> what it does, for `run.py --help` ("Often used").
  added: keys added after results were first keyed -> the value that computes
    what ran before they existed (results keyed before stay valid at it).
  runtime: keys that change where or how fast, not what is computed (a
    finished result is reused under other values of these).
  """
  defaults: Callable[[str, str, str], Any] = lambda dataset, encoder, variant: None
  check: Callable[[Any, Any], str | None] = lambda section, cfg: None
  choices: Mapping[str, tuple] = dataclasses.field(default_factory=dict)
  help: Mapping[str, str] = dataclasses.field(default_factory=dict)
  added: Mapping[str, Any] = dataclasses.field(default_factory=dict)
  runtime: tuple[str, ...] = ()

  def key_items(self, values: Mapping[str, Any]) -> dict:
    """The section's values that key a result: all of them but the `runtime`
    keys, and the `added` keys at their old value (so results keyed before a
    key existed stay found). The section is the component's signature: a key
    added later touches `defaults` and `added`, nothing else.

    Args:
      values: the section as configured (`config.analysis.<name>`), flat.

    Returns:
      {key: value} for the result's key.
    """
    return {k: v for k, v in values.items()
            if k not in self.runtime and not (k in self.added and v == self.added[k])}


class Registry:
  """Entries with `name`, `paper` and `order`, filled by the modules of
  `package`, and by the `also` modules (higher layers that register entries
  here: imported by name when the registry is first read, never by an import
  statement of a lower layer)."""

  def __init__(self, kind: str, package: str, also: tuple[str, ...] = ()):
    self.kind = kind
    self.package = package
    self.also = also
    self._entries: dict[str, Any] = {}
    self._origins: dict[str, str] = {}
    self._loaded = False
    self._lock = threading.RLock()

  def register(self, entry):
    """Adds `entry`; returns it, so a module can write `X = REGISTRY.register(...)`."""
    paper = getattr(entry, 'paper', None)  # report commands name none (their `papers` may be several)
    if paper is not None and paper not in papers.PAPERS:
      raise ValueError(f'{self.kind} {entry.name!r} names paper {paper!r}; the papers are '
                       f'{", ".join(papers.PAPERS)} (attn_jax/papers/__init__.py)')
    origin = sys._getframe(1).f_globals.get('__name__')  # pylint: disable=protected-access
    with self._lock:
      # A module run again (importlib.reload, a notebook) registers its
      # entries anew; another module may not take a registered name.
      if self._origins.get(entry.name, origin) != origin:
        raise ValueError(f'two {self.kind}s are named {entry.name!r}: in {self._origins[entry.name]} '
                         f'and in {origin}')
      self._entries[entry.name] = entry
      self._origins[entry.name] = origin
    return entry

  @contextlib.contextmanager
  def registered(self, entry):
    """`entry` registered for the `with` block only (a test or a notebook
    trying an entry without adding a module); its name must be free."""
    self.load()
    with self._lock:
      if entry.name in self._entries:
        raise ValueError(f'{self.kind} {entry.name!r} is registered already')
      self._entries[entry.name] = entry
      self._origins[entry.name] = '<registered>'
    try:
      yield entry
    finally:
      with self._lock:
        self._entries.pop(entry.name, None)
        self._origins.pop(entry.name, None)

  def load(self) -> 'Registry':
    """Imports every module of the package once, so that every entry is registered."""
    with self._lock:
      if not self._loaded:
        self._loaded = True
        package = importlib.import_module(self.package)
        for info in pkgutil.iter_modules(package.__path__):
          importlib.import_module(f'{self.package}.{info.name}')
        for module in self.also:
          importlib.import_module(module)
    return self

  def _ordered(self) -> list:
    self.load()
    return sorted(self._entries.values(), key=lambda e: (e.order, e.name))

  def names(self) -> tuple[str, ...]:
    return tuple(e.name for e in self._ordered())

  def values(self) -> list:
    return self._ordered()

  def items(self) -> list[tuple[str, Any]]:
    return [(e.name, e) for e in self._ordered()]

  def of_paper(self, paper: str) -> list:
    return [e for e in self._ordered() if e.paper == paper]

  def __iter__(self) -> Iterator[str]:
    return iter(self.names())

  def __len__(self) -> int:
    return len(self.names())

  def __contains__(self, name) -> bool:
    self.load()
    return name in self._entries

  def __getitem__(self, name: str):
    self.load()
    if name not in self._entries:
      raise KeyError(self.unknown(name))
    return self._entries[name]

  def get(self, name: str, default=None):
    """The entry of `name`, or `default` (as a dict's `get`)."""
    self.load()
    return self._entries.get(name, default)

  def __setitem__(self, name: str, entry) -> None:
    """Replaces the entry of a registered `name` (tests wrap a stage's compute)."""
    if name not in self or entry.name != name:
      raise KeyError(f'{self.kind} {name!r}: only a registered entry can be replaced, by one of its name')
    self._entries[name] = entry

  def unknown(self, name: str) -> str:
    """'unknown <kind> NAME (did you mean ...?)', for error messages."""
    close = difflib.get_close_matches(name, self.names(), n=1)
    hint = f' (did you mean {close[0]!r}?)' if close else ''
    return f'unknown {self.kind} {name!r}{hint}'


# The registries below config: it derives its stage, experiment, encoder and
# dataset keys, choices and help from them (attn_jax/config). The reports' own
# registries are in attn_jax/tables/report_registry.py.
STAGES = Registry('analysis', 'attn_jax.stages')
EXPERIMENTS = Registry('experiment', 'attn_jax.experiments')
ENCODERS = Registry('encoder', 'attn_jax.models.encoders')
DATASETS = Registry('dataset', 'attn_jax.data.datasets')
# Importance measures ([B, L] scores of any model; `attn_jax.analysis.measure.Measure`),
# each registered by the module of attn_jax/analysis/ that computes it.
MEASURES = Registry('importance measure', 'attn_jax.analysis')


def with_requirements(reg: Registry, names) -> tuple[str, ...]:
  """`names` plus, transitively, the entries they require, in registry order."""
  wanted, todo = set(), list(names)
  while todo:
    name = todo.pop()
    if name not in wanted:
      wanted.add(name)
      todo.extend(reg[name].requires)
  return tuple(n for n in reg.names() if n in wanted)
