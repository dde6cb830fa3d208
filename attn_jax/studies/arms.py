"""An arm of a study: one config (with its seeds as a model axis) and where it runs."""

import dataclasses
import ml_collections

from attn_jax import config as config_lib
from attn_jax.config import serrano_smith_config as serrano_smith


@dataclasses.dataclass(frozen=True)
class Arm:
  """One row of a study's table: `config()` trained with `seeds` as one program.

  name: the row's name and its folder under the study's root.
  dataset, encoder, variant: which `configs/` recipe it starts from.
  overrides: {dotted key: value} on top of that recipe.
  family: '' for J&W's recipe; 'han' or 'flan' for S&S's
    (`attn_jax.config.serrano_smith_config`), whose encoders are S&S's names
    (rnn, conv, noenc).
  seeds: this arm's seeds, where it needs another count than the study's
    (0: the study's; e.g. the J&W grid's SST rows, whose τ need 15 seeds a
    side to decide an equivalence test at their spread).
  """
  name: str
  dataset: str
  encoder: str
  overrides: dict = dataclasses.field(default_factory=dict)
  variant: str = ''
  family: str = ''
  seeds: int = 0

  def config(self, seeds: int, analyses: str) -> ml_collections.ConfigDict:
    if self.family:
      cfg = serrano_smith.ss_config(self.dataset, self.family,
                                    ','.join(p for p in (self.encoder, self.variant) if p))
    else:
      cfg = config_lib.default_config(self.dataset, self.encoder, self.variant)
    # Independent seeds: model seed k also draws its own batch order, as each of
    # J&W's seeds does, so an interval over seeds covers the batch order's
    # spread too. An arm that fixes the order (`train.batch_seed`) or asks for
    # the shared one (`train.batch_order='shared'`) keeps it.
    if not {'train.batch_seed', 'train.batch_order'} & set(self.overrides):
      config_lib.set_key(cfg, 'train.batch_order', 'own')
    for key, value in self.overrides.items():
      config_lib.set_key(cfg, key, value)
    cfg.name = self.name
    cfg.sweep = 'seed=' + ','.join(str(s) for s in range(seeds)) if seeds > 1 else ''
    cfg.analyses = analyses
    return cfg


@dataclasses.dataclass(frozen=True)
class Study:
  """A named list of arms, the analyses each runs, and its report."""
  name: str
  arms: tuple[Arm, ...]
  analyses: str
  seeds: int
  description: str
  # which table its report prints (attn_jax.tables.report_registry.TABLES, kind 'study'): 'grid', 'fidelity',
  # 'ss' (S&S's tables), 'vector_seeds' (two intervals beside the J&W grid's)
  # or 'wp_table2' (learned vs uniform beside W&P's code)
  kind: str = 'grid'
  folder_suffix: str = ''  # set by `with_seeds`

  def with_seeds(self, seeds: int | None) -> 'Study':
    """The study with another number of seeds for every arm. Its arms train
    in their own folders (`<arm>-<S>seeds`), beside, never over, the study's
    own: an experiment's results are kept per setting, like a stage's."""
    if not seeds or (seeds == self.seeds and not any(a.seeds for a in self.arms)):
      return self
    arms = tuple(dataclasses.replace(a, seeds=0) for a in self.arms)
    return dataclasses.replace(self, arms=arms, seeds=seeds, folder_suffix=f'-{seeds}seeds')

  def seeds_of(self, arm: Arm) -> int:
    """How many seeds `arm` trains: its own count, else the study's."""
    return arm.seeds or self.seeds

  def with_variant(self, variant: str | None) -> 'Study':
    """The study with every arm at a config variant ('smoke': seconds-long
    arms that check a set-up), in folders of their own (`<arm>-smoke`)."""
    if not variant:
      return self
    arms = tuple(dataclasses.replace(a, variant=variant) for a in self.arms)
    return dataclasses.replace(self, arms=arms, folder_suffix=self.folder_suffix + f'-{variant}')

  def folder_name(self, arm: Arm) -> str:
    return arm.name + self.folder_suffix
