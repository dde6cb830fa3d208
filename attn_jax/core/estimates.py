"""How long a long step will take, said before (or early in) it.

Two sources of a rate:
- a loop that measures itself (`Estimate`: training's steps, an analysis
  stage's batches) says once, after its first batches that compiled nothing,
  how long the rest will take;
- a step that cannot measure itself before it starts (the word vectors,
  trained in a gensim child process; tfds's data preparation) looks up the
  rate an earlier run measured on this machine (`MeasuredRates`, a small JSON
  file beside the caches), and records its own when it ends; with none
  measured here, the rate a committed benchmark measured on a machine with
  as many cores (`committed_rate`: results/benchmarks/*.json with `rates`).
"""

import datetime
import glob
import json
import os
import platform
from typing import Callable, Optional

from attn_jax.core import atomic_io
from attn_jax.core.errors import StorageError

RATES_ENV_VAR = 'ATTN_JAX_RATES'


def duration(seconds: float) -> str:
  """'42 s', '12 min', '1.5 h' or '> 1000 h'."""
  if not seconds < 3.6e6:  # also inf and NaN
    return '> 1000 h'
  if seconds < 90:
    return f'{seconds:.0f} s'
  if seconds < 5400:
    return f'{seconds / 60:.0f} min'
  return f'{seconds / 3600:.1f} h'


def available_cores() -> int:
  """The CPU cores this process may run on (its affinity, else the machine's)."""
  try:
    return len(os.sched_getaffinity(0))
  except AttributeError:  # macOS, Windows
    return os.cpu_count() or 1


def machine() -> str:
  """What a measured rate is a rate of: this machine's cores and processor."""
  return f'{available_cores()} cores, {platform.processor() or platform.machine()}'


class Estimate:
  """Says once, early, how long a loop will take: from its first units of
  work that compiled nothing (work per second), times the work left, plus
  the compilations still to come. A progress bar then keeps the time left up
  to date (`seconds_left`).

  `add(cost, seconds, compiling, new_shape)` after each unit: its cost (any
  measure of work), its wall time, the seconds of that spent compiling
  (`compilation.seconds()` before and after) and whether it was the first
  unit of its shape. `shapes`: how many shapes the units to come have, each
  compiled once. A loop over many shapes can spend most of its time
  compiling (S&S's erasure stage on long, bucketed reviews: 90 % of it), so
  the work rate alone would promise a fraction of the real time.
  """

  def __init__(self, name: str, total_cost: float, log: Callable[[str], None],
               min_seconds: float = 2.0, unit: Optional[str] = None, shapes: int = 0, caveat: str = ''):
    self.name, self.left, self.log, self.min_seconds, self.unit = name, total_cost, log, min_seconds, unit
    self.caveat = caveat  # what could make it end sooner, said with the estimate
    self.cost = self.seconds = 0.0
    self.shapes_left, self.shapes_seen, self.compile_seconds = shapes, 0, 0.0
    self.said = total_cost <= 0

  def add(self, cost: float, seconds: float, compiling: float, new_shape: bool = False) -> None:
    self.left -= cost
    if new_shape:  # its compile time, or none where a cache had it, is a sample of what is to come
      self.shapes_left, self.shapes_seen = max(self.shapes_left - 1, 0), self.shapes_seen + 1
      self.compile_seconds += compiling
    if compiling < 0.1 * seconds:  # a unit that ran compiled code only
      self.cost, self.seconds = self.cost + cost, self.seconds + seconds
    if self.left <= 0:  # nothing more to wait for
      self.said = True
    if self.said or not (self.cost and self.seconds >= self.min_seconds):
      return
    if self.shapes_left and not self.shapes_seen:
      return  # no compilation measured yet
    self.said = True
    rate = f'{self.left:,.0f} {self.unit} at {self.rate():.1f} {self.unit}/s, ' if self.unit else ''
    compiles = (f', and {self.shapes_left} more shapes to compile at about '
                f'{duration(self.compile_seconds / self.shapes_seen)} each' if self.shapes_left else '')
    self.log(f'{self.name}: about {duration(self.seconds_left())} more ({rate}measured on the '
             f'{self.unit or "batches"} so far{compiles}{"; " + self.caveat if self.caveat else ""}; '
             'the bar keeps the estimate up to date)')

  def seconds_left(self) -> Optional[float]:
    """The work left at the measured rate plus the shapes left at the mean
    compile time per shape so far; None before a unit that compiled nothing."""
    if not self.rate():
      return None
    compiling = self.shapes_left * self.compile_seconds / self.shapes_seen if self.shapes_seen else 0.0
    return max(self.left, 0.0) / self.rate() + compiling

  def rate(self) -> Optional[float]:
    """Work per second over every unit so far that compiled nothing (None before one)."""
    return self.cost / self.seconds if self.cost and self.seconds > 0 else None


def rates_path() -> str:
  return os.environ.get(RATES_ENV_VAR) or os.path.join(
      os.path.expanduser('~'), '.cache', 'attn_jax', 'rates.json')


MIN_RATE = 1e-6  # per second: slower than this is not a rate anything here measured


class MeasuredRates:
  """Rates measured by earlier runs, by this machine (`machine()`) and by
  what was measured (a string key, e.g. the vectors recipe and threads):
  {machine: {key: {'rate', 'unit', 'measured'}}} in `rates_path()`. A
  missing or damaged file is no rates; one that cannot be written is no
  loss (an estimate is advice)."""

  def __init__(self, path: Optional[str] = None):
    self.path = path or rates_path()

  def _all(self) -> dict:
    found = atomic_io.read_json_object(self.path)
    return found if isinstance(found, dict) else {}

  def _machine(self, rates: dict) -> dict:
    """This machine's entries; anything else there (a list, a string) is none."""
    entries = rates.get(machine())
    return entries if isinstance(entries, dict) else {}

  def get(self, key: str) -> Optional[float]:
    entry = self._machine(self._all()).get(key)
    rate = entry.get('rate') if isinstance(entry, dict) else None
    # A rate that would give an absurd estimate (1e-300 steps/s) is garbage too.
    return float(rate) if isinstance(rate, (int, float)) and not isinstance(rate, bool) and rate > MIN_RATE else None

  def put(self, key: str, rate: float, unit: str) -> None:
    rates = self._all()
    rates[machine()] = self._machine(rates)
    rates[machine()][key] = {
        'rate': round(rate, 3), 'unit': unit,
        'measured': datetime.datetime.now().isoformat(timespec='seconds')}
    try:
      os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
      atomic_io.write_json(self.path, rates)
    except (OSError, StorageError):
      pass


def benchmarks_directory() -> str:
  """results/benchmarks of the checkout this package is in (absent in an installed wheel)."""
  package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  return os.path.join(os.path.dirname(package), 'results', 'benchmarks')


def committed_rate(key: str) -> Optional[tuple[float, str]]:
  """The rate of `key` a committed benchmark measured on a machine with as
  many cores as this one (its `rates`, as `MeasuredRates` keeps them), and
  that benchmark's file relative to the checkout; None if none did."""
  cores = f'{available_cores()} cores, '
  for path in sorted(glob.glob(os.path.join(benchmarks_directory(), '*.json'))):
    rates = (atomic_io.read_json_object(path) or {}).get('rates')
    for host, entries in (rates.items() if isinstance(rates, dict) else ()):
      entry = entries.get(key) if host.startswith(cores) and isinstance(entries, dict) else None
      if isinstance(entry, dict) and isinstance(entry.get('rate'), (int, float)) and entry['rate'] > 0:
        return float(entry['rate']), os.path.relpath(path, os.path.dirname(os.path.dirname(benchmarks_directory())))
  return None


def key(**parts) -> str:
  """A stable key of what a rate was measured on."""
  return json.dumps(parts, sort_keys=True)
