"""The run configuration: J&W's recipe as defaults, its variants, and its checks.

The files in `configs/` call `default_config(dataset, encoder, variant)`;
`variant` is what follows the colon in `--config=configs/sst_bilstm.py:smoke`
('' is the full J&W recipe, 'smoke' a tiny model on a few documents for
tests). Everything can be overridden on the command line
(`--config.train.epochs=2`).

This module owns the sections every run has (data, model, vectors, train and
the analyses' shared keys). Each analysis stage owns `analysis.<stage>`, each
experiment `experiment.<name>` and each encoder family its `model.<key>`s
and recipe: their defaults, choices and checks come from their registries
(`attn_jax.core.registry`), never from a list here.
"""

import ml_collections
from ml_collections import config_dict

from attn_jax.config import keys
from attn_jax.core.errors import ConfigError
from attn_jax.core.registry import DATASETS, ENCODERS, EXPERIMENTS, STAGES, with_requirements
from attn_jax.models import projections
from attn_jax.training.executors import EXECUTORS
from attn_jax.training.loss import LOSSES
from attn_jax.data.batching import TIES
from attn_jax.training.optimizer import OPTIMIZERS, SUBTREES, update_only
from attn_jax.training.trainer import SELECTION_METRICS

# What may follow the colon in `--config=FILE:VARIANT` (every file in configs/
# passes it to `default_config`), and what each is for: shown by `run.py --help`.
VARIANTS = {
    '': 'the full recipe (J&W\'s `ExperimentsBC.py`; the synthetic task: 2,000 training documents)',
    'smoke': 'a tiny model on 64 documents per split, 2 epochs, short analyses: checks a set-up',
}
# The allowed values of the keys this module owns; stages and experiments
# declare their own (`Section.choices`), and `choices()` adds them.
OWN_CHOICES = {
    'model.attention': ('tanh', 'dot', 'context', 'key_dot'),
    'model.projection': projections.NAMES,
    'vectors.method': ('fasttext', 'word2vec'),
    'vectors.lines': ('documents', 'sentences'),
    'model.init': ('torch', 'allennlp'),
    'train.optimizer': OPTIMIZERS,
    'train.sort_ties': TIES,
    'train.batch_order': ('shared', 'own'),
    'train.select_on': ('dev', 'test'),
    'train.select_by': SELECTION_METRICS + ('train_loss',),
    'train.loss': tuple(LOSSES),
    'train.model_axis': EXECUTORS,
    'analysis.split': ('test', 'dev'),
}


def _query_width_problem(dataset: str, width) -> str:
  """The one line for a `model.query_width` that `dataset`'s queries do not fit."""
  spec = DATASETS[dataset]
  if not spec.paired:
    return f'model.query_width={width}, but {dataset} has no queries (it is for a QA/NLI model): leave it unset'
  reach = (f'up to {spec.max_query_tokens} tokens' if spec.max_query_tokens is not None
           else 'of any length: it declares no longest query, so its query encoder reads the whole row')
  return f"model.query_width={width} is narrower than {dataset}'s queries, {reach}: leave it unset"


def default_config(dataset: str, encoder: str, variant: str = '') -> ml_collections.ConfigDict:
  """The J&W recipe (their `ExperimentsBC.py`, `Trainers/TrainerBC.py`) for `encoder` on `dataset`."""
  if variant not in VARIANTS:
    raise ConfigError(f'unknown config variant {variant!r}; choose from '
                      f'{", ".join(map(repr, VARIANTS))} (python run.py --help describes them)')
  c = ml_collections.ConfigDict()
  c.name = f'{dataset}_{encoder}' + (f'_{variant}' if variant else '')
  c.seed = 0
  # A model axis: 'seed=0,1,2,3,4' (several keys, space-separated, give their
  # product) trains one model per value as one vmapped program; '' trains one.
  c.sweep = ''
  # JAX's persistent compilation cache (attn_jax/core/compilation.py): None:
  # $ATTN_JAX_COMPILATION_CACHE or ~/.cache/attn_jax/jax; '' turns it off.
  c.compilation_cache = config_dict.placeholder(str)
  # How many of jax.local_devices() the analyses spread their documents over and the
  # model axis its models over (attn_jax/core/sharding.py); None: all of them.
  c.devices = config_dict.placeholder(int)
  # Another process holding what this run writes (its training, a stage's or
  # an experiment's results): wait for it and reuse its results (True), or
  # refuse at once naming it (False). See attn_jax/core/leases.py.
  c.wait_for_lock = True
  c.data = _data(dataset)
  c.model = _model(dataset, encoder, variant)
  c.vectors = _vectors()
  c.train = _train()
  c.train.decay_attention = c.model.query  # J&W's QA trainer decays every parameter
  # Run after training ('' for none): the stages of the paper the config
  # reproduces (`default_analyses`); run.py's closing lines say how to add the others.
  c.analyses = ','.join(default_analyses(dataset, encoder))
  c.analysis = _analysis(dataset, encoder, variant)
  # Experiments that train more models on top of this one (attn_jax/experiments).
  c.experiments = ''
  c.experiment = ml_collections.ConfigDict(_sections(EXPERIMENTS, dataset, encoder, variant))
  _family(encoder).recipe(c, dataset, variant)
  _dataset(dataset).recipe(c, encoder)
  if variant == 'smoke':
    _smoke(c)
  return c


def _dataset(name: str):
  if name not in DATASETS:
    raise ConfigError(f'{DATASETS.unknown(name)}; choose from {", ".join(DATASETS.names())}')
  return DATASETS[name]


def _family(encoder: str):
  if encoder not in ENCODERS:
    raise ConfigError(f'{ENCODERS.unknown(encoder)}; choose from {", ".join(ENCODERS.names())}')
  return ENCODERS[encoder]


def default_analyses(dataset: str, encoder: str) -> tuple[str, ...]:
  """The stages a config runs unless told otherwise: its paper's — the
  encoder family's `analyses`: J&W's for their encoders, Meister et al.'s for
  the Transformer (S&S's configs set theirs) — and every stage on the
  synthetic task, a demonstration of all.
  The other papers' stages are costly on long documents (Meister's
  state_importance: ~40 min on IMDB's test set here) and run when asked."""
  if dataset == 'synthetic':
    return tuple(STAGES.names())
  own = [s.name for s in STAGES.of_paper(_family(encoder).analyses)]
  # A dataset that names each document's evidence (bAbI) scores the measures by it too.
  scored = [s.name for s in STAGES.values() if s.needs_evidence and s.name not in own]
  return tuple(own + (scored if DATASETS[dataset].evidence and all(
      r in own for s in scored for r in STAGES[s].requires) else []))


def _data(dataset: str) -> ml_collections.ConfigDict:
  d = ml_collections.ConfigDict()
  d.dataset = dataset
  d.manual_dir = config_dict.placeholder(str)     # None: $ATTN_JAX_DATA, else download
  d.tfds_data_dir = config_dict.placeholder(str)  # None: $TFDS_DATA_DIR or ~/tensorflow_datasets
  d.min_df = config_dict.placeholder(int)         # None: J&W's value for the dataset
  d.max_docs_per_split = config_dict.placeholder(int)  # None: all (a seeded sample otherwise)
  d.bucket_growth = 1.25
  # Most padded word slots in a HAN batch (documents × sentences × words);
  # None: 20,000, S&S's cap per batch.
  d.max_batch_tokens = config_dict.placeholder(int)
  # HAN training batches: at most this many documents × longest sentence
  # (words); S&S's AllenNLP iterator capped theirs at 2,000.
  d.max_batch_sentence_words = config_dict.placeholder(int)
  d.synthetic = ml_collections.ConfigDict(dict(
      seed=0, train_size=2000, dev_size=400, test_size=400, vocab_size=500,
      planted_words=3, min_length=8, max_length=40))
  return d


def _model(dataset: str, encoder: str, variant: str) -> ml_collections.ConfigDict:
  m = ml_collections.ConfigDict()
  m.encoder = encoder
  m.attention = 'tanh'
  m.projection = 'softmax'
  m.sparsegen_lambda = 0.5
  m.embed_dim = 300
  # None: from scratch, N(0, embed_init_std²); a word2vec/fastText text file;
  # or 'in_domain': the vectors `config.vectors` describes (built if missing).
  m.embeddings_file = config_dict.placeholder(str)
  if _dataset(dataset).pretrained and variant != 'smoke':
    m.embeddings_file = 'in_domain'
  m.freeze_embeddings = False   # True: the embeddings are not fine-tuned
  m.shuffle_embeddings = False  # True: pretrained rows permuted among the words found (a control)
  m.embeddings_norm = config_dict.placeholder(float)  # rescale pretrained rows to this mean norm
  m.embeddings_unit_rows = False  # True: every pretrained row scaled to L2 norm 1 (S&S's preparation)
  m.embed_init_std = _dataset(dataset).embed_init_std
  m.hidden_dim = 128  # per direction for the BiLSTM and BiGRU (H = 256), total otherwise
  # Every encoder family's own keys (`attn_jax/models/encoders`), in every
  # config, so that any config can switch encoders on the command line.
  for family in ENCODERS.values():
    m.update(family.keys(dataset, variant))
  m.dropout = 0.0  # the Transformer's (its recipe: 0.1)
  # S&S's HAN (documents × sentences × words; the final attention is over
  # sentences), its classes and dropouts (attn_jax.config.serrano_smith_config).
  m.hierarchical = False
  # J&W's QA/NLI model (attn_jax.models.qa): attention over the passage with
  # the query (a question, a hypothesis); the datasets with two texts.
  m.query = _dataset(dataset).paired
  # The query positions its question encoder reads: the dataset's longest
  # query (None: the whole row). Speed only (a runtime key).
  m.query_width = _dataset(dataset).max_query_tokens
  m.classes = _dataset(dataset).num_classes
  m.input_dropout = 0.0     # on the embeddings, before the (word) encoder
  m.sentence_dropout = 0.0  # HAN: on the sentence vectors, before the sentence encoder
  m.output_dropout = 0.0    # on the classifier's logits
  # 'torch': PyTorch's defaults (J&W). 'allennlp': S&S's initializer list —
  # GRU input weights Xavier-uniform, recurrent weights orthogonal, input bias
  # 0, recurrent bias AllenNLP's `lstm_hidden_bias`; classifier Xavier-uniform,
  # bias 0; attention and convolutions keep PyTorch's defaults.
  m.init = 'torch'
  return m


def _vectors() -> ml_collections.ConfigDict:
  # In-domain fastText vectors (attn_jax.vectors): trained by gensim on the
  # unlabelled text of `corpora`, never the target dataset's dev or test text,
  # with J&W's recipe for wiki.simple.vec: skip-gram (sg=1; 0: CBOW, the
  # default before 2026-11-25), character 3-6-grams, window 5, 5 epochs, min
  # count 5, 5 negatives.
  v = ml_collections.ConfigDict(dict(
      corpora='imdb,sst,20news,agnews', epochs=5, window=5, min_count=5, sg=1, negative=5,
      min_n=3, max_n=6, seed=0))
  v.method = 'fasttext'  # 'word2vec': no character n-grams (S&S's vectors)
  v.lines = 'documents'  # 'sentences': one sentence a line (S&S; datasets with sentences)
  v.oov_as_unk = False   # True: words outside the vocabulary read <UNK>, which gets a vector (S&S)
  v.directory = config_dict.placeholder(str)  # None: $ATTN_JAX_VECTORS or ~/.cache/attn_jax/vectors
  # gensim's training threads: 1 (bit-reproducible: every committed result),
  # a number, or 'auto' (this machine's cores). Typed `object` so that both
  # `--config.vectors.workers=auto` and `=2` parse.
  v.workers = config_dict.FieldReference(1, field_type=object)
  return v


def _train() -> ml_collections.ConfigDict:
  t = ml_collections.ConfigDict()
  t.epochs = 8
  t.batch_size = 32
  t.eval_batch_size = 64
  t.learning_rate = 1e-3
  t.weight_decay = 1e-5
  # The attention scorer's step size over the others' (Meister et al.'s Table 4:
  # "equal to or 10×"; J&W: equal).
  t.attention_lr_scale = 1.0
  # Whether the attention scorer takes weight decay: J&W's classifier gives it
  # none (a separate Adam, weight_decay=0); their QA/NLI model has one Adam with
  # weight decay over every parameter (`model/Question_Answering.py`), so a
  # model with a query decays it too (set in `default_config`).
  t.decay_attention = False
  t.loss = 'weighted_bce'     # a plug-in of the trainer (attn_jax.training.loss)
  # J&W's and W&P's torch.optim.Adam(amsgrad=True); 'amsgrad': optax's AMSGrad
  # rule, which results trained before 2026-11-26 used; 'adam': S&S's.
  t.optimizer = 'torch_amsgrad'
  # Documents of equal noisy length in random order, as J&W's unstable sort
  # leaves them; 'stable': the split's order, as before 2026-11-26
  # (attn_jax.data.batching.noisy_length_order).
  t.sort_ties = 'random'
  t.clip_norm = config_dict.placeholder(float)       # clip the gradient's global norm (S&S: 10)
  # Multiply a model's learning rate by this after an epoch with no better
  # selection score (S&S's ReduceLROnPlateau: 0.5); None: never.
  t.plateau_factor = config_dict.placeholder(float)
  # How a program's models are computed: 'vmap', 'loop' (model after model in
  # one compiled step) or 'auto' (loop on CPU, vmap elsewhere; executors.py).
  t.model_axis = 'auto'
  t.select_on = 'dev'         # 'test' reproduces W&P's fork (their `TrainerBC.train_standard`)
  t.select_by = 'roc_auc'     # on select_on ('accuracy': S&S); 'train_loss': the lowest (W&P's adversary, §4)
  # Stop a model after this many epochs without a better selection score; None: never.
  t.patience = config_dict.placeholder(int)
  # Stop a model once its selection score is 1.0, the best there is: selection
  # keeps strict improvements only, so no later epoch could be selected and
  # the selected model is the one all epochs give (bAbI 1 is solved by epoch ~12 of 100).
  t.stop_when_perfect = False
  t.skip_first_epoch = True   # J&W HEAD never selects epoch 0
  # Params subtrees that are trained, comma-separated (embedding, encoder,
  # attention, decoder); None: all. The rest keep their initial values.
  t.update_only = config_dict.placeholder(str)
  # Seed of the batch order; None: `seed`. Models trained as one program share it
  # unless `batch_order` is 'own': each model's order from its own seed, as each
  # run of J&W's code draws its own (its interval then covers the order too).
  t.batch_seed = config_dict.placeholder(int)
  t.batch_order = 'shared'
  t.checkpoint_every_steps = 200
  t.progress = True
  return t


def _analysis(dataset: str, encoder: str, variant: str) -> ml_collections.ConfigDict:
  """The keys every stage shares, then each stage's own section."""
  a = ml_collections.ConfigDict()
  a.split = 'test'
  a.max_docs = config_dict.placeholder(int)  # None: the whole split, else its first N
  # None: the whole split; else a sample of N documents drawn with `sample_seed`
  # (the same for every model seed: stages.runner.sample_indices).
  a.sample_docs = config_dict.placeholder(int)
  a.sample_seed = 0
  a.seed = 0
  a.batch_size = 32
  a.bucket_growth = 1.1  # finer than training: LOO costs grow with L²
  # A results file whose sha256 differs from its summary's record: recompute
  # it (False), or stop with its name (True) to inspect it first.
  a.refuse_damaged = False
  for name, section in _sections(STAGES, dataset, encoder, variant).items():
    a[name] = section
  return a


def _sections(registry, dataset: str, encoder: str, variant: str) -> dict:
  """{name: its section's defaults} of every entry of `registry` that has one."""
  sections = {}
  for name, entry in registry.items():
    defaults = entry.section.defaults(dataset, encoder, variant)
    if defaults:
      sections[name] = ml_collections.ConfigDict(defaults)
  return sections


def _smoke(c: ml_collections.ConfigDict) -> None:
  """A tiny model on a few documents: checks a set-up in seconds. (Stages and
  experiments shorten their own sections for this variant.)"""
  c.model.embed_dim = 16
  c.model.hidden_dim = 8
  c.data.max_docs_per_split = 64
  c.data.synthetic.update(train_size=96, dev_size=48, test_size=48, vocab_size=60)
  c.train.epochs = 2
  c.train.batch_size = 8
  c.train.eval_batch_size = 16
  c.train.checkpoint_every_steps = 4
  c.data.bucket_growth = 2.0  # fewer bucket lengths: fewer compilations
  c.analysis.bucket_growth = 2.0
  c.analysis.batch_size = 16


def choices() -> dict[str, tuple]:
  """Every key with a closed set of values: this module's and those the
  stages (`analysis.<stage>.<key>`) and experiments declare."""
  found = dict(OWN_CHOICES, **{'model.encoder': ENCODERS.names(), 'data.dataset': DATASETS.names()})
  for family in ENCODERS.values():
    found.update({f'model.{k}': tuple(v) for k, v in family.choices.items()})
  for group, registry in (('analysis', STAGES), ('experiment', EXPERIMENTS)):
    for name, entry in registry.items():
      found.update({f'{group}.{name}.{k}': tuple(v) for k, v in entry.section.choices.items()})
  return found


def _names(text: str, registry, key: str) -> tuple[str, ...]:
  """The comma-separated names of `text`, each checked against `registry`."""
  names = [n.strip() for n in text.split(',') if n.strip()]
  for name in names:
    if name not in registry:
      raise ConfigError(f'{registry.unknown(name)} in --config.{key}; choose from '
                        f'{", ".join(registry.names())} (comma-separated, or empty for none)')
  return tuple(names)


def analyses(cfg: ml_collections.ConfigDict) -> tuple[str, ...]:
  """The stages `cfg.analyses` asks for ('' -> none), in running order.

  Raises:
    ConfigError: an unknown stage name.
  """
  names = _names(cfg.analyses, STAGES, 'analyses')
  return tuple(n for n in STAGES.names() if n in names)


def experiments(cfg: ml_collections.ConfigDict) -> tuple[str, ...]:
  """The experiments `cfg.experiments` asks for, with those they read, in running order.

  Raises:
    ConfigError: an unknown name.
  """
  return with_requirements(EXPERIMENTS, _names(cfg.experiments, EXPERIMENTS, 'experiments'))


def _fits_model(stage, cfg: ml_collections.ConfigDict) -> bool:
  """Whether `stage` runs on the config's model: every stage on a binary
  model over words; `multi_class` ones on more classes too; only `any_model`
  ones on S&S's HAN, whose items are sentences."""
  return stage.any_model or not (cfg.model.hierarchical or (cfg.model.classes > 2 and not stage.multi_class))


def usable_stages(cfg: ml_collections.ConfigDict) -> tuple[str, ...]:
  """The stages the config's model and dataset can run, in running order.

  Args:
    cfg: a run config.

  Returns:
    The names of the registered stages that fit its model (`Stage.any_model`,
    `multi_class`) and whose needs its dataset meets (`needs_evidence`).
  """
  evidence = DATASETS[cfg.data.dataset].evidence
  return tuple(n for n in STAGES.names()
               if _fits_model(STAGES[n], cfg) and (evidence or not STAGES[n].needs_evidence))


def validate(cfg: ml_collections.ConfigDict) -> None:
  """Raises ConfigError naming any unknown key or invalid value, and the valid ones.

  What depends on the machine (devices, hosts) is checked where the run
  starts (`attn_jax.pipeline.check`), not here.
  """
  for key, allowed in choices().items():
    value = keys.get_key(cfg, key)
    if value not in allowed:
      renamed = keys.current_value(key, value)
      hint = f' ({value!r} is now called {renamed!r})' if renamed != value else ''
      raise ConfigError(f'{key}={value!r} is not valid{hint}; choose from {", ".join(allowed)}')
  reference = dict(keys.flat_items(default_config(cfg.data.dataset, cfg.model.encoder)))
  given = dict(keys.flat_items(cfg))
  unknown = sorted(set(given) - set(reference))
  if unknown:
    raise ConfigError(keys.unknown_key_message(unknown[0], reference))
  missing = sorted(set(reference) - set(given))
  if missing:
    raise ConfigError(f'config lacks key(s) {", ".join(missing)}; start from '
                      'attn_jax.config.default_config()')
  for name in analyses(cfg):
    stage = STAGES[name]
    if not _fits_model(stage, cfg):
      kind = 'a HAN (its items are sentences)' if cfg.model.hierarchical else 'a multi-class model'
      usable = [n for n in STAGES.names() if _fits_model(STAGES[n], cfg)]
      raise ConfigError(f'analysis stage {name!r} is for {"binary " if not stage.multi_class else ""}'
                        f'models over words, not {kind}; run --config.analyses={",".join(usable)}')
    if stage.needs_evidence and not DATASETS[cfg.data.dataset].evidence:
      having = [d.name for d in DATASETS.values() if d.evidence]
      raise ConfigError(f'analysis stage {name!r} needs known evidence per document, which '
                        f'{cfg.data.dataset} does not give; run it on {", ".join(having)}, or leave it '
                        'out of --config.analyses')
  asked = [n for n in experiments(cfg) if cfg.model.hierarchical or not EXPERIMENTS[n].multi_class]
  if asked and (cfg.model.classes > 2 or cfg.model.hierarchical):
    # W&P's and Meister's experiments are their papers' binary tasks' (their
    # losses, TVD bounds and tables are for one output probability).
    raise ConfigError(f'experiment {asked[0]!r} is for binary models over words, not '
                      f'{"a HAN" if cfg.model.hierarchical else f"a model of {cfg.model.classes} classes"}; '
                      'run it on a binary dataset, or --config.experiments=\'\'')
  for ok, message in _checks(cfg):
    if not ok:
      raise ConfigError(message)
  # Every stage's section is checked (each has one in every config); an
  # experiment's only when it is asked for.
  for group, registry, names in (('analysis', STAGES, STAGES.names()),
                                 ('experiment', EXPERIMENTS, experiments(cfg))):
    for name in names:
      section = cfg[group].get(name)
      problem = registry[name].section.check(section, cfg)
      if problem:
        raise ConfigError(f'{group}.{name}: {problem}' if group == 'experiment' else problem)


def _checks(cfg: ml_collections.ConfigDict) -> list[tuple[bool, str]]:
  """(holds, message) of each range this module's sections must be in."""
  m, t, a = cfg.model, cfg.train, cfg.analysis
  return [(problem is None, problem) for problem in (e.check(m) for e in ENCODERS.values())] + [
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
      (not (m.embeddings_unit_rows and m.embeddings_norm),
       'model.embeddings_unit_rows and model.embeddings_norm both rescale the rows: set one'),
      (not m.embeddings_unit_rows or bool(m.embeddings_file),
       'model.embeddings_unit_rows needs pretrained vectors (model.embeddings_file)'),
      (cfg.vectors.epochs >= 1 and cfg.vectors.min_count >= 1 and cfg.vectors.window >= 1,
       'vectors.epochs, vectors.min_count and vectors.window must be >= 1'),
      (cfg.vectors.get('workers', 1) == 'auto' or (type(cfg.vectors.get('workers', 1)) is int
                                                   and cfg.vectors.get('workers', 1) >= 1),
       f"vectors.workers={cfg.vectors.get('workers', 1)!r} must be a number of threads >= 1 "
       "(1: bit-reproducible) or 'auto' (this machine's cores)"),
      (m.attention != 'tanh' or ENCODERS[m.encoder].output_size(m) % 2 == 0,
       'tanh attention needs an even encoder output size (its layer maps H -> H/2)'),
      (0 <= m.dropout < 1, 'model.dropout must be in [0, 1)'),
      (m.classes == DATASETS[cfg.data.dataset].num_classes,
       f'model.classes={m.classes}, but {cfg.data.dataset} has {DATASETS[cfg.data.dataset].num_classes} '
       'classes (it follows data.dataset; leave it unset)'),
      ((t.loss == 'weighted_bce') == (m.classes == 2),
       f'train.loss={t.loss!r} does not fit {m.classes} classes: weighted_bce is for binary data, '
       'cross_entropy for more classes'),
      (t.select_by != 'roc_auc' or m.classes == 2,
       "train.select_by='roc_auc' needs binary data; select multi-class models by 'accuracy'"),
      (m.query == DATASETS[cfg.data.dataset].paired,
       f'model.query={m.query}, but {cfg.data.dataset} has {len(DATASETS[cfg.data.dataset].texts)} text(s) '
       'a document (it follows data.dataset; leave it unset)'),
      (m.get('query_width') is None or (DATASETS[cfg.data.dataset].max_query_tokens is not None and
                                        m.query_width >= DATASETS[cfg.data.dataset].max_query_tokens),
       _query_width_problem(cfg.data.dataset, m.get('query_width'))),
      (not m.hierarchical or DATASETS[cfg.data.dataset].hierarchical,
       f'model.hierarchical (a HAN) needs documents with sentences: {cfg.data.dataset} has none; '
       f'use {" or ".join(d.name for d in DATASETS.values() if d.hierarchical)}'),
      (not m.hierarchical or ENCODERS[m.encoder].in_han,
       f'a HAN is built from the {", ".join(e.name for e in ENCODERS.values() if e.in_han)} '
       f'encoders (S&S), not {m.encoder!r}'),
      (all(0 <= x < 1 for x in (m.input_dropout, m.sentence_dropout, m.output_dropout)),
       'model.input_dropout, sentence_dropout and output_dropout must be in [0, 1)'),
      (t.clip_norm is None or t.clip_norm > 0, 'train.clip_norm must be > 0 (or None: no clipping)'),
      (t.plateau_factor is None or 0 < t.plateau_factor < 1,
       'train.plateau_factor must be in (0, 1) (or None: a constant learning rate)'),
      (cfg.data.max_batch_tokens is None or cfg.data.max_batch_tokens >= 1,
       'data.max_batch_tokens must be >= 1 (or None)'),
      (cfg.data.max_batch_sentence_words is None or cfg.data.max_batch_sentence_words >= 1,
       'data.max_batch_sentence_words must be >= 1 (or None)'),
      (cfg.data.bucket_growth > 1, 'data.bucket_growth must be > 1'),
      (cfg.data.max_docs_per_split is None or cfg.data.max_docs_per_split >= 1,
       'data.max_docs_per_split must be >= 1 (or None for all)'),
      (a.max_docs is None or a.max_docs >= 1, 'analysis.max_docs must be >= 1 (or None for all)'),
      (a.sample_docs is None or a.sample_docs >= 1, 'analysis.sample_docs must be >= 1 (or None for all)'),
      (a.sample_docs is None or a.max_docs is None,
       'set analysis.max_docs (the first N documents) or analysis.sample_docs (a seeded sample), not both'),
      (a.batch_size >= 1, 'analysis.batch_size must be >= 1'),
      (a.bucket_growth > 1, 'analysis.bucket_growth must be > 1'),
  ]
