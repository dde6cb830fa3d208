"""`Params`, `Registrable` and `FromParams` as allennlp 0.8 behaved for the
constructor arguments J&W's configurations pass (plain values, dicts, and an
`Activation` named by a string)."""

import inspect


class Params(dict):
  """A config dict; allennlp's `Params` popped keys the same way."""


def _convert(cls, kwargs: dict) -> dict:
  """An argument annotated with a class that has `from_params` and given as
  a string or a dict is built from it, as allennlp's `from_params` did."""
  hints = inspect.signature(cls.__init__).parameters
  out = {}
  for name, value in kwargs.items():
    annotation = hints[name].annotation if name in hints else None
    if isinstance(value, (str, dict)) and hasattr(annotation, 'from_params'):
      value = annotation.from_params(Params({'type': value} if isinstance(value, str) else value))
    out[name] = value
  return out


class FromParams:
  """`cls.from_params(params)` = `cls(**params)` with annotated arguments built."""

  @classmethod
  def from_params(cls, params):
    return cls(**_convert(cls, dict(params)))


class Registrable(FromParams):
  """Subclasses registered by name on their base; `from_params` picks the
  subclass named by `params['type']`."""
  _registry: dict = {}

  @classmethod
  def register(cls, name: str):
    def add(subclass):
      Registrable._registry.setdefault(cls, {})[name] = subclass
      return subclass
    return add

  @classmethod
  def by_name(cls, name: str):
    return Registrable._registry[cls][name]

  @classmethod
  def from_params(cls, params):
    params = dict(params)
    subclass = cls.by_name(params.pop('type')) if 'type' in params else cls
    return subclass(**_convert(subclass, params))
