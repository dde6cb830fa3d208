"""attn_jax.core.environment: what a run records of where it trained."""

import importlib.metadata

import jax

from attn_jax.core import environment
from attn_jax.training import progress as progress_lib


def test_a_record_names_the_installed_libraries_and_this_machine():
  record = environment.describe()
  assert record['libraries']['jax'] == jax.__version__
  assert record['libraries']['numpy'] == importlib.metadata.version('numpy')
  assert record['backend'] == jax.devices()[0].platform and record['devices'] == jax.device_count()
  assert record['cores'] >= 1
  features = record['cpu']['features']
  assert features is None or set(features) <= set(environment.CPU_FEATURES)
  assert record == environment.describe()  # nothing in it changes within a process


def test_differences_name_each_changed_key_nested_keys_dotted():
  a = {'libraries': {'jax': '0.10.2', 'numpy': '2.4.6'}, 'cores': 2, 'cpu': {'model': 'X', 'features': ['avx2']}}
  b = {'libraries': {'jax': '0.10.1', 'numpy': '2.4.6'}, 'cores': 2, 'cpu': {'model': 'Y', 'features': ['avx2']}}
  assert environment.differences(a, b) == ['cpu.model: X → Y', 'libraries.jax: 0.10.2 → 0.10.1']
  assert environment.differences(a, a) == []


def test_a_resume_in_the_same_environment_adds_nothing_and_in_another_adds_it():
  record, here = progress_lib.fresh(2), environment.describe()
  progress_lib.note_environment(record, here)
  progress_lib.note_environment(record, dict(here))  # a resume here
  assert record['environments'] == [here]
  elsewhere = {**here, 'cores': here['cores'] + 6}
  progress_lib.note_environment(record, elsewhere)
  assert record['environments'] == [here, elsewhere]


def test_the_summary_line_names_libraries_device_and_cpu():
  line = environment.summary({'libraries': {'numpy': '2.4.6', 'jax': '0.10.2'}, 'device': 'cpu', 'devices': 1,
                              'cpu': {'model': 'Xeon', 'features': ['avx2', 'fma']}, 'cores': 2})
  assert line == 'jax 0.10.2, numpy 2.4.6; cpu × 1 (Xeon: avx2 fma); 2 cores'  # names sorted, as JSON keeps them
