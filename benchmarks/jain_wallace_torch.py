"""J&W's attention classifiers and their analysis loops in PyTorch, loaded
from attn-jax weights: the baseline `peers.py` times attn-jax against.

The model is J&W's encoder + `AttnDecoder` (tanh attention, softmax): a
packed bidirectional `nn.LSTM`, 'same' convolutions with ReLU (`cnn`) or a
tanh projection per token (`average`) over [SOS] w_1 .. w_n [EOS], attention
over the words only (SOS, EOS and PAD masked), and a linear output on the
attention-weighted context. The loops are the way J&W's code runs each
analysis: one batch at a time, deletion leave-one-out one column at a time,
gradients with the attention detached, and 100 permutations drawn per
document in Python. Captum runs on the same module.
"""

import numpy as np
import torch
from torch import nn

PAD = 0


def _positions(tokens):
  return torch.arange(tokens.shape[1])[None, :]


class BiLSTMEncoder(nn.Module):
  """[B, L, D] -> [B, L, 2H]: J&W's packed bidirectional LSTM."""

  def __init__(self, embed_dim: int, hidden: int):
    super().__init__()
    self.lstm = nn.LSTM(embed_dim, hidden, batch_first=True, bidirectional=True)
    self.out_dim = 2 * hidden

  def forward(self, embedded, lengths):
    packed = nn.utils.rnn.pack_padded_sequence(embedded, lengths.cpu(), batch_first=True,
                                               enforce_sorted=False)
    states, _ = self.lstm(packed)
    return nn.utils.rnn.pad_packed_sequence(states, batch_first=True,
                                            total_length=embedded.shape[1])[0]


class CNNEncoder(nn.Module):
  """[B, L, D] -> [B, L, H]: one 'same' convolution per kernel size, ReLU,
  zero outside the words (J&W's `(1 - mask)`)."""

  def __init__(self, embed_dim: int, filters: int, kernel_sizes):
    super().__init__()
    self.convs = nn.ModuleList(nn.Conv1d(embed_dim, filters, k, padding=k // 2)
                               for k in kernel_sizes)
    self.out_dim = filters * len(kernel_sizes)

  def forward(self, embedded, lengths):
    x = embedded.transpose(1, 2)
    hidden = torch.relu(torch.cat([conv(x) for conv in self.convs], dim=1)).transpose(1, 2)
    p = torch.arange(embedded.shape[1])[None, :]
    return hidden * ((p >= 1) & (p < lengths[:, None] - 1))[..., None]


class AverageEncoder(nn.Module):
  """[B, L, D] -> [B, L, H]: tanh(W e_t + b) per token, zero after the row."""

  def __init__(self, embed_dim: int, hidden: int):
    super().__init__()
    self.projection = nn.Linear(embed_dim, hidden)
    self.out_dim = hidden

  def forward(self, embedded, lengths):
    p = torch.arange(embedded.shape[1])[None, :]
    return torch.tanh(self.projection(embedded)) * (p < lengths[:, None])[..., None]


class JWClassifier(nn.Module):
  """tokens [B, L] int64, lengths [B] -> logits [B] (and α, states)."""

  def __init__(self, embedding: nn.Embedding, encoder: nn.Module, attention_dim: int):
    super().__init__()
    self.embedding = embedding
    self.encoder = encoder
    self.projection = nn.Linear(encoder.out_dim, attention_dim)
    self.v = nn.Linear(attention_dim, 1, bias=False)
    self.output = nn.Linear(encoder.out_dim, 1)
    self.detach_attention = False

  def encode(self, embedded, lengths):
    return self.encoder(embedded, lengths)

  @staticmethod
  def mask(tokens, lengths):
    positions = _positions(tokens)
    return (positions >= 1) & (positions < lengths[:, None] - 1) & (tokens != PAD)

  def attend(self, hidden, mask):
    scores = self.v(torch.tanh(self.projection(hidden)))[..., 0]
    return torch.softmax(scores.masked_fill(~mask, float('-inf')), dim=-1)

  def decode(self, hidden, alpha):
    return self.output(torch.einsum('bl,blh->bh', alpha, hidden))[:, 0]

  def forward_embedded(self, embedded, tokens, lengths):
    hidden = self.encode(embedded, lengths)
    alpha = self.attend(hidden, self.mask(tokens, lengths))
    if self.detach_attention:
      alpha = alpha.detach()
    return self.decode(hidden, alpha), alpha, hidden

  def forward(self, tokens, lengths):
    return self.forward_embedded(self.embedding(tokens), tokens, lengths)[0]


def _tensor(x):
  return torch.tensor(np.ascontiguousarray(x), dtype=torch.float32)


def _encoder(enc: dict, embed_dim: int) -> nn.Module:
  """The attn-jax encoder params as the PyTorch encoder computing the same.

  attn-jax's LSTM has PyTorch's two biases per direction (`model.lstm_biases=2`);
  with one (`lstm_biases=1`, before 2026-11-26) the recurrent one is zero (both use the gate order i, f, g, o). A flax `Conv`
  kernel is [k, D, F], PyTorch's [F, D, k].
  """
  if 'w_hh' in enc:
    module = BiLSTMEncoder(embed_dim, enc['w_hh'].shape[1])
    for d, suffix in enumerate(('', '_reverse')):
      getattr(module.lstm, f'weight_ih_l0{suffix}').copy_(_tensor(enc['w_ih'][d].T))
      getattr(module.lstm, f'weight_hh_l0{suffix}').copy_(_tensor(enc['w_hh'][d].T))
      getattr(module.lstm, f'bias_ih_l0{suffix}').copy_(_tensor(enc['bias'][d]))
      if 'bias_hh' in enc:
        getattr(module.lstm, f'bias_hh_l0{suffix}').copy_(_tensor(enc['bias_hh'][d]))
      else:
        getattr(module.lstm, f'bias_hh_l0{suffix}').zero_()
    return module
  convs = sorted((int(name[4:]), v) for name, v in enc.items() if name.startswith('conv'))
  if convs:
    module = CNNEncoder(embed_dim, convs[0][1]['bias'].shape[0], [k for k, _ in convs])
    for conv, (_, v) in zip(module.convs, convs):
      conv.weight.copy_(_tensor(np.transpose(v['kernel'], (2, 1, 0))))
      conv.bias.copy_(_tensor(v['bias']))
    return module
  if set(enc) == {'projection'}:
    module = AverageEncoder(embed_dim, enc['projection']['kernel'].shape[1])
    module.projection.weight.copy_(_tensor(enc['projection']['kernel'].T))
    module.projection.bias.copy_(_tensor(enc['projection']['bias']))
    return module
  raise ValueError(f'no PyTorch peer for an encoder with params {sorted(enc)}')


def from_attn_jax(params: dict) -> JWClassifier:
  """The attn-jax BiLSTM, CNN or Average params pytree with tanh attention as a
  `JWClassifier` (the same function)."""
  to_numpy = lambda tree: ({k: to_numpy(v) for k, v in tree.items()} if isinstance(tree, dict)
                           else np.asarray(tree))
  table = np.asarray(params['embedding']['table'])
  att, dec = to_numpy(params['attention']), to_numpy(params['decoder']['output'])
  with torch.no_grad():
    embedding = nn.Embedding(table.shape[0], table.shape[1], padding_idx=PAD)
    embedding.weight.copy_(_tensor(table))
    embedding.weight[PAD] = 0.0
    model = JWClassifier(embedding, _encoder(to_numpy(params['encoder']), table.shape[1]),
                         att['projection']['kernel'].shape[1])
    model.projection.weight.copy_(_tensor(att['projection']['kernel'].T))
    model.projection.bias.copy_(_tensor(att['projection']['bias']))
    model.v.weight.copy_(_tensor(att['v']['kernel'].T))
    model.output.weight.copy_(_tensor(dec['kernel'].T))
    model.output.bias.copy_(_tensor(dec['bias']))
  return model.eval()


def as_torch(batch):
  """An attn-jax `Batch` cut to its longest row, as J&W pad: (tokens, lengths, rows)."""
  rows = np.flatnonzero(batch.index >= 0)
  lengths = batch.lengths[rows]
  tokens = batch.tokens[rows, :lengths.max()]
  return torch.as_tensor(tokens, dtype=torch.long), torch.as_tensor(lengths, dtype=torch.long), rows


@torch.no_grad()
def probs(model, tokens, lengths) -> np.ndarray:
  return torch.sigmoid(model(tokens, lengths)).numpy()


def gradient_loop(model, tokens, lengths) -> np.ndarray:
  """J&W `gradient_mem`: |∂ŷ/∂e_t · e_t| with α detached, one backward pass per batch."""
  model.detach_attention = True
  try:
    embedded = model.embedding(tokens).detach().requires_grad_(True)
    logits = model.forward_embedded(embedded, tokens, lengths)[0]
    torch.sigmoid(logits).sum().backward()
    scores = (embedded.grad * embedded).sum(-1).abs()
  finally:
    model.detach_attention = False
  return (scores * model.mask(tokens, lengths)).detach().numpy()


@torch.no_grad()
def loo_loop(model, tokens, lengths) -> np.ndarray:
  """J&W `remove_and_run`: delete column i of the batch, re-encode, |ŷ₋ᵢ − ŷ|; one pass per i."""
  base = torch.sigmoid(model(tokens, lengths))
  out = torch.zeros(tokens.shape)
  for i in range(1, int(lengths.max()) - 1):
    shorter = torch.cat([tokens[:, :i], tokens[:, i + 1:]], dim=1)
    out[:, i] = (torch.sigmoid(model(shorter, lengths - 1)) - base).abs()
  return (out * model.mask(tokens, lengths)).numpy()


@torch.no_grad()
def permutation_loop(model, tokens, lengths, num: int, generator) -> np.ndarray:
  """J&W `permute_attn`: encode once, then `num` times shuffle each document's α over
  its words (a Python loop over documents) and decode. -> [B, num] |Δŷ|."""
  hidden = model.encode(model.embedding(tokens), lengths)
  alpha = model.attend(hidden, model.mask(tokens, lengths))
  base = torch.sigmoid(model.decode(hidden, alpha))
  out = torch.zeros((len(tokens), num))
  for k in range(num):
    permuted = alpha.clone()
    for b, n in enumerate(lengths.tolist()):
      permuted[b, 1:n - 1] = alpha[b, 1:n - 1][torch.randperm(n - 2, generator=generator)]
    out[:, k] = (torch.sigmoid(model.decode(hidden, permuted)) - base).abs()
  return out.numpy()


def train_step(model, optimizer, tokens, lengths, labels, weights) -> float:
  """One J&W training step: weighted binary cross-entropy summed over the batch."""
  model.train()
  optimizer.zero_grad()
  logits = model(tokens, lengths)
  loss = nn.functional.binary_cross_entropy_with_logits(logits, labels, weight=weights,
                                                        reduction='sum')
  loss.backward()
  optimizer.step()
  return loss.item()


def optimizer_for(model, learning_rate: float, weight_decay: float):
  """J&W's optimiser: Adam with amsgrad and L2 weight decay."""
  return torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=learning_rate,
                          weight_decay=weight_decay, amsgrad=True)


def captum_feature_ablation(model, tokens, lengths, per_eval: int) -> np.ndarray:
  """Captum `FeatureAblation` on the token ids, each position replaced by PAD
  (attn-jax's leave-one-out with mode='replace'); |Δŷ| per position."""
  from captum.attr import FeatureAblation  # pylint: disable=g-import-not-at-top
  forward = lambda t, l: torch.sigmoid(model(t, l))
  mask = torch.arange(tokens.shape[1])[None, :].expand_as(tokens).contiguous()
  with torch.no_grad():
    attr = FeatureAblation(forward).attribute(tokens, baselines=PAD, feature_mask=mask,
                                              additional_forward_args=(lengths,),
                                              perturbations_per_eval=per_eval)
  return (attr.abs() * model.mask(tokens, lengths)).numpy()


def captum_input_x_gradient(model, tokens, lengths) -> np.ndarray:
  """Captum `InputXGradient` at the embeddings, α detached (J&W's variant)."""
  from captum.attr import InputXGradient  # pylint: disable=g-import-not-at-top
  model.detach_attention = True
  try:
    forward = lambda e, t, l: torch.sigmoid(model.forward_embedded(e, t, l)[0])
    embedded = model.embedding(tokens).detach().requires_grad_(True)
    attr = InputXGradient(forward).attribute(embedded, additional_forward_args=(tokens, lengths))
  finally:
    model.detach_attention = False
  return (attr.sum(-1).abs() * model.mask(tokens, lengths)).detach().numpy()
