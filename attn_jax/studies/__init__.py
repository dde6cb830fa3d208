"""Studies: named sets of configurations, each trained with several seeds as
one program and analysed, with a table of mean ± 95 % CI over seeds.

    python -m attn_jax.studies run fidelity [--root=workdirs/fidelity] [--only=PATTERN]
    python -m attn_jax.studies run jw_grid --only='sst_*,20news_*'
    python -m attn_jax.studies run jw_qa --only='babi1_*'   # needs ATTN_JAX_DATA (bAbI)
    python -m attn_jax.studies report jw_qa --root=workdirs/jw_qa --save=results/jw_qa
    python -m attn_jax.studies run ss_models [--only='imdb_ratings_*']
    python -m attn_jax.studies run meister_seeds --only='sst_*' --one-at-a-time
    python -m attn_jax.studies run vector_seeds --root=workdirs/vector_seeds --only='sst_*'
    python -m attn_jax.studies report jw_grid [--root=...] [--save=results/jw_grid] [--readme=README.md --readme=docs/jain_wallace.md]
    python -m attn_jax.studies report jw_grid --root=results/jw_grid [--reference=results/jw_reference]  # + J&W's own code
    python -m attn_jax.studies run wp_table2 --reuse=workdirs/jw_grid   # W&P Table 2, 5 seeds a dataset
    python -m attn_jax.studies report wp_table2 --root=results/wp_table2   # + W&P's own code
    python -m attn_jax.studies report vector_seeds --root=workdirs/vector_seeds --save=results/vector_seeds --readme=docs/jain_wallace.md
    python -m attn_jax.studies run batch_seeds --only='sst_*'   # batch order as a random factor
    python -m attn_jax.studies run vector_workers   # vectors by 1 or 2 gensim threads, 5 seeds each
    python -m attn_jax.studies run roar --only='sst_*' --one-at-a-time   # ROAR and recursive ROAR

The `vector_seeds` study adds the vectors' own randomness to the J&W grid's
BiLSTM + tanh rows of SST and IMDB: vector seed k with model seed k for
k = 0..4, where k = 0 is the grid's seed 0 (vectors seed 0, model seed 0) and
the study trains k = 1..4 — so 5 models whose vectors AND model seeds both
vary, beside the grid's 5 models that share vector seed 0; its report sets
the two intervals side by side (reading the grid from `jw_grid` beside its
root).
"""

from attn_jax.studies import (batch_seeds, faithfulness_roar, fidelity, jain_wallace_grid, jain_wallace_qa,
                              meister_seeds, serrano_smith_models, vector_seeds, vector_workers,
                              wiegreffe_pinter_table2)
from attn_jax.tables.report_registry import COMMANDS, Command
from attn_jax.studies.arms import Arm, Study

STUDIES = {
    # Model seed k with batch seed k, k = 1..4 (one model per arm), for the J&W
    # grid rows where attn-jax and J&W's code disagreed: with the grid's seed 0,
    # 5 models whose batch orders vary too, as J&W's runs' do (attn_jax.studies.batch_seeds).
    'batch_seeds': Study('batch_seeds', batch_seeds.ARMS, batch_seeds.ANALYSES, seeds=1,
                         description=batch_seeds.__doc__.split('\n\n')[0], kind='batch_seeds'),
    'fidelity': Study('fidelity', fidelity.ARMS, fidelity.ANALYSES, seeds=5,
                      description=fidelity.__doc__.split('\n\n')[0], kind='fidelity'),
    'jw_grid': Study('jw_grid', jain_wallace_grid.ARMS, jain_wallace_grid.ANALYSES, seeds=5,
                     description=jain_wallace_grid.__doc__.split('\n\n')[0]),
    # bAbI 1-3 x {BiLSTM, CNN, Average} x {tanh, dot}, 5 seeds, with the
    # known-evidence scores (attn_jax.studies.jain_wallace_qa).
    'jw_qa': Study('jw_qa', jain_wallace_qa.ARMS, jain_wallace_qa.ANALYSES, seeds=5,
                   description=jain_wallace_qa.__doc__.split('\n\n')[0], kind='qa_grid'),
    # Meister et al.'s Tables 1 and 6 rows, 5 seeds each at their Table 4
    # learning rates (attn_jax.studies.meister_seeds).
    'meister_seeds': Study('meister_seeds', meister_seeds.ARMS, meister_seeds.ANALYSES, seeds=5,
                           description=meister_seeds.__doc__.split('\n\n')[0], kind='meister_seeds'),
    # ROAR and recursive ROAR on J&W's BiLSTM + tanh rows, 3 seeds (attn_jax.studies.faithfulness_roar).
    'roar': Study('roar', faithfulness_roar.ARMS, faithfulness_roar.ANALYSES, seeds=3,
                  description=faithfulness_roar.__doc__.split('\n\n')[0], kind='roar'),
    'ss_models': Study('ss_models', serrano_smith_models.ARMS, serrano_smith_models.ANALYSES, seeds=1,
                       description=serrano_smith_models.__doc__.split('\n\n')[0], kind='ss'),
    # Vector seed k with model seed k, k = 1..4 (one model per arm); k = 0 is
    # the J&W grid's seed 0: 5 models whose vectors and model seeds both vary,
    # beside the grid's 5 that share vector seed 0 (attn_jax.studies.vector_seeds).
    'vector_seeds': Study('vector_seeds', vector_seeds.ARMS, vector_seeds.ANALYSES, seeds=1,
                          description=vector_seeds.__doc__.split('\n\n')[0], kind='vector_seeds'),
    # Vectors built with one gensim thread (bit-reproducible) or two, SST
    # BiLSTM + tanh, 5 seeds each (attn_jax.studies.vector_workers).
    'vector_workers': Study('vector_workers', vector_workers.ARMS, vector_workers.ANALYSES, seeds=5,
                            description=vector_workers.__doc__.split('\n\n')[0], kind='vector_workers'),
    # Learned vs uniform attention on SST, 5 seeds each, beside W&P's own code
    # (benchmarks/original_code/wiegreffe_pinter_reference.py): W&P Table 2 (attn_jax.studies.wiegreffe_pinter_table2).
    'wp_table2': Study('wp_table2', wiegreffe_pinter_table2.ARMS, wiegreffe_pinter_table2.ANALYSES, seeds=5,
                       description=wiegreffe_pinter_table2.__doc__.split('\n\n')[0], kind='wp_table2'),
}



def _report(parser, args, argv) -> None:
  """`python -m attn_jax.report study NAME [--root ...]`: the same table as
  `python -m attn_jax.studies report NAME`."""
  del argv
  from attn_jax.tables import studies as study_tables  # pylint: disable=g-import-not-at-top
  if len(args.runs) != 1 or args.runs[0] not in STUDIES:
    parser.error(f'study: name one study, one of {", ".join(sorted(STUDIES))}')
  study = STUDIES[args.runs[0]].with_seeds(args.seeds).with_variant(args.variant)
  study_tables.write(study, args.root or f'workdirs/{study.name}', args.save, args.readme, args.reference)


# The report entry (`python -m attn_jax.report`) imports this package, so its
# help lists the studies' tables among its commands.
COMMANDS.register(Command('study', 100, 'STUDY [--root=workdirs/STUDY] [--save=results/STUDY] [--reference=...]',
                          f'a study\'s table: {", ".join(sorted(STUDIES))}', _report))

__all__ = ['Arm', 'STUDIES', 'Study']
