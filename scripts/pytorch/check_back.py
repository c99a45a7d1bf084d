"""Checks oxmera's layers from the PyTorch side: oxmera writes, PyTorch loads.

``crates/oxmera/tests/pytorch_layers.rs``, run with
``OXMERA_PYTORCH_BACK_DIR=DIR``, writes one safetensors file per layer into
DIR: the state dict of a layer oxmera initialized itself (``state.<name>``),
an input, oxmera's output, and ``__metadata__`` with the layer's
configuration. This script builds the matching PyTorch module from that
configuration, loads the state dict with ``strict=True`` (so every name,
shape and dtype must be PyTorch's), runs the input and checks PyTorch's
output against oxmera's, printing one line per layer. It exits non-zero if
any file fails.

Needs PyTorch and safetensors::

    OXMERA_PYTORCH_BACK_DIR=/tmp/oxmera-back \\
        cargo test -p oxmera --test pytorch_layers
    /work/torchenv/bin/python scripts/pytorch/check_back.py /tmp/oxmera-back

The tolerance is the Rust test's (see its module docs):
``|pytorch - oxmera| <= 4 * n * eps_f32 * (1 + |oxmera|)`` elementwise, with
``n`` the number of roundings on the layer's forward path, counted the same
way.
"""

import glob
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors import safe_open
from safetensors.torch import load_file

EPS = torch.finfo(torch.float32).eps
SLACK = 4.0


def compare(got, want, n):
    """(max |got - want|, worst element's share of the bound)."""
    assert got.shape == want.shape, (got.shape, want.shape)
    diff = (got.double() - want.double()).abs()
    bound = SLACK * n * EPS * (1.0 + want.double().abs())
    # An exact match is 0 of the bound even where the bound is 0.
    share = torch.where(diff == 0, torch.zeros_like(diff), diff / bound)
    return diff.max().item(), share.max().item()


def build(meta):
    """The PyTorch module a file's metadata describes (None for the bare
    attention function) and its forward path's rounding count."""
    layer = meta["layer"]
    if layer == "Linear":
        i = int(meta["in_features"])
        return nn.Linear(i, int(meta["out_features"]), bias=meta["bias"] == "true"), i + 1
    if layer == "Embedding":
        return nn.Embedding(int(meta["num_embeddings"]), int(meta["embedding_dim"])), 0
    if layer == "LayerNorm":
        d = int(meta["normalized_shape"])
        return nn.LayerNorm(d, eps=float(meta["eps"])), 2 * d + 6
    if layer == "GroupNorm":
        g, c = int(meta["num_groups"]), int(meta["num_channels"])
        # The group's size depends on the input's spatial extent; the
        # fixtures use 4 x 3.
        return nn.GroupNorm(g, c, eps=float(meta["eps"])), 2 * (c // g) * 12 + 6
    if layer == "RMSNorm":
        d = int(meta["normalized_shape"])
        eps = None if meta["eps"] == "none" else float(meta["eps"])
        return nn.RMSNorm(d, eps=eps), d + 4
    if layer in ("BatchNorm1d", "BatchNorm2d"):
        cls = nn.BatchNorm1d if layer == "BatchNorm1d" else nn.BatchNorm2d
        m = cls(int(meta["num_features"]), eps=float(meta["eps"]), momentum=float(meta["momentum"]))
        return m, 6
    if layer == "Conv2d":
        cin, k = int(meta["in_channels"]), int(meta["kernel_size"])
        m = nn.Conv2d(cin, int(meta["out_channels"]), k, padding=int(meta["padding"]))
        return m, cin * k * k + 1
    if layer == "MultiheadAttention":
        e, h = int(meta["embed_dim"]), int(meta["num_heads"])
        return nn.MultiheadAttention(e, h, batch_first=True), (e + 1) + (e // h + 1) + 7 + 5 + (e + 1)
    if layer == "scaled_dot_product_attention":
        return None, None
    raise ValueError(f"unknown layer {layer!r}")


def check_file(path):
    """Every case in one file: [(case, max |diff|, share of bound)]."""
    with safe_open(path, "pt") as f:
        meta = f.metadata()
    t = load_file(path)
    module, n = build(meta)
    results = []

    def case(name, got, want, n):
        results.append((name, *compare(got.detach(), want, n)))

    if module is None:
        q, k, v = t["query"], t["key"], t["value"]
        e, s = q.shape[-1], k.shape[-2]
        n = (e + 1) + 1 + (s + 2) + s
        case("output", F.scaled_dot_product_attention(q, k, v), t["output"], n)
        case("output_causal", F.scaled_dot_product_attention(q, k, v, is_causal=True), t["output_causal"], n)
        case("output_masked", F.scaled_dot_product_attention(q, k, v, attn_mask=t["attn_mask"]), t["output_masked"], n)
        case("output_bool", F.scaled_dot_product_attention(q, k, v, attn_mask=t["bool_mask"]), t["output_bool"], n)
        return meta, results

    state = {k[len("state.") :]: v for k, v in t.items() if k.startswith("state.")}
    before = {k[len("before_train.") :]: v for k, v in t.items() if k.startswith("before_train.")}
    if before:
        # BatchNorm: replay oxmera's train-mode step from the state before
        # it, then compare the running statistics it leaves.
        module.load_state_dict(before, strict=True)
        module.train()
        with torch.no_grad():
            y = module(t["input_train"])
        per_channel = t["input_train"].numel() // t["input_train"].shape[1]
        case("output_train", y, t["output_train"], 2 * per_channel + n)
        after = module.state_dict()
        for name in ("running_mean", "running_var"):
            case(f"state.{name}", after[name], state[name], 2 * per_channel + 4)
        assert torch.equal(after["num_batches_tracked"], state["num_batches_tracked"]), "num_batches_tracked"
    # strict=True: a missing, extra or misshapen name is an error.
    module.load_state_dict(state, strict=True)
    module.eval()
    with torch.no_grad():
        if isinstance(module, nn.MultiheadAttention):
            x = t["input"]
            case("output", module(x, x, x, need_weights=False)[0], t["output"], n)
            mask = nn.Transformer.generate_square_subsequent_mask(x.shape[1])
            y = module(x, x, x, attn_mask=mask, need_weights=False)[0]
            case("output_causal", y, t["output_causal"], n)
            y = module(t["query"], t["key"], t["value"], need_weights=False)[0]
            case("output_cross", y, t["output_cross"], n)
        else:
            case("output", module(t["input"]), t["output"], n)
    return meta, results


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} DIR")
    paths = sorted(glob.glob(os.path.join(sys.argv[1], "*.safetensors")))
    if not paths:
        sys.exit(f"no .safetensors files in {sys.argv[1]}")
    print(f"torch {torch.__version__}")
    failed = 0
    for path in paths:
        name = os.path.basename(path)
        try:
            meta, results = check_file(path)
        except Exception as e:  # a strict-load or shape failure: report and go on
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}")
            continue
        worst = max(r[2] for r in results)
        max_abs = max(r[1] for r in results)
        ok = worst <= 1.0
        failed += not ok
        cases = ", ".join(f"{c} {d:.1e}" for c, d, _ in results)
        print(
            f"{'ok  ' if ok else 'FAIL'} {name:26} {meta['layer']:28} max |diff| {max_abs:.2e} "
            f"({worst:.3f} of bound; {cases})"
        )
    if failed:
        sys.exit(f"{failed} of {len(paths)} files failed")
    print(f"all {len(paths)} files agree")


if __name__ == "__main__":
    main()
