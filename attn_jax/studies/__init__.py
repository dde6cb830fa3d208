"""Studies: named sets of configurations, each trained with several seeds as
one program and analysed, with a table of mean ± 95 % CI over seeds.

    python -m attn_jax.studies run fidelity [--root=workdirs/fidelity] [--only=PATTERN]
    python -m attn_jax.studies run jw_grid --only='sst_*,20news_*'
    python -m attn_jax.studies run ss_models [--only='imdb_ratings_*']
    python -m attn_jax.studies report jw_grid [--root=...] [--save=results/jw_grid] [--readme=README.md --readme=docs/jain_wallace.md]
    python -m attn_jax.studies report jw_grid --root=results/jw_grid [--reference=results/jw_reference]  # + J&W's own code
"""

from attn_jax.studies import fidelity, jw_grid, ss_models
from attn_jax.studies.arms import Arm, Study

STUDIES = {
    'fidelity': Study('fidelity', fidelity.ARMS, fidelity.ANALYSES, seeds=5,
                      description=fidelity.__doc__.split('\n\n')[0], kind='fidelity'),
    'jw_grid': Study('jw_grid', jw_grid.ARMS, jw_grid.ANALYSES, seeds=5,
                     description=jw_grid.__doc__.split('\n\n')[0]),
    'ss_models': Study('ss_models', ss_models.ARMS, ss_models.ANALYSES, seeds=1,
                       description=ss_models.__doc__.split('\n\n')[0], kind='ss'),
}

__all__ = ['Arm', 'STUDIES', 'Study']
