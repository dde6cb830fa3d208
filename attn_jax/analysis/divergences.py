"""Divergences between attention distributions and between output distributions.

All natural logs (JSD ≤ ln 2).
"""

import jax
import jax.numpy as jnp

_LOG_EPS = 1e-10  # J&W's `modelUtils.jsd` smoothing


def jw_kl(p: jnp.ndarray, q: jnp.ndarray) -> jnp.ndarray:
  """KL(p‖q) over the last axis as J&W compute it (`model/modelUtils.py::jsd`).

  Inputs are clipped to [0, 1] and 1e-10 added inside the logs, so zeros are
  harmless. Natural log.

  Args:
    p: [..., L] a distribution (attention).
    q: [..., L] another, broadcastable against `p`.

  Returns:
    [...] KL(p‖q) in nats.
  """
  p, q = jnp.clip(p, 0.0, 1.0), jnp.clip(q, 0.0, 1.0)
  return jnp.sum(p * (jnp.log(p + _LOG_EPS) - jnp.log(q + _LOG_EPS)), axis=-1)


def jw_jsd(p: jnp.ndarray, q: jnp.ndarray) -> jnp.ndarray:
  """Jensen-Shannon divergence of attention distributions [..., L] -> [...] (J&W's `jsd`).

  ½ KL(p‖m) + ½ KL(q‖m) with m = ½(p + q), each KL as `jw_kl` (J&W's 1e-10
  smoothing). Natural log (JSD ≤ ln 2).

  Args:
    p: [..., L] an attention distribution.
    q: [..., L] another, broadcastable against `p`.

  Returns:
    [...] JSD(p, q) in nats.
  """
  m = 0.5 * (p + q)
  return 0.5 * jw_kl(p, m) + 0.5 * jw_kl(q, m)


def binary_js(logits_p: jnp.ndarray, logits_q: jnp.ndarray) -> jnp.ndarray:
  """JS divergence between the output distributions [1 − σ(z), σ(z)] of two logits.

  S&S §2.1, computed in log space as S&S do (`log_space_js`); natural log.

  Args:
    logits_p: [...] binary logits z.
    logits_q: [...] binary logits, broadcastable against `logits_p`.

  Returns:
    [...] the JS divergence in nats, ≥ 0.
  """
  log_p = jnp.stack([jax.nn.log_sigmoid(-logits_p), jax.nn.log_sigmoid(logits_p)], axis=-1)
  log_q = jnp.stack([jax.nn.log_sigmoid(-logits_q), jax.nn.log_sigmoid(logits_q)], axis=-1)
  return log_space_js(log_p, log_q)


def log_space_js(log_p: jnp.ndarray, log_q: jnp.ndarray) -> jnp.ndarray:
  """JS divergence of two distributions given as log-probabilities [..., C]
  -> [...] (S&S's `test_model.py::get_js_div_of_dists`, natural log)."""
  log_m = jnp.logaddexp(log_p, log_q) - jnp.log(2.0).astype(log_p.dtype)
  kl_pm = jnp.sum(jnp.exp(log_p) * (log_p - log_m), axis=-1)
  kl_qm = jnp.sum(jnp.exp(log_q) * (log_q - log_m), axis=-1)
  return jnp.maximum(0.5 * kl_pm + 0.5 * kl_qm, 0.0)


def wp_tvd(p: jnp.ndarray, q: jnp.ndarray) -> jnp.ndarray:
  """W&P's TVD of two single-probability binary outputs: ½|p − q| elementwise (W&P §4).

  Half the two-class total variation |p − q| that J&W use.

  Args:
    p: [...] P(y = 1) of one output.
    q: [...] P(y = 1) of the other, broadcastable against `p`.

  Returns:
    [...] ½|p − q|.
  """
  return 0.5 * jnp.abs(p - q)


def attention_kl(p: jnp.ndarray, q: jnp.ndarray, mask: jnp.ndarray) -> jnp.ndarray:
  """KL(p‖q) between attention distributions over the positions in `mask`.

  KL(p‖q) = Σ_{t in mask} p_t (log(p_t + ε) − log(q_t + ε)), ε = 1e-10, over
  the last axis [..., L] -> [...]. W&P's adversary term
  (`KLDivLoss(log α_base, α_adv)` in their `model/Binary_Classification.py`).
  J&W's ε keeps it finite where sparse attention has exact zeros (for softmax α the same to float precision);
  positions outside `mask` contribute exactly 0. Unlike `jw_kl`, the inputs
  are not clipped.

  Args:
    p: [..., L] an attention distribution.
    q: [..., L] another, broadcastable against `p`.
    mask: [..., L] bool, the positions that count.

  Returns:
    [...] KL(p‖q) in nats.
  """
  terms = p * (jnp.log(p + _LOG_EPS) - jnp.log(q + _LOG_EPS))
  return jnp.sum(jnp.where(mask, terms, 0.0), axis=-1)
