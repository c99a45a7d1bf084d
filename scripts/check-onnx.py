#!/usr/bin/env python3
"""Runs an ONNX file written by `oxmera export ... --sample N` in ONNX
Runtime and compares its outputs with oxmera's (the `.npy` files the
export wrote beside it).

usage: check-onnx.py MODEL.onnx [MODEL.onnx ...]

Tolerance: the two runtimes sum the same products in different orders, in
f32; for the logits of these networks (a few hundred to a few thousand
terms of magnitude below 1 per output) that differs by well under 1e-4
absolute. The check allows 1e-4 absolute plus 1e-4 relative, and requires
the same predicted class for every sample.
"""
import sys

import numpy as np
import onnxruntime as ort


def check(path):
    inputs = np.load(path + ".inputs.npy")
    want = np.load(path + ".logits.npy")
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    (got,) = session.run(["logits"], {"input": inputs})
    diff = np.abs(got - want)
    worst = float(diff.max())
    assert np.allclose(got, want, atol=1e-4, rtol=1e-4), f"{path}: max |diff| {worst}"
    assert (got.argmax(1) == want.argmax(1)).all(), f"{path}: a predicted class differs"
    print(f"{path}: ONNX Runtime {ort.__version__} matches oxmera on {len(inputs)} samples "
          f"(max |diff| {worst:.2e})")


if __name__ == "__main__":
    for p in sys.argv[1:]:
        check(p)
