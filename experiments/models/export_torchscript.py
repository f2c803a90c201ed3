#!/usr/bin/python3
"""Writes a model for fastk's TorchScript backend ([model] kind = "torchscript").

Usage: export_torchscript.py NAME OUT.pt [--seed N] [--classes K]

NAME is one of mlp (784-128-10, the quickstart's), lenet5, cifar_cnn (the hand-written
models' architectures, docs/learning.md §6) or resnet20 (the CIFAR-10 ResNet of He et al. 2016,
0.27 M parameters). The initial parameters come from torch.manual_seed(N): every peer
starts from the values saved in the file.

fastk calls forward() with a float32 tensor [batch, channels, height, width] and trains
cross-entropy on the [batch, classes] logits it returns. Your own nn.Module goes the same way:
    torch.jit.script(MyNet()).save("mynet.pt")
Batch norm: use track_running_stats=False (as resnet20 here does): fastk refuses modules
with running statistics, which it would neither average nor evaluate with
(docs/learning.md §6).

Needs Debian's python3-torch (scripts/install-deps.sh installs it); run it with
/usr/bin/python3 if another python3 comes first in PATH.
"""
import argparse
import sys

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    sys.exit("export_torchscript.py: no module 'torch' in " + sys.executable +
             ": install Debian's python3-torch (scripts/install-deps.sh) and run it with "
             "/usr/bin/python3")


class Mlp(nn.Module):
    def __init__(self, classes: int):
        super().__init__()
        self.hidden = nn.Linear(784, 128)
        self.out = nn.Linear(128, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(F.relu(self.hidden(x.flatten(1))))


class ConvNet(nn.Module):
    """Two blocks of conv + ReLU + 2x2 max pool, then dense layers: LeNet-5 (28x28x1) and
    the small CIFAR CNN (32x32x3) of fastk's hand-written models."""

    def __init__(self, channels, convs, dense, classes: int):
        super().__init__()
        layers = []
        for (inputs, filters, kernel, padding) in convs:
            layers += [nn.Conv2d(inputs, filters, kernel, padding=padding), nn.ReLU(),
                       nn.MaxPool2d(2)]
        self.features = nn.Sequential(*layers)
        stack = []
        for inputs, width in zip(dense[:-1], dense[1:]):
            stack += [nn.Linear(inputs, width), nn.ReLU()]
        self.dense = nn.Sequential(*stack, nn.Linear(dense[-1], classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dense(self.features(x).flatten(1))


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with batch norm; the shortcut is the identity, subsampled and
    padded with zero channels when the shape changes (He et al.'s option A: no parameters)."""

    def __init__(self, inputs: int, planes: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(inputs, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes, track_running_stats=False)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes, track_running_stats=False)
        self.pad = planes - inputs
        self.stride = stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        shortcut = x
        if self.stride != 1 or self.pad != 0:
            shortcut = F.pad(x[:, :, ::2, ::2], (0, 0, 0, 0, self.pad // 2, self.pad - self.pad // 2))
        return F.relu(out + shortcut)


class ResNet20(nn.Module):
    def __init__(self, classes: int, blocks: int = 3):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(16, track_running_stats=False)
        stages = []
        inputs = 16
        for planes, stride in ((16, 1), (32, 2), (64, 2)):
            for b in range(blocks):
                stages.append(BasicBlock(inputs, planes, stride if b == 0 else 1))
                inputs = planes
        self.stages = nn.Sequential(*stages)
        self.out = nn.Linear(64, classes)
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.kaiming_normal_(m.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.stages(F.relu(self.bn(self.conv(x))))
        return self.out(F.adaptive_avg_pool2d(out, 1).flatten(1))


MODELS = {
    "mlp": lambda k: Mlp(k),
    "lenet5": lambda k: ConvNet(1, [(1, 6, 5, 2), (6, 16, 5, 0)], [400, 120, 84], k),
    "cifar_cnn": lambda k: ConvNet(3, [(3, 32, 3, 1), (32, 64, 3, 1)], [4096, 128], k),
    "resnet20": lambda k: ResNet20(k),
}


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Writes a TorchScript model for fastk ([model] kind = \"torchscript\").",
        epilog="Your own module: torch.jit.script(MyNet()).save(\"mynet.pt\")")
    parser.add_argument("name", choices=sorted(MODELS), help="which model")
    parser.add_argument("out", help="the .pt file to write")
    parser.add_argument("--seed", type=int, default=1, help="torch.manual_seed of the weights")
    parser.add_argument("--classes", type=int, default=10, help="outputs (default 10)")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    module = torch.jit.script(MODELS[args.name](args.classes))
    module.save(args.out)
    count = sum(p.numel() for p in module.parameters())
    print(f"wrote {args.name} ({count:,} parameters, seed {args.seed}) to {args.out}")


if __name__ == "__main__":
    main()
