"""Time estimates: a loop that measures itself says once how long it will
take; rates measured by earlier steps are kept by machine and read back."""

import json

from attn_jax.core import estimates


def test_a_loop_says_early_how_long_it_will_take():
  said = []
  estimate = estimates.Estimate('loo', total_cost=100.0, log=said.append, min_seconds=2.0)
  estimate.add(10.0, 30.0, compiling=29.0)   # compiling: not a measure of the work
  estimate.add(10.0, 1.0, compiling=0.0)
  assert not said
  estimate.add(10.0, 1.0, compiling=0.0)     # 20 work in 2 s; 70 left -> 7 s
  assert said == ['loo: about 7 s more (measured on the batches so far; the bar keeps the estimate up to date)']
  estimate.add(10.0, 1.0, compiling=0.0)
  assert len(said) == 1  # once


def test_an_estimate_in_units_names_the_rate():
  said = []
  estimate = estimates.Estimate('training', total_cost=1000, log=said.append, min_seconds=5.0, unit='steps')
  for _ in range(10):
    estimate.add(1, 0.5, compiling=0.0)      # 10 steps in 5 s: 2 steps/s; 990 left -> 495 s
  assert said == ['training: about 8 min more (990 steps at 2.0 steps/s, measured on the steps so far; '
                  'the bar keeps the estimate up to date)']


def test_shapes_still_to_compile_are_counted_in():
  said = []
  estimate = estimates.Estimate('erasure', total_cost=100.0, log=said.append, min_seconds=2.0, shapes=5)
  estimate.add(10.0, 1.0, compiling=0.0)                  # work, but no compilation measured yet
  estimate.add(10.0, 1.0, compiling=0.0)
  assert not said and estimate.seconds_left() == 80.0 / 10.0 + 0.0
  estimate.add(10.0, 31.0, compiling=30.0, new_shape=True)  # 30 s to compile one shape; 4 to come
  # 70 work at 10/s = 7 s, plus 4 × 30 s of compiling
  assert said == ['erasure: about 2 min more (measured on the batches so far, and 4 more shapes to '
                  'compile at about 30 s each; the bar keeps the estimate up to date)']
  assert estimate.seconds_left() == 7.0 + 120.0
  estimate.add(10.0, 1.0, compiling=0.0, new_shape=True)   # a cached shape: the mean compile time falls
  assert estimate.seconds_left() == 60.0 / (30.0 / 3.0) + 3 * 15.0


def test_a_caveat_is_said_with_the_estimate():
  said = []
  estimate = estimates.Estimate('training', total_cost=100, log=said.append, min_seconds=1.0, unit='steps',
                                caveat='all 60 epochs: early stopping (train.patience=10) may end it sooner')
  estimate.add(10, 1.0, compiling=0.0)
  assert said == ['training: about 9 s more (90 steps at 10.0 steps/s, measured on the steps so far; all 60 '
                  'epochs: early stopping (train.patience=10) may end it sooner; the bar keeps the estimate '
                  'up to date)']


def test_nothing_left_says_nothing():
  said = []
  estimates.Estimate('x', total_cost=0, log=said.append).add(1, 10.0, 0.0)
  assert not said


def test_durations():
  assert [estimates.duration(s) for s in (42, 89.4, 720, 5399, 5400)] == [
      '42 s', '89 s', '12 min', '90 min', '1.5 h']


def test_measured_rates_are_kept_by_machine(tmp_path, monkeypatch):
  path = tmp_path / 'cache' / 'rates.json'
  rates = estimates.MeasuredRates(str(path))
  here = estimates.machine()
  key = estimates.key(what='vectors', workers=2)
  assert rates.get(key) is None
  rates.put(key, 1234.5678, 'tokens/s')
  assert rates.get(key) == 1234.568 and estimates.MeasuredRates(str(path)).get(key) == 1234.568
  monkeypatch.setattr(estimates, 'machine', lambda: 'another machine')
  assert rates.get(key) is None  # another machine's rate says nothing of this one
  assert list(json.loads(path.read_text())) == [here]
  assert here.startswith(f'{estimates.available_cores()} cores, ')


def test_a_damaged_or_unwritable_rates_file_is_no_rates(tmp_path, monkeypatch):
  path = tmp_path / 'rates.json'
  path.write_text('{not json')
  assert estimates.MeasuredRates(str(path)).get('k') is None
  estimates.MeasuredRates(str(path)).put('k', 1.0, 'x/s')  # replaces the damaged file
  assert estimates.MeasuredRates(str(path)).get('k') == 1.0
  blocked = tmp_path / 'file'
  blocked.write_text('')
  estimates.MeasuredRates(str(blocked / 'rates.json')).put('k', 1.0, 'x/s')  # no error: advice only
  monkeypatch.setenv(estimates.RATES_ENV_VAR, str(tmp_path / 'elsewhere.json'))
  assert estimates.rates_path() == str(tmp_path / 'elsewhere.json')
