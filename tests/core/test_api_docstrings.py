"""The public API is documented as optax documents its own: every function
and class that `attn_jax`, `attn_jax.analysis` and the model interface
(`interface`, `adapters`, `heads`, `stock`, `forward_only`, `contract`) export has Args/Returns (functions) or
Attributes/Args (classes) sections."""

import importlib
import inspect

import attn_jax as aj

MODULES = ('attn_jax', 'attn_jax.analysis', 'attn_jax.models.interface', 'attn_jax.models.adapters',
           'attn_jax.models.heads', 'attn_jax.models.stock', 'attn_jax.models.forward_only',
           'attn_jax.analysis.contract')


def undocumented(module) -> list[str]:
  """The exported functions and classes of `module` without their sections."""
  names = getattr(module, '__all__', None) or [n for n in dir(module) if not n.startswith('_')]
  missing = []
  for name in names:
    obj = getattr(module, name)
    if not (inspect.isfunction(obj) or inspect.isclass(obj)) or not obj.__module__.startswith('attn_jax'):
      continue
    if obj.__module__ == 'attn_jax.core.errors':  # the error classes: one line each is their contract
      continue
    doc = inspect.getdoc(obj) or ''
    sections = ('Attributes:', 'Args:') if inspect.isclass(obj) else ('Args:',)
    ok = any(s in doc for s in sections) and (inspect.isclass(obj) or 'Returns:' in doc or 'Yields:' in doc)
    if not ok:
      missing.append(f'{module.__name__}.{name}')
  return missing


def test_the_check_finds_a_function_without_sections():
  probe = type(aj)('attn_jax_probe')
  def bare(x):
    """Prose only."""
    return x
  bare.__module__ = 'attn_jax.probe'
  probe.__all__, probe.bare = ['bare'], bare
  assert undocumented(probe) == ['attn_jax_probe.bare']


def test_every_public_function_and_class_has_its_sections():
  assert [m for name in MODULES for m in undocumented(importlib.import_module(name))] == []
