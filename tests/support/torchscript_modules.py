#!/usr/bin/python3
"""Test helper: writes small TorchScript modules, good and bad, for the backend's tests.

Usage: torchscript_modules.py NAME OUT.pt  (NAME: see MODULES)
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyMlp(nn.Module):  # the system tests' data: 8 features, 3 classes
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(8, 8)
        self.out = nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(F.relu(self.hidden(x.flatten(1))))


class NoParameters(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.flatten(1)[:, :3]


class WrongOutput(nn.Module):  # [batch], not [batch, classes]
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x.flatten(1) * self.weight).sum(1)


class TupleOutput(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(8, 3)

    def forward(self, x: torch.Tensor):
        y = self.out(x.flatten(1))
        return y, y


class IntegerInput(nn.Module):  # an embedding wants integer indices, fastk gives float
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(16, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.embedding(x.flatten(1)).sum(1)


class BatchNormBuffers(nn.Module):  # running statistics: buffers, kept by each peer
    def __init__(self):
        super().__init__()
        self.norm = nn.BatchNorm1d(8)
        self.out = nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.norm(x.flatten(1)))


class TiedWeights(nn.Module):  # one tensor, two names
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(8, 8)
        self.second = nn.Linear(8, 8)
        self.second.weight = self.first.weight
        self.out = nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.second(self.first(x.flatten(1))))


class FrozenParameter(TinyMlp):
    def __init__(self):
        super().__init__()
        self.hidden.weight.requires_grad_(False)


class AuxiliaryInTraining(nn.Module):  # logits plus an auxiliary head in training only
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.out(x.flatten(1))
        if self.training:
            return torch.cat([y, y], 1)
        return y


MODULES = {
    "tied_weights": TiedWeights,
    "frozen_parameter": FrozenParameter,
    "auxiliary_in_training": AuxiliaryInTraining,
    "tiny_mlp": TinyMlp,
    "no_parameters": NoParameters,
    "wrong_output": WrongOutput,
    "tuple_output": TupleOutput,
    "integer_input": IntegerInput,
    "batchnorm_buffers": BatchNormBuffers,
    "float64": lambda: TinyMlp().double(),
}

if __name__ == "__main__":
    torch.manual_seed(1)
    torch.jit.script(MODULES[sys.argv[1]]()).save(sys.argv[2])
