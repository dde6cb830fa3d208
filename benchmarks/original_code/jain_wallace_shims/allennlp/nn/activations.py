"""allennlp's `Activation` registry for the names J&W's configs use: 'relu'
(CNN), 'tanh' (Average) and 'linear' (the Average encoder's default)."""

import torch

from allennlp.common import Registrable


class Activation(torch.nn.Module, Registrable):
  """`Activation.by_name(name)` is a class; calling it gives the module."""


class _Identity(torch.nn.Module):
  def forward(self, x):
    return x


for _name, _module in (('relu', torch.nn.ReLU), ('tanh', torch.nn.Tanh), ('linear', _Identity)):
  Activation.register(_name)(_module)
