"""FLOPs one document needs under each analysis, counted from the weights'
shapes at the document's own length (so padding counts as waste): 2 per
multiply-add of the matmuls and convolutions, elementwise work left out.

Per token, the encoder costs
  BiLSTM:  input projections 2 × 2·D·4H and recurrence 2 × 2·H·4H (both directions);
  CNN:     Σ_k 2·k·D·F (one convolution of F filters per kernel width k);
  Average: 2·D·H;
the attention scores 2·(O·A + A) (O the state width, A the scorer's) and
decoding 2·O. A backward pass costs two forwards when it also takes the
weights' gradients (training), one when it only goes back to the inputs
(gradient importance: JAX differentiates with respect to the embeddings
alone). Leave-one-out counts what
attn-jax's paths compute besides the forward pass for ŷ. The BiLSTM: its
input projections once and ⌊(n − 1)/2⌋ paired lanes of n − 1 (deletion) or
n + 1 (replacement) recurrent steps per direction, then attention and
decoding over all n positions of each of the n − 2 variants. The CNN and
Average encoders under softmax (`loo_windows`): the document's forward again
(its states and scores for the prefix and suffix sums), for the CNN its
outputs and its per-tap products e_q · kernel[j] once more (what the window
outputs are summed from), and the scores of each variant's window: 2R
(deletion) or 2R + 1 (replacement) states, R the widest radius (0 for the
Average encoder).
"""

PERMUTATIONS = 100


class Costs:
  """Per-token and per-variant FLOPs of one attn-jax params pytree."""

  def __init__(self, params: dict):
    enc, att = params['encoder'], params['attention']
    self.embed = int(params['embedding']['table'].shape[1])
    self.states = int(params['decoder']['output']['kernel'].shape[0])
    scorer = int(att['projection']['kernel'].shape[1])
    self.head = 2 * (self.states * scorer + scorer) + 2 * self.states
    d = self.embed
    if 'w_hh' in enc:
      h = int(enc['w_hh'].shape[1])
      self.kind, self.hidden = 'bilstm', h
      self.encoder = 2 * 2 * 4 * h * (d + h)
    elif any(name.startswith('conv') for name in enc):
      self.kind = 'cnn'
      self.widths = {int(n[4:]): int(v['bias'].shape[0]) for n, v in enc.items()}
      self.encoder = sum(2 * k * d * f for k, f in self.widths.items())
    else:
      self.kind = 'average'
      self.encoder = 2 * d * int(enc['projection']['kernel'].shape[1])

  def variants(self, mode: str, n: int) -> float:
    """FLOPs of all n − 2 one-word variants of a document, beyond ŷ's forward."""
    if self.kind == 'bilstm':
      steps = n - 1 if mode == 'delete' else n + 1
      h = self.hidden
      encoder = n * 2 * 2 * 4 * h * self.embed + ((n - 1) // 2) * steps * 2 * 2 * 4 * h * h
      return encoder + (n - 2) * n * self.head
    radius = max((k - 1) // 2 for k in self.widths) if self.kind == 'cnn' else 0
    window = 2 * radius if mode == 'delete' else 2 * radius + 1
    outputs_and_taps = 2 * n * self.encoder if self.kind == 'cnn' else 0
    return n * (self.encoder + self.head) + outputs_and_taps + (n - 2) * window * self.head

  def document(self, analysis: str, n: int) -> float:
    """FLOPs of `analysis` on one document of n tokens (SOS and EOS included)."""
    forward = n * (self.encoder + self.head)
    if analysis == 'forward':
      return forward
    if analysis == 'gradient':  # the backward pass to the inputs only: no weight gradients
      return 2 * forward
    if analysis == 'train_step':
      return 3 * forward
    if analysis == 'permutation':
      return forward + PERMUTATIONS * n * 2 * self.states  # each permutation re-decodes
    if analysis in ('loo_delete', 'loo_replace'):
      return forward + self.variants(analysis.split('_')[1], n)
    raise ValueError(analysis)
