"""The child process that trains word vectors under the pinned BLAS kernel.

    python -m attn_jax.vectors.worker JOB_DIR

`fasttext.train` starts it with `OPENBLAS_CORETYPE` set in its environment
(`blas`): the kernel must be chosen before numpy and scipy load, which only a
fresh process allows. It reads JOB_DIR/job.json ({corpus_path, dim, recipe,
words, workers}), prints `epoch N SECONDS` after each epoch (the parent's progress bar)
and writes JOB_DIR/vectors.npy and JOB_DIR/result.json ({keys, environment}).
An AttnJaxError (gensim missing, say) goes to result.json as {error, message}
so the parent raises the same error, not this process's traceback.
"""

import json
import os
import sys

import numpy as np

from attn_jax.core.errors import AttnJaxError
from attn_jax.vectors import blas, fasttext


def _write_result(job: str, result: dict) -> None:
  with open(os.path.join(job, 'result.json'), 'w', encoding='utf-8') as f:
    json.dump(result, f)


def main(job: str) -> int:
  with open(os.path.join(job, 'job.json'), encoding='utf-8') as f:
    spec = json.load(f)
  report = lambda done, seconds: print(f'epoch {done} {seconds:.3f}', flush=True)
  try:
    wv = fasttext.train_here(spec['corpus_path'], spec['dim'], spec['recipe'], report,
                             spec.get('workers', 1))
  except AttnJaxError as e:
    _write_result(job, {'error': type(e).__name__, 'message': str(e)})
    return 2
  keys = list(wv.index_to_key) if spec['words'] is None else [
      w for w in spec['words'] if w in wv.key_to_index]
  # `wv[word]` of a word in the vocabulary is its row of `wv.vectors`, n-grams included.
  rows = np.asarray([wv.key_to_index[w] for w in keys], dtype=np.int64)
  np.save(os.path.join(job, 'vectors.npy'), np.ascontiguousarray(wv.vectors[rows], np.float32))
  _write_result(job, {'keys': keys, 'environment': blas.in_use()})
  return 0


if __name__ == '__main__':
  sys.exit(main(sys.argv[1]))
