"""Writes the PyTorch reference fixtures for oxmera's stateful nn layers.

One small safetensors file per layer goes into
``crates/oxmera/tests/fixtures/pytorch/``; ``crates/oxmera/tests/pytorch_layers.rs``
loads each into the matching oxmera layer and checks that outputs and
gradients agree with PyTorch's.

Needs PyTorch and safetensors (not part of oxmera's build; CI reads the
committed files and never runs this). PyPI's torch wheel is CUDA-linked and
does not import without its nvidia-* dependencies, even on a CPU-only
machine, so install it normally (about 3 GB of wheels). From the repository
root::

    python3.11 -m venv /work/torchenv
    /work/torchenv/bin/pip install torch safetensors numpy
    /work/torchenv/bin/python scripts/pytorch/make_layer_fixtures.py

Every layer draws from its own fixed seed, so a rerun with the same torch
version writes the same bytes (the script checks that by writing twice and
comparing), and adding a layer leaves the other files alone.

Each file holds, all float32 unless said:

- ``state.<name>``: the module's ``state_dict()`` under PyTorch's names
  (BatchNorm's ``num_batches_tracked`` is int64, as PyTorch keeps it);
- ``input`` (and for attention ``query``/``key``/``value`` and the masks);
- ``output``: the module's output in eval mode;
- ``upstream``: a fixed random tensor of the output's shape, and
  ``grad.input`` / ``grad.state.<name>``: the gradients of
  ``(output * upstream).sum()``;
- layer-specific extras (BatchNorm's train-mode step, attention's masked
  and cross-attention cases), named in each builder below.

``__metadata__`` records the layer, its configuration and the torch
version, all as strings.
"""

import copy
import hashlib
import json
import os
import struct
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import load_file, save

OUT_DIR = os.path.join(
    os.path.dirname(os.path.abspath(__file__)),
    "..",
    "..",
    "crates",
    "oxmera",
    "tests",
    "fixtures",
    "pytorch",
)


def shrink_(x, index, factor):
    """Scales ``x[index]`` by ``factor`` in place and returns ``x``.

    A normalizing layer's ``eps`` changes its output only where the
    variance (or mean square) it is added to is of its order; at unit
    scale an eps off by a hundred times moves the output by less than the
    comparison's f32 bound. One shrunken row, group or channel per fixture
    brings its statistic down to about eps, so a wrong or ignored eps
    fails the test."""
    x[index] *= factor
    return x


def randomize_(module, names):
    """Overwrites the named parameters with N(0, 1) draws (bias, gain) so
    that an affine step that is the identity by default is exercised."""
    with torch.no_grad():
        for name in names:
            t = dict(module.named_parameters())[name]
            t.copy_(torch.randn_like(t))


def module_case(module, x, upstream=None):
    """State, input, eval-mode output and gradients of
    ``(output * upstream).sum()`` for a module taking one tensor."""
    module.eval()
    out = {f"state.{k}": v.detach().clone() for k, v in module.state_dict().items()}
    out["input"] = x.detach().clone()
    if x.is_floating_point():
        x = x.detach().clone().requires_grad_(True)
    y = module(x)
    if upstream is None:
        upstream = torch.randn_like(y)
    (y * upstream).sum().backward()
    out["output"] = y.detach().clone()
    out["upstream"] = upstream
    if x.is_floating_point():
        out["grad.input"] = x.grad.detach().clone()
    for name, p in module.named_parameters():
        out[f"grad.state.{name}"] = p.grad.detach().clone()
    return out


def linear():
    m = nn.Linear(6, 5)
    x = torch.randn(3, 4, 6)
    return module_case(m, x), {"layer": "Linear", "in_features": "6", "out_features": "5", "bias": "true"}


def embedding():
    m = nn.Embedding(11, 7)
    x = torch.randint(0, 11, (2, 5), dtype=torch.int64)
    # A repeated index makes the weight gradient accumulate (scatter-add).
    x[1, 3] = x[0, 0]
    return module_case(m, x), {"layer": "Embedding", "num_embeddings": "11", "embedding_dim": "7"}


def layer_norm():
    m = nn.LayerNorm(8)
    randomize_(m, ["weight", "bias"])
    # Row [1, 2] has a variance of about 4e-5, next to eps = 1e-5.
    x = shrink_(torch.randn(2, 3, 8) * 2.0 + 0.5, (1, 2), 3e-3)
    return module_case(m, x), {"layer": "LayerNorm", "normalized_shape": "8", "eps": repr(m.eps)}


def group_norm():
    m = nn.GroupNorm(3, 6)
    randomize_(m, ["weight", "bias"])
    # Sample 1's second group (channels 2 and 3): variance about 4e-5.
    x = shrink_(torch.randn(2, 6, 4, 3) * 2.0 + 0.5, (1, slice(2, 4)), 3e-3)
    return module_case(m, x), {
        "layer": "GroupNorm",
        "num_groups": "3",
        "num_channels": "6",
        "eps": repr(m.eps),
    }


def rms_norm(eps):
    def build():
        m = nn.RMSNorm(8, eps=eps)
        randomize_(m, ["weight"])
        # Row [1, 2]'s mean square: about 4e-7 next to the default eps
        # (f32's 1.19e-7), about 4e-5 next to 1e-5.
        factor = 3e-4 if eps is None else 3e-3
        x = shrink_(torch.randn(2, 3, 8) * 2.0 + 0.5, (1, 2), factor)
        # "none" means PyTorch's default: the dtype's machine epsilon.
        return module_case(m, x), {
            "layer": "RMSNorm",
            "normalized_shape": "8",
            "eps": "none" if eps is None else repr(eps),
        }

    return build


def batch_norm(cls, name, c, shape):
    def build():
        m = cls(c)
        randomize_(m, ["weight", "bias"])
        with torch.no_grad():
            m.running_mean.copy_(torch.randn(c) * 0.5)
            m.running_var.copy_(torch.rand(c) + 0.5)
            # Channel 0's running variance is of eps's order (eval mode).
            m.running_var[0] = 2e-5
            m.num_batches_tracked.fill_(3)
        # Channel 1's batch variance too (train mode).
        x = shrink_(torch.randn(*shape) * 1.5 + 0.25, (slice(None), 1), 3e-3)
        # One train-mode step on a fresh copy: batch statistics in the
        # output, and the running statistics it leaves (momentum 0.1,
        # unbiased batch variance).
        fresh = copy.deepcopy(m)
        fresh.train()
        with torch.no_grad():
            y_train = fresh(x)
        out = module_case(m, x)
        out["output_train"] = y_train.clone()
        out["after_train.running_mean"] = fresh.running_mean.clone()
        out["after_train.running_var"] = fresh.running_var.clone()
        out["after_train.num_batches_tracked"] = fresh.num_batches_tracked.clone()
        return out, {
            "layer": name,
            "num_features": str(c),
            "eps": repr(m.eps),
            "momentum": repr(m.momentum),
        }

    return build


def conv2d():
    m = nn.Conv2d(2, 3, 3, padding=1)
    x = torch.randn(2, 2, 5, 5)
    return module_case(m, x), {
        "layer": "Conv2d",
        "in_channels": "2",
        "out_channels": "3",
        "kernel_size": "3",
        "padding": "1",
    }


def mha():
    e, h = 16, 4
    m = nn.MultiheadAttention(e, h, batch_first=True)
    # PyTorch starts both biases at zero; random ones check where they go.
    randomize_(m, ["in_proj_bias", "out_proj.bias"])
    m.eval()
    x = torch.randn(2, 5, e)
    upstream = torch.randn(2, 5, e)

    class SelfAttention(nn.Module):
        """``forward(x)`` = ``mha(x, x, x)``: oxmera's ``Module::forward``."""

        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(x, x, x, need_weights=False)[0]

    out = module_case(SelfAttention(m), x, upstream)
    # The wrapper adds an "inner." prefix; PyTorch's own names drop it.
    out = {k.replace("state.inner.", "state.").replace("grad.state.inner.", "grad.state."): v for k, v in out.items()}
    with torch.no_grad():
        mask = nn.Transformer.generate_square_subsequent_mask(5)
        out["causal_mask"] = mask.clone()
        out["output_causal"] = m(x, x, x, attn_mask=mask, need_weights=False)[0]
        q = torch.randn(2, 3, e)
        k = torch.randn(2, 5, e)
        v = torch.randn(2, 5, e)
        out["query"], out["key"], out["value"] = q, k, v
        out["output_cross"] = m(q, k, v, need_weights=False)[0]
    return out, {"layer": "MultiheadAttention", "embed_dim": str(e), "num_heads": str(h), "batch_first": "true"}


def sdpa():
    q = torch.randn(2, 2, 4, 8)
    k = torch.randn(2, 2, 6, 8)
    v = torch.randn(2, 2, 6, 5)
    attn_mask = torch.randn(4, 6)
    bool_mask = torch.rand(4, 6) > 0.5
    # Every row attends somewhere: a row of all False is NaN in PyTorch.
    bool_mask[torch.arange(4), torch.randint(0, 6, (4,))] = True
    out = {"query": q, "key": k, "value": v, "attn_mask": attn_mask, "bool_mask": bool_mask}
    with torch.no_grad():
        out["output"] = F.scaled_dot_product_attention(q, k, v)
        out["output_masked"] = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        out["output_bool"] = F.scaled_dot_product_attention(q, k, v, attn_mask=bool_mask)
    qg, kg, vg = (t.clone().requires_grad_(True) for t in (q, k, v))
    # L = 4 < S = 6: PyTorch's causal mask is top-left aligned, so query i
    # sees keys 0..=i.
    y = F.scaled_dot_product_attention(qg, kg, vg, is_causal=True)
    upstream = torch.randn_like(y)
    (y * upstream).sum().backward()
    out["output_causal"] = y.detach()
    out["upstream"] = upstream
    out["grad.query"], out["grad.key"], out["grad.value"] = qg.grad, kg.grad, vg.grad
    return out, {"layer": "scaled_dot_product_attention", "scale": "default"}


# (file stem, seed, builder). Seeds are fixed per file, not drawn in
# sequence, so that adding a layer does not change the others' bytes.
LAYERS = [
    ("linear", 1, linear),
    ("embedding", 2, embedding),
    ("layer_norm", 3, layer_norm),
    ("group_norm", 4, group_norm),
    ("rms_norm", 5, rms_norm(None)),
    ("rms_norm_eps", 6, rms_norm(1e-5)),
    ("batch_norm1d", 7, batch_norm(nn.BatchNorm1d, "BatchNorm1d", 5, (4, 5))),
    ("batch_norm2d", 8, batch_norm(nn.BatchNorm2d, "BatchNorm2d", 3, (2, 3, 4, 4))),
    ("conv2d", 9, conv2d),
    ("mha", 10, mha),
    ("sdpa", 11, sdpa),
]


def canonical_bytes(tensors, metadata):
    """The safetensors bytes of ``tensors`` with the header's keys sorted.

    ``safetensors.torch.save`` lays the data out deterministically but
    writes ``__metadata__`` from a hash map, whose key order changes from
    run to run; re-serializing the (unchanged) header with sorted keys
    makes the file a function of its contents. The header is padded with
    spaces to a multiple of 8 bytes, as the format allows."""
    raw = save(tensors, metadata=metadata)
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + raw[8 + n :]


def write_all(out_dir):
    """Builds every layer's file in ``out_dir``; returns {file: sha256}."""
    os.makedirs(out_dir, exist_ok=True)
    digests = {}
    for stem, seed, build in LAYERS:
        torch.manual_seed(seed)
        tensors, meta = build()
        meta = dict(meta, torch=torch.__version__, seed=str(seed))
        for name, t in tensors.items():
            assert t.dtype in (torch.float32, torch.int64, torch.bool), (stem, name, t.dtype)
        tensors = {k: v.detach().contiguous() for k, v in tensors.items()}
        path = os.path.join(out_dir, f"{stem}.safetensors")
        data = canonical_bytes(tensors, meta)
        with open(path, "wb") as f:
            f.write(data)
        # The rewritten header must still read back as what was saved.
        back = load_file(path)
        assert back.keys() == tensors.keys(), stem
        assert all(torch.equal(back[k], tensors[k]) for k in tensors), stem
        digests[path] = hashlib.sha256(data).hexdigest()
    return digests


def main():
    torch.use_deterministic_algorithms(True)
    first = write_all(OUT_DIR)
    second = write_all(OUT_DIR)
    if first != second:
        sys.exit("a second run wrote different bytes: the fixtures are not reproducible")
    total = 0
    for path in sorted(first):
        size = os.path.getsize(path)
        total += size
        print(f"{os.path.relpath(path)}  {size} bytes")
    print(f"{len(first)} files, {total} bytes, torch {torch.__version__}")


if __name__ == "__main__":
    main()
