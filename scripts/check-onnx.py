#!/usr/bin/env python3
"""Runs an ONNX file written by `oxmera export ... --sample N` in ONNX
Runtime and compares its outputs with oxmera's (the `.npy` files the
export wrote beside it).

usage: check-onnx.py MODEL.onnx [MODEL.onnx ...]

The classifiers map samples to logits [N, classes]; the transformer maps
token ids [N, tokens] to next-character logits [N, tokens, vocab] (every
position is checked).

Tolerance: the two runtimes sum the same products in different orders, in
f32; for the logits of these networks (a few hundred to a few thousand
terms of magnitude below 1 per output, through at most a dozen layers)
that differs by well under 1e-4 absolute. The check allows 1e-4 absolute
plus 1e-4 relative, and the same predicted class (or next character)
wherever that tolerance cannot swap oxmera's top two logits.
"""
import sys

import numpy as np
import onnxruntime as ort


def check(path):
    inputs = np.load(path + ".inputs.npy")
    want = np.load(path + ".logits.npy")
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    (got,) = session.run(["logits"], {"input": inputs})
    assert got.shape == want.shape, f"{path}: shape {got.shape}, oxmera's {want.shape}"
    diff = np.abs(got - want)
    worst = float(diff.max())
    assert np.allclose(got, want, atol=1e-4, rtol=1e-4), f"{path}: max |diff| {worst}"
    # The same prediction wherever the tolerance cannot swap oxmera's top
    # two: each may move by 1e-4 + 1e-4·|value|, so a pair closer than the
    # sum of the two moves may change order within it.
    top2 = np.sort(want, axis=-1)[..., -2:]
    slack = 2e-4 + 1e-4 * (np.abs(top2[..., 0]) + np.abs(top2[..., 1]))
    clear = (top2[..., 1] - top2[..., 0]) > slack
    same = got.argmax(-1) == want.argmax(-1)
    assert same[clear].all(), f"{path}: a clearly predicted class differs"
    if inputs.dtype == np.int64:
        # Causal attention: a prefix's logits are the whole window's first
        # positions, so a shorter input (the graph cuts its position table
        # and mask to it) must give them too.
        t = inputs.shape[1] // 2 + 1
        (prefix,) = session.run(["logits"], {"input": inputs[:, :t]})
        assert np.allclose(prefix, want[:, :t], atol=1e-4, rtol=1e-4), \
            f"{path}: the first {t} tokens differ: max |diff| {np.abs(prefix - want[:, :t]).max()}"
    print(f"{path}: ONNX Runtime {ort.__version__} matches oxmera on {len(inputs)} samples "
          f"(max |diff| {worst:.2e})")


if __name__ == "__main__":
    for p in sys.argv[1:]:
        check(p)
