"""Run by tests/end_to_end/test_devices.py in a process with 8 host CPU devices
(XLA_FLAGS=--xla_force_host_platform_device_count=8, set before JAX loads):
the same runs on one device and on eight, their results compared.

    python tests/devices_check.py ROOT
"""

import glob
import json
import os
import shutil
import sys

import jax
import numpy as np

jax.config.update('jax_numpy_rank_promotion', 'raise')

from attn_jax import config as config_lib, pipeline  # noqa: E402
from attn_jax.workdirs.restore import restore  # noqa: E402


def config(devices, **train):
  cfg = config_lib.default_config('synthetic', 'bilstm', 'smoke')
  cfg.devices, cfg.train.progress = devices, False
  # One batch of 16 documents, 2 per device: sharding happens within a batch,
  # and one batch shape is one compilation per stage and device count.
  cfg.analysis.max_docs = 16
  for key, value in train.items():
    cfg.train[key] = value
  return cfg


def stage_results(workdir):
  out = {}
  for path in sorted(glob.glob(os.path.join(workdir, 'analyses', '*', '*', 'results.npz'))):
    with np.load(path) as f:
      out.update({f'{path.split(os.sep)[-3]}/{k}': f[k] for k in f.files})
  summaries = sorted(glob.glob(os.path.join(workdir, 'analyses', '*', '*', 'summary.json')))
  compile_seconds = [json.load(open(s))['compile_seconds'] for s in summaries]
  return out, compile_seconds


def largest_difference(a: dict, b: dict) -> float:
  assert sorted(a) == sorted(b), (sorted(a), sorted(b))
  return max(float(np.nanmax(np.abs(np.asarray(a[k], np.float64) - np.asarray(b[k], np.float64))))
             if np.size(a[k]) else 0.0 for k in a)


def params_difference(root_a, root_b, names):
  worst = 0.0
  for name in names:
    pa, pb = restore(os.path.join(root_a, name)).params, restore(os.path.join(root_b, name)).params
    worst = max([worst] + [float(np.max(np.abs(np.asarray(x) - np.asarray(y))))
                           for x, y in zip(jax.tree.leaves(pa), jax.tree.leaves(pb))])
  return worst


def main(root):
  report = {'devices': len(jax.devices())}
  quiet = lambda _: None
  runs = {}
  for n in (1, 8):  # every stage, the batch's documents split over n devices
    if n == 8:  # the same trained model (`devices` keys no training): restored, not trained again
      shutil.copytree(os.path.join(root, 'stages1'), os.path.join(root, 'stages8'),
                      ignore=shutil.ignore_patterns('analyses'))
    pipeline.run(config(n), os.path.join(root, f'stages{n}'), log=quiet)
    runs[n], compile_seconds = stage_results(os.path.join(root, f'stages{n}'))
  report['stages_max_difference'] = largest_difference(runs[1], runs[8])
  report['stage_arrays'] = len(runs[1])
  report['compile_seconds'] = compile_seconds
  for executor in ('vmap', 'loop'):  # 4 models of one program over 1 and 8 devices
    for n in (1, 8):
      cfg = config(n, model_axis=executor)
      cfg.sweep, cfg.analyses = 'seed=0,1,2,3', ''
      pipeline.run(cfg, os.path.join(root, f'{executor}{n}'), log=quiet)
    report[f'{executor}_params_max_difference'] = params_difference(
        os.path.join(root, f'{executor}1'), os.path.join(root, f'{executor}8'),
        [f'seed{s}' for s in range(4)])
  print(json.dumps(report))


if __name__ == '__main__':
  main(sys.argv[1])
