"""Follows the run config through `pipeline.run`: how often it crosses from
one group of modules to another, and how often it climbs back up a layer.

`pipeline.run` trains and analyses a small model under `sys.setprofile`;
every call of an attn_jax function that is given a config (an
`ml_collections.ConfigDict`: the run config or one of its sections, such as
`cfg.train`) is recorded by its module. Over that sequence of modules, with
consecutive calls in one module taken as one visit:

  crossings  consecutive visits in different groups; a group is a prefix of
             `tests/core/test_layers.LAYERS` (attn_jax.training, attn_jax.core, ...)
  climbs     consecutive visits whose second is in a higher layer than the
             first: control came back up and the config was handed on again
  visits     per module, how many separate times the config reached it

Usage (from the repository root; the data folder is not read):
  python tests/structure_tool/follow_config.py [--variant=smoke] [--json=FILE]
"""

import argparse
import collections
import json
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [ROOT, os.path.join(ROOT, 'tests'), os.path.join(ROOT, 'tests', 'core')]

import ml_collections  # noqa: E402

import test_layers  # noqa: E402  (the layers as the tree declares them)


def group(module: str) -> str:
  """The longest prefix of `test_layers.LAYERS` that holds `module`."""
  found = [p for prefixes in test_layers.LAYERS for p in prefixes
           if module == p or module.startswith(p + '.')]
  return max(found, key=len)


def record_calls(run) -> list[str]:
  """The modules of the attn_jax calls given a config while `run()` runs, in order."""
  calls = []

  def profile(frame, event, arg):
    del arg
    if event != 'call':
      return
    module = frame.f_globals.get('__name__', '')
    if not module.startswith('attn_jax'):
      return
    code = frame.f_code
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    if any(isinstance(frame.f_locals.get(n), ml_collections.ConfigDict) for n in names):
      calls.append(module)

  sys.setprofile(profile)
  try:
    run()
  finally:
    sys.setprofile(None)
  return calls


def count(calls: list[str]) -> dict:
  """Crossings, climbs and visits per module of a sequence of calls' modules."""
  visits = [m for i, m in enumerate(calls) if i == 0 or calls[i - 1] != m]
  pairs = list(zip(visits, visits[1:]))
  return {
      'calls': len(calls),
      'groups': sorted({group(m) for m in visits}),
      'crossings': sum(group(a) != group(b) for a, b in pairs),
      'climbs': sum(test_layers.layer(b) > test_layers.layer(a) for a, b in pairs),
      'visits': dict(collections.Counter(visits).most_common()),
  }


def smoke_run(variant: str):
  """A function that runs `pipeline.run` on the synthetic task's config."""
  from attn_jax import config as config_lib, pipeline  # pylint: disable=g-import-not-at-top
  cfg = config_lib.default_config('synthetic', 'bilstm', variant)
  cfg.train.progress = False

  def run():
    with tempfile.TemporaryDirectory() as workdir:
      pipeline.run(cfg, os.path.join(workdir, 'run'), log=lambda _: None)
  return run


def main(argv=None) -> dict:
  parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument('--variant', default='smoke', help='of the synthetic config (default: smoke)')
  parser.add_argument('--json', help='also write the counts to this file')
  args = parser.parse_args(argv)
  counts = count(record_calls(smoke_run(args.variant)))
  print(f'{counts["calls"]} calls given a config; {len(counts["groups"])} groups; '
        f'{counts["crossings"]} crossings between groups; {counts["climbs"]} climbs back up a layer')
  for module, n in list(counts['visits'].items())[:8]:
    print(f'  {module}: visited {n} times')
  if args.json:
    with open(args.json, 'w') as f:
      json.dump(counts, f, indent=1)
  return counts


if __name__ == '__main__':
  main()
