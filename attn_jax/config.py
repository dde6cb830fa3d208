"""Run configuration: defaults, variants and validation.

The files in `configs/` call `default_config(dataset, encoder, variant)`;
`variant` is what follows the colon in `--config=configs/sst_bilstm.py:smoke`
('' is the full J&W recipe, 'smoke' a tiny model on a few documents for
tests). Everything can be overridden on the command line
(`--config.train.epochs=2`).
"""

import difflib
import importlib.util
import os
import textwrap
from typing import Any, Mapping

import ml_collections
from ml_collections import config_dict

from attn_jax.errors import ConfigError
from attn_jax.models import projections
from attn_jax.models.model import ENCODERS
from attn_jax.training.executors import EXECUTORS
from attn_jax.training.loss import LOSSES
from attn_jax.training.optimizer import SUBTREES, update_only

DATASETS = ('sst', 'imdb', '20news', 'agnews', 'synthetic')
# The analysis stages, in the order they run (attn_jax/stages).
ANALYSES = ('gradient', 'loo', 'kendall', 'attention', 'permutation', 'adversarial', 'erasure',
            'importance', 'state_importance')
# What may follow the colon in `--config=FILE:VARIANT` (every file in configs/
# passes it to `default_config`), and what each is for: shown by `run.py --help`.
VARIANTS = {
    '': 'the full recipe (J&W §A.5; the synthetic task: 2,000 training documents)',
    'smoke': 'a tiny model on 64 documents per split, 2 epochs, short analyses: checks a set-up',
}
# The overrides a researcher reaches for first, for `run.py --help`; keys with
# CHOICES also list them. Every other key is listed there by name only.
KEY_HELP = {
    'seed': 'initial parameters (and batch order unless train.batch_seed)',
    'sweep': "several models as one program, e.g. 'seed=0,1,2,3,4'",
    'compilation_cache': "compiled programs kept here ('' off; default ~/.cache/attn_jax/jax)",
    'devices': 'shard documents and models over N devices (default: all)',
    'data.manual_dir': 'the data folder (default: $ATTN_JAX_DATA)',
    'data.max_docs_per_split': 'a seeded sample of N documents per split (default: all)',
    'model.encoder': '',
    'model.attention': '',
    'model.projection': '',
    'model.sparsegen_lambda': "sparsegen's lambda (< 1)",
    'model.embeddings_file': "None (from scratch), 'in_domain' or a word2vec/fastText .vec",
    'train.epochs': 'the epoch with the best train.select_by score is kept',
    'train.learning_rate': 'Adam step size',
    'train.attention_lr_scale': "the attention scorer's step size / train.learning_rate",
    'train.update_only': "train only these subtrees, e.g. 'attention' (default: all)",
    'analyses': f"the stages run after training: {','.join(ANALYSES)} ('' for none)",
    'analysis.split': '',
    'analysis.max_docs': 'analyse only the first N documents (default: all)',
    'analysis.refuse_damaged': 'stop at a damaged results file instead of recomputing it',
    'analysis.adversarial.projection': "the adversaries' projection",
    'experiments': ("models trained on top: uniform,seeds,consistent_adversary,guides (W&P), "
                    "sparsegen_sweep,adversary_regimes (Meister) ('' for none)"),
}
CHOICES = {
    'data.dataset': DATASETS,
    'model.encoder': ENCODERS,
    'model.attention': ('tanh', 'dot'),
    'model.projection': projections.NAMES,
    'train.select_on': ('dev', 'test'),
    'train.select_by': ('roc_auc', 'train_loss'),
    'train.loss': tuple(LOSSES),
    'train.model_axis': EXECUTORS,
    'analysis.split': ('test', 'dev'),
    'analysis.loo.mode': ('delete', 'replace'),
    'analysis.erasure.random_item': ('paper', 'code'),
    'analysis.adversarial.projection': ('model', 'softmax'),
    'analysis.state_importance.layers': ('last', 'all'),
}
# Standard deviation of from-scratch embeddings (`model.embeddings_file=None`):
# PyTorch's N(0, 1) unless the dataset's dev ROC-AUC, J&W's selection metric,
# favoured N(0, 0.1²) (the runs are in README, Results).
EMBED_INIT_STD = {'sst': 0.1, '20news': 0.1, 'imdb': 1.0}
# Datasets whose models start, by default, from the in-domain vectors
# attn_jax.vectors builds, as J&W's started from pretrained fastText vectors:
# chosen from J&W's recipe and the dev metrics of the fidelity study (README,
# "The fidelity study"), never from test-set numbers. 20 Newsgroups is not
# among them: over 5 seeds its dev ROC-AUC from scratch (0.957 ± 0.008) is
# above that from its in-domain vectors (0.933 ± 0.007), intervals apart.
PRETRAINED_BY_DEFAULT = ('sst', 'imdb')
# Keys that say where things are or how they are shown, not what is computed:
# a finished workdir may be reused with other values of these. (The eval
# batch size changes padded shapes, hence float rounding at most.)
RUNTIME_KEYS = frozenset({
    'name', 'data.manual_dir', 'data.tfds_data_dir', 'vectors.directory', 'train.progress',
    'train.checkpoint_every_steps', 'train.eval_batch_size', 'train.model_axis',
    'analysis.batch_size', 'analysis.bucket_growth', 'analysis.loo.docs_per_chunk',
    'analysis.adversarial.batch_size',
    'analysis.refuse_damaged', 'compilation_cache', 'devices'})
# Keys added after results were first keyed, with the value that computes what
# runs without the key computed: at that value a key is left out of
# `result_items`, so results and workdirs made before it existed stay valid.
ADDED_KEYS = {'train.update_only': None, 'train.attention_lr_scale': 1.0}
# Sections that say what is analysed, or trained on top of the model, not what
# the model is: a trained workdir can be analysed again with other values
# (each stage and experiment keys its own results).
ANALYSIS_SECTIONS = ('analyses', 'analysis', 'experiments', 'experiment')


def default_config(dataset: str, encoder: str, variant: str = '') -> ml_collections.ConfigDict:
  """The J&W recipe (§A.5) for `encoder` on `dataset`."""
  if variant not in VARIANTS:
    raise ConfigError(f'unknown config variant {variant!r}; choose from '
                      f'{", ".join(map(repr, VARIANTS))} (python run.py --help describes them)')
  c = ml_collections.ConfigDict()
  c.name = f'{dataset}_{encoder}' + (f'_{variant}' if variant else '')
  c.seed = 0
  # A model axis: 'seed=0,1,2,3,4' (several keys, space-separated, give their
  # product) trains one model per value as one vmapped program; '' trains one.
  c.sweep = ''
  # JAX's persistent compilation cache (attn_jax/compilation.py): None:
  # $ATTN_JAX_COMPILATION_CACHE or ~/.cache/attn_jax/jax; '' turns it off.
  c.compilation_cache = config_dict.placeholder(str)
  # How many of jax.local_devices() the analyses spread their documents over and the
  # model axis its models over (attn_jax/sharding.py); None: all of them.
  c.devices = config_dict.placeholder(int)

  c.data = ml_collections.ConfigDict()
  c.data.dataset = dataset
  c.data.manual_dir = config_dict.placeholder(str)     # None: $ATTN_JAX_DATA, else download
  c.data.tfds_data_dir = config_dict.placeholder(str)  # None: $TFDS_DATA_DIR or ~/tensorflow_datasets
  c.data.min_df = config_dict.placeholder(int)         # None: J&W's value for the dataset
  c.data.max_docs_per_split = config_dict.placeholder(int)  # None: all (a seeded sample otherwise)
  c.data.bucket_growth = 1.25
  c.data.synthetic = ml_collections.ConfigDict(dict(
      seed=0, train_size=2000, dev_size=400, test_size=400, vocab_size=500,
      planted_words=3, min_length=8, max_length=40))

  c.model = ml_collections.ConfigDict()
  c.model.encoder = encoder
  c.model.attention = 'dot' if encoder == 'transformer' else 'tanh'
  c.model.projection = 'softmax'
  c.model.sparsegen_lambda = 0.5
  c.model.embed_dim = 300
  # None: from scratch, N(0, embed_init_std²); a word2vec/fastText text file;
  # or 'in_domain': the vectors `config.vectors` describes (built if missing).
  c.model.embeddings_file = config_dict.placeholder(str)
  if dataset in PRETRAINED_BY_DEFAULT and variant != 'smoke':
    c.model.embeddings_file = 'in_domain'
  c.model.freeze_embeddings = False   # True: the embeddings are not fine-tuned
  c.model.shuffle_embeddings = False  # True: pretrained rows permuted among the words found (a control)
  c.model.embeddings_norm = config_dict.placeholder(float)  # rescale pretrained rows to this mean norm
  c.model.embed_init_std = EMBED_INIT_STD.get(dataset, 1.0)
  c.model.hidden_dim = 128  # per direction for the BiLSTM (H = 256), total otherwise
  c.model.lstm_unroll = 1  # larger unrolls measured slower on XLA:CPU
  c.model.cnn_kernel_sizes = (1, 3, 5, 7)
  c.model.transformer_layers = 2
  c.model.transformer_heads = 1
  c.model.transformer_ffn_dim = 128
  c.model.dropout = 0.1 if encoder == 'transformer' else 0.0

  # In-domain fastText-style vectors (attn_jax.vectors): trained by gensim on
  # the unlabelled text of `corpora`, never the target dataset's dev or test text.
  c.vectors = ml_collections.ConfigDict(dict(
      corpora='imdb,sst,20news,agnews', epochs=5, window=5, min_count=5, sg=0, negative=5,
      min_n=3, max_n=6, seed=0))
  c.vectors.directory = config_dict.placeholder(str)  # None: $ATTN_JAX_VECTORS or ~/.cache/attn_jax/vectors

  c.train = ml_collections.ConfigDict()
  c.train.epochs = 8
  c.train.batch_size = 32
  c.train.eval_batch_size = 64
  c.train.learning_rate = 1e-3
  c.train.weight_decay = 1e-5
  # The attention scorer's step size over the others' (Meister et al.'s Table 4:
  # "equal to or 10×"; J&W: equal).
  c.train.attention_lr_scale = 1.0
  c.train.loss = 'weighted_bce'     # a plug-in of the trainer (attn_jax.training.loss)
  # How a program's models are computed: 'vmap', 'loop' (model after model in
  # one compiled step) or 'auto' (loop on CPU, vmap elsewhere; executors.py).
  c.train.model_axis = 'auto'
  c.train.select_on = 'dev'         # 'test' reproduces W&P's fork (§C)
  c.train.select_by = 'roc_auc'     # on select_on; 'train_loss': the lowest (W&P's adversary, §C.4)
  # Stop a model after this many epochs without a better selection score; None: never.
  c.train.patience = config_dict.placeholder(int)
  c.train.skip_first_epoch = True   # J&W HEAD never selects epoch 0
  # Params subtrees that are trained, comma-separated (embedding, encoder,
  # attention, decoder); None: all. The rest keep their initial values.
  c.train.update_only = config_dict.placeholder(str)
  # Seed of the batch order; None: `seed`. Models trained as one program share it.
  c.train.batch_seed = config_dict.placeholder(int)
  c.train.checkpoint_every_steps = 200
  c.train.progress = True

  c.analyses = ','.join(ANALYSES)  # run after training; '' for none
  c.analysis = ml_collections.ConfigDict()
  c.analysis.split = 'test'
  c.analysis.max_docs = config_dict.placeholder(int)  # None: the whole split, else its first N
  c.analysis.seed = 0
  c.analysis.batch_size = 32
  c.analysis.bucket_growth = 1.1  # finer than training: LOO costs grow with L²
  # A results file whose sha256 differs from its summary's record: recompute
  # it (False), or stop with its name (True) to inspect it first.
  c.analysis.refuse_damaged = False
  c.analysis.loo = ml_collections.ConfigDict(dict(mode='delete', docs_per_chunk=4))  # 4: fastest measured on CPU
  c.analysis.permutation = ml_collections.ConfigDict(dict(num_permutations=100))
  c.analysis.adversarial = ml_collections.ConfigDict(dict(
      num_adversaries=5, steps=500, learning_rate=0.01, hinge_epsilon=0.01,
      output_weight=500.0, report_epsilon=0.05,
      # 'model': adversaries are projected by the model's own projection (the
      # attention it can produce); 'softmax': J&W's search whatever the model.
      projection='model',
      # Documents per batch of the search (None: analysis.batch_size). On this
      # 2-core CPU 16 to 32 are fastest and 128 or 512 slower (wider padding;
      # benchmarks/analysis_batch_size.py); an accelerator may want more.
      batch_size=config_dict.placeholder(int)))
  c.analysis.erasure = ml_collections.ConfigDict(dict(random_orders=5, random_item='paper'))
  # Meister et al. (stages/importance.py, stages/state_importance.py): also the
  # intermediate gradient with α detached; g_{h_p}(x) rows computed `chunk` at
  # a time, for the encoder output ('last') or every layer ('all').
  c.analysis.importance = ml_collections.ConfigDict(dict(hidden_gradient_detached=True))
  c.analysis.state_importance = ml_collections.ConfigDict(dict(chunk=16, layers='last'))

  # Experiments that train more models on top of this one (attn_jax/experiments);
  # each owns its section of `experiment`. Imported here, not at the top: the
  # experiments import the pipeline, which imports this module.
  from attn_jax import experiments  # pylint: disable=g-import-not-at-top
  c.experiments = ''
  c.experiment = experiments.default_sections(dataset, encoder, variant)

  if encoder == 'transformer':
    # Meister et al. train their Transformer at lr 1e-5 from fastText vectors
    # (epochs unspecified); from scratch that barely moves in 8 epochs.
    c.train.learning_rate = 1e-4
    c.train.epochs = 20
  if dataset == 'synthetic':
    c.model.embed_dim = 32
    c.model.hidden_dim = 32
    c.model.transformer_ffn_dim = 32
    c.train.epochs = 4
    c.train.learning_rate = 3e-3
  if variant == 'smoke':
    c.model.embed_dim = 16
    c.model.hidden_dim = 8
    c.model.transformer_ffn_dim = 16
    c.data.max_docs_per_split = 64
    c.data.synthetic.update(train_size=96, dev_size=48, test_size=48, vocab_size=60)
    c.train.epochs = 2
    c.train.batch_size = 8
    c.train.eval_batch_size = 16
    c.train.checkpoint_every_steps = 4
    c.data.bucket_growth = 2.0  # fewer bucket lengths: fewer compilations
    c.analysis.bucket_growth = 2.0
    c.analysis.batch_size = 16
    c.analysis.permutation.num_permutations = 10
    c.analysis.adversarial.steps = 20
    c.analysis.erasure.random_orders = 2
  return c


def flat_items(cfg: ml_collections.ConfigDict, prefix: str = ''):
  """(dotted key, value) pairs of a nested config."""
  for key, value in cfg.items():
    if isinstance(value, ml_collections.ConfigDict):
      yield from flat_items(value, f'{prefix}{key}.')
    else:
      yield f'{prefix}{key}', value


def none_from_command_line(cfg: ml_collections.ConfigDict) -> None:
  """`--config.KEY=None` means None: ml_collections parses it, for a string
  field, as the word 'None' (which no path, file or setting is)."""
  for key, value in list(flat_items(cfg)):
    if value == 'None':
      _set(cfg, key, None)


def _set(cfg: ml_collections.ConfigDict, key: str, value) -> None:
  """Sets the dotted `key` (e.g. 'train.epochs') of a nested config."""
  *groups, name = key.split('.')
  node = cfg
  for group in groups:
    node = node[group]
  node[name] = value


def result_items(cfg: ml_collections.ConfigDict) -> dict:
  """The keys that change what a run computes, with their values."""
  return {k: (list(v) if isinstance(v, tuple) else v)
          for k, v in flat_items(cfg)
          if k not in RUNTIME_KEYS and not (k in ADDED_KEYS and v == ADDED_KEYS[k])}


def training_items(cfg: ml_collections.ConfigDict) -> dict:
  """`result_items` that change the trained model (not what is analysed)."""
  return {k: v for k, v in result_items(cfg).items()
          if k.split('.')[0] not in ANALYSIS_SECTIONS}


def analyses(cfg: ml_collections.ConfigDict) -> tuple[str, ...]:
  """The stages `cfg.analyses` asks for ('' -> none), in running order.

  Raises:
    ConfigError: an unknown stage name.
  """
  names = [n.strip() for n in cfg.analyses.split(',') if n.strip()]
  unknown = [n for n in names if n not in ANALYSES]
  if unknown:
    close = difflib.get_close_matches(unknown[0], ANALYSES, n=1)
    hint = f' (did you mean {close[0]!r}?)' if close else ''
    raise ConfigError(f'unknown analysis {unknown[0]!r}{hint} in --config.analyses; '
                      f'choose from {", ".join(ANALYSES)} (comma-separated, or empty for none)')
  return tuple(n for n in ANALYSES if n in names)


def _closest(key: str, known) -> list[str]:
  """Known keys `key` may have meant: a near spelling, else those with its
  last name (a forgotten or wrong group), else a looser spelling."""
  near = difflib.get_close_matches(key, list(known), n=1, cutoff=0.8)
  name = key.rpartition('.')[2]
  same_name = [k for k in known if k.rpartition('.')[2] == name]
  if near or not same_name:
    return near or difflib.get_close_matches(key, list(known), n=1)
  return sorted(same_name, key=lambda k: -difflib.SequenceMatcher(None, key, k).ratio())[:2]


def _group_contents(group: str, known) -> str:
  """The keys and subgroups directly in `group` ('' for the top level)."""
  prefix = group + '.' if group else ''
  inside = [k[len(prefix):] for k in known if k.startswith(prefix)]
  keys = sorted(prefix + k for k in inside if '.' not in k)
  groups = sorted({prefix + k.split('.')[0] for k in inside if '.' in k})
  where = f'in {group}' if group else 'at the top level'
  parts = [f'config groups {where}: {", ".join(groups)}'] if groups else []
  return '; '.join(parts + [f'valid keys {where}: {", ".join(keys)}'])


def unknown_key_message(key: str, known) -> str:
  """Names `key`, the closest known key, and what the deepest group of `key`
  that exists holds (the config groups for a mistyped group)."""
  group = key.rpartition('.')[0]
  while group and not any(k.startswith(group + '.') for k in known):
    group = group.rpartition('.')[0]
  close = _closest(key, known)
  hint = f' (did you mean {" or ".join(repr(c) for c in close)}?)' if close else ''
  return f'unknown config key {key!r}{hint}; {_group_contents(group, known)}'


def describe(cfg: ml_collections.ConfigDict, width: int = 100) -> str:
  """The variants and override keys of `cfg`, for `run.py --help`: every key
  by group (from the schema itself), then the usual ones with what they do."""
  lines = ['Variants (--config=FILE:VARIANT):']
  lines += [f'  {v or "(none)":8}{why}' for v, why in VARIANTS.items()]
  lines.append('Overrides (--config.KEY=VALUE); the keys, by group:')
  keys = [k for k, _ in flat_items(cfg)]
  groups = {}
  for k in keys:
    group, _, name = k.partition('.') if '.' in k else ('', '', k)
    groups.setdefault(group, []).append(name)
  column = max(len(g or '(top)') for g in groups) + 1
  for group, names in groups.items():
    lines += textwrap.wrap(' '.join(names), width, initial_indent=f'  {group or "(top)":{column}}',
                           subsequent_indent=' ' * (column + 2))
  lines.append('Often used:')
  for key, why in KEY_HELP.items():
    choices = ' | '.join(CHOICES[key]) if key in CHOICES else ''
    lines += textwrap.wrap('; '.join(p for p in (choices, why) if p), width,
                           initial_indent=f'  --config.{key:24} ', subsequent_indent=' ' * 36)
  return '\n'.join(lines)


def unknown_override(cfg: ml_collections.ConfigDict, overrides) -> str | None:
  """The message for the first of `overrides` (dotted keys) not in `cfg`, if any."""
  known = dict(flat_items(cfg))
  for key in overrides:
    if key not in known and not any(k.startswith(key + '.') for k in known):
      return unknown_key_message(key, known)
  return None


def load_file(spec: str) -> ml_collections.ConfigDict:
  """`get_config([VARIANT])` of the config file `FILE[:VARIANT]` (a path from
  the working directory, or from the checkout's root)."""
  path, _, variant = spec.partition(':')
  if not os.path.isfile(path):
    checkout = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), path)
    if not os.path.isfile(checkout):
      raise ConfigError(f'config file {path!r} not found (from {os.getcwd()} or the checkout); '
                        'the configs are in configs/, e.g. configs/sst_bilstm.py')
    path = checkout
  module_spec = importlib.util.spec_from_file_location('_attn_jax_config', path)
  module = importlib.util.module_from_spec(module_spec)
  module_spec.loader.exec_module(module)
  return module.get_config(variant) if variant else module.get_config()


def from_file(spec: str, overrides: Mapping[str, Any] | None = None) -> ml_collections.ConfigDict:
  """The config `run.py --config=SPEC --config.KEY=VALUE ...` builds, for
  notebooks and scripts that drive `pipeline.run` without run.py's flags.

  Args:
    spec: `FILE[:VARIANT]`, e.g. 'configs/sst_bilstm.py:smoke' (see `load_file`).
    overrides: dotted key -> value, e.g. {'train.epochs': 2}; values are
      Python values (None for a placeholder), not strings to parse.

  Raises:
    ConfigError: the file is missing, a key is unknown (named with the
      closest known one) or a value is invalid for its key.
  """
  cfg = load_file(spec)
  overrides = dict(overrides or {})
  message = unknown_override(cfg, overrides)
  if message:
    raise ConfigError(message)
  for key, value in overrides.items():
    try:
      _set(cfg, key, value)
    except (TypeError, ValueError) as e:
      raise ConfigError(f'{key}={value!r} is not valid: {e}') from e
  validate(cfg)
  return cfg


def validate(cfg: ml_collections.ConfigDict) -> None:
  """Raises ConfigError naming any unknown key or invalid value, and the valid ones."""
  for key, choices in CHOICES.items():
    value = cfg
    for part in key.split('.'):
      value = value.get(part, {}) if isinstance(value, ml_collections.ConfigDict) else None
    if value not in choices:
      raise ConfigError(f'{key}={value!r} is not valid; choose from {", ".join(choices)}')
  reference = dict(flat_items(default_config(cfg.data.dataset, cfg.model.encoder)))
  given = dict(flat_items(cfg))
  unknown = sorted(set(given) - set(reference))
  if unknown:
    raise ConfigError(unknown_key_message(unknown[0], reference))
  missing = sorted(set(reference) - set(given))
  if missing:
    raise ConfigError(f'config lacks key(s) {", ".join(missing)}; start from '
                      'attn_jax.config.default_config()')
  _check_ranges(cfg)


def _check_ranges(cfg: ml_collections.ConfigDict) -> None:
  m, t = cfg.model, cfg.train
  checks = [
      (t.epochs >= (2 if t.skip_first_epoch else 1),
       'train.epochs must be >= 2 when train.skip_first_epoch (epoch 0 is never selected)'),
      (t.batch_size >= 1 and t.eval_batch_size >= 1, 'batch sizes must be >= 1'),
      (t.learning_rate > 0, 'train.learning_rate must be > 0'),
      (t.weight_decay >= 0, 'train.weight_decay must be >= 0'),
      (t.attention_lr_scale > 0, 'train.attention_lr_scale must be > 0'),
      (t.checkpoint_every_steps >= 1, 'train.checkpoint_every_steps must be >= 1'),
      (t.update_only is None or (bool(update_only(t)) and set(update_only(t)) <= set(SUBTREES)),
       f'train.update_only={t.update_only!r} must name params subtrees among {", ".join(SUBTREES)} '
       '(comma-separated), or be None for all'),
      (t.patience is None or t.patience >= 1, 'train.patience must be >= 1 (or None: no early stopping)'),
      (m.sparsegen_lambda < 1, 'model.sparsegen_lambda must be < 1 (sparsegen-lin is defined for λ < 1)'),
      (m.embed_dim >= 1 and m.hidden_dim >= 2, 'model.embed_dim and model.hidden_dim must be positive'),
      (m.embed_init_std > 0, 'model.embed_init_std must be > 0'),
      (m.embeddings_file != 'in_domain' or cfg.data.dataset != 'synthetic',
       "model.embeddings_file='in_domain' needs a real dataset (the synthetic one has no text)"),
      (not (m.freeze_embeddings or m.shuffle_embeddings or m.embeddings_norm) or bool(m.embeddings_file),
       'model.freeze_embeddings, model.shuffle_embeddings and model.embeddings_norm need pretrained '
       'vectors (model.embeddings_file)'),
      (m.embeddings_norm is None or m.embeddings_norm > 0, 'model.embeddings_norm must be > 0 (or None)'),
      (cfg.vectors.epochs >= 1 and cfg.vectors.min_count >= 1 and cfg.vectors.window >= 1,
       'vectors.epochs, vectors.min_count and vectors.window must be >= 1'),
      (m.attention != 'tanh' or (m.hidden_dim * (2 if m.encoder == 'bilstm' else 1)) % 2 == 0,
       'tanh attention needs an even encoder output size (its layer maps H -> H/2)'),
      (m.encoder != 'cnn' or m.hidden_dim % len(m.cnn_kernel_sizes) == 0,
       'model.hidden_dim must be divisible by the number of CNN kernel sizes'),
      (m.encoder != 'transformer' or m.hidden_dim % m.transformer_heads == 0,
       'model.hidden_dim must be divisible by model.transformer_heads'),
      (0 <= m.dropout < 1, 'model.dropout must be in [0, 1)'),
      (m.lstm_unroll >= 1, 'model.lstm_unroll must be >= 1'),
      (cfg.data.bucket_growth > 1, 'data.bucket_growth must be > 1'),
      (cfg.data.max_docs_per_split is None or cfg.data.max_docs_per_split >= 1,
       'data.max_docs_per_split must be >= 1 (or None for all)'),
  ]
  a = cfg.analysis
  adv = a.adversarial
  checks += [
      (a.max_docs is None or a.max_docs >= 1, 'analysis.max_docs must be >= 1 (or None for all)'),
      (a.batch_size >= 1 and a.loo.docs_per_chunk >= 1
       and (adv.batch_size is None or adv.batch_size >= 1),
       'analysis.batch_size, analysis.loo.docs_per_chunk and analysis.adversarial.batch_size '
       'must be >= 1'),
      (a.bucket_growth > 1, 'analysis.bucket_growth must be > 1'),
      (a.permutation.num_permutations >= 1, 'analysis.permutation.num_permutations must be >= 1'),
      (adv.num_adversaries >= 1 and adv.steps >= 0,
       'analysis.adversarial.num_adversaries must be >= 1 and .steps >= 0'),
      (adv.learning_rate > 0 and adv.hinge_epsilon >= 0 and adv.report_epsilon >= 0,
       'analysis.adversarial.learning_rate must be > 0 and the epsilons >= 0'),
      (a.erasure.random_orders >= 1, 'analysis.erasure.random_orders must be >= 1'),
      (a.state_importance.chunk >= 1, 'analysis.state_importance.chunk must be >= 1'),
  ]
  analyses(cfg)
  from attn_jax import experiments, sharding  # pylint: disable=g-import-not-at-top
  experiments.check(cfg)
  sharding.check(cfg)
  for ok, message in checks:
    if not ok:
      raise ConfigError(message)
