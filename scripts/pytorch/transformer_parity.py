"""Trains oxmera's character-level transformer and its PyTorch twin side by
side on the same CPU and compares them.

Both frameworks start from the same weights (one safetensors file, written
here), read the same batches in the same order (a second file), train with
the same settings (AdamW lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight
decay 0.01 on every parameter, gradients clipped to norm 1, no dropout,
no learning-rate schedule) and evaluate the same validation windows. The
script prints, for each evaluation point, both validation losses and their
relative difference, then the mean step time of each (the first
``WARMUP`` steps left out) and their ratio. It exits 1 if any evaluation
differs by more than 2% relative.

The model is ``CharTransformer`` with ``TransformerConfig::new(vocab)``
(crates/oxmera-nn/src/models/transformer.rs): context 64, width 128,
4 heads, 4 layers, pre-norm blocks, exact (erf) GELU. The PyTorch module
below has the same attribute names, so the two state dicts share names.
The text is the gzip file oxmera embeds
(crates/oxmera-data/data/plays.txt.gz), split as
``oxmera::data::TextSplit::new(ids, 0.1)`` splits it (the last 10%
validates).

The oxmera half is the example ``crates/oxmera/examples/transformer_parity.rs``,
run as ``target/release/examples/transformer_parity``; if that binary is
missing, the script builds it with ``cargo build --release -p oxmera
--example transformer_parity`` first (and says so). It is not rebuilt when
present: rebuild it yourself after changing oxmera.

Not part of CI. Needs torch, safetensors and numpy. From the repository
root::

    /work/torchenv/bin/python scripts/pytorch/transformer_parity.py \\
        [--steps 300] [--eval-every 50] [--threads 2] [--seed 0] [--out DIR]

``DIR`` (default ``target/transformer_parity``) receives ``init.safetensors``,
``batches.safetensors``, ``pytorch.json``, ``oxmera.json`` and
``parity.md`` (the table, in markdown). Timings are only meaningful on an
otherwise idle machine.
"""

import argparse
import gzip
import json
import math
import os
import platform
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import save_file

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TEXT = os.path.join(REPO, "crates", "oxmera-data", "data", "plays.txt.gz")
BINARY = os.path.join(REPO, "target", "release", "examples", "transformer_parity")

# TransformerConfig::new(vocab) and the shakespeare example's batch size.
CONTEXT, WIDTH, HEADS, LAYERS, BATCH = 64, 128, 4, 4, 32
VALID_FRACTION = 0.1
VALID_WINDOWS = 256
EVAL_BATCH = 64
INIT_STD = 0.02
TOLERANCE = 0.02  # relative
WARMUP = 5  # steps left out of the mean step time


class PositionalEmbedding(nn.Module):
    """oxmera's LearnedPositionalEmbedding: adds row t of ``weight`` to
    position t."""

    def __init__(self, max_len, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(max_len, dim))

    def forward(self, x):
        return x + self.weight[: x.shape[-2]]


class Block(nn.Module):
    """One pre-norm block: x + attn(ln1(x)), then x + mlp(ln2(x))."""

    def __init__(self, width, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(width)
        self.mlp_in = nn.Linear(width, 4 * width)
        self.mlp_out = nn.Linear(4 * width, width)

    def forward(self, x, mask):
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, attn_mask=mask, need_weights=False, is_causal=True)
        x = x + a
        return x + self.mlp_out(F.gelu(self.mlp_in(self.ln2(x))))


class CharTransformer(nn.Module):
    """The twin of oxmera's CharTransformer, attribute for attribute."""

    def __init__(self, vocab):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab, WIDTH)
        self.pos_emb = PositionalEmbedding(CONTEXT, WIDTH)
        self.blocks = nn.ModuleList(Block(WIDTH, HEADS) for _ in range(LAYERS))
        self.ln_f = nn.LayerNorm(WIDTH)
        self.head = nn.Linear(WIDTH, vocab)

    def forward(self, ids):
        t = ids.shape[1]
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        h = self.pos_emb(self.tok_emb(ids))
        for block in self.blocks:
            h = block(h, mask)
        return self.head(self.ln_f(h))


def gpt2_init(model):
    """GPT-2's scheme, as CharTransformer::new draws it: weights N(0, 0.02),
    the two projections that write into the residual stream N(0, 0.02 /
    sqrt(2 layers)), biases zero, LayerNorm ones and zeros."""
    residual_std = INIT_STD / math.sqrt(2 * LAYERS)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("out_proj.weight") or name.endswith("mlp_out.weight"):
                p.normal_(0.0, residual_std)
            elif ".ln" in name or name.startswith("ln_f."):
                p.fill_(1.0 if name.endswith("weight") else 0.0)
            elif name.endswith("bias"):
                p.zero_()
            else:
                p.normal_(0.0, INIT_STD)


def load_text():
    """The ids of the embedded plays and the oxmera split (train, valid)."""
    with gzip.open(TEXT, "rt", encoding="ascii") as f:
        text = f.read()
    vocab = sorted(set(text))
    index = {c: i for i, c in enumerate(vocab)}
    ids = np.array([index[c] for c in text], dtype=np.int64)
    # TextSplit::new: the cut at round(len * (1 - fraction)), Rust's round
    # (halves away from zero).
    cut = int(math.floor(len(ids) * (1.0 - VALID_FRACTION) + 0.5))
    return len(vocab), ids[:cut], ids[cut:]


def windows(ids, starts):
    """Inputs and next-character targets of the windows at ``starts``."""
    offsets = np.asarray(starts)[:, None] + np.arange(CONTEXT + 1)[None, :]
    w = torch.from_numpy(ids[offsets])
    return w[:, :-1], w[:, 1:]


def loss_of(model, x, y):
    logits = model(x)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def validate(model, valid, starts):
    """Mean loss over the validation windows, each weighing the same."""
    model.eval()
    total = 0.0
    with torch.no_grad():
        for i in range(0, len(starts), EVAL_BATCH):
            chunk = starts[i : i + EVAL_BATCH]
            x, y = windows(valid, chunk)
            total += loss_of(model, x, y).item() * len(chunk)
    model.train()
    return total / len(starts)


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def train_pytorch(model, train, valid, train_starts, valid_starts, eval_every):
    opt = torch.optim.AdamW(
        model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01
    )
    evals = [[0, validate(model, valid, valid_starts)]]
    step_seconds = []
    steps = len(train_starts)
    for step, starts in enumerate(train_starts):
        started = time.perf_counter()
        x, y = windows(train, starts)
        loss_of(model, x, y).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()
        step_seconds.append(time.perf_counter() - started)
        done = step + 1
        if done % eval_every == 0 or done == steps:
            evals.append([done, validate(model, valid, valid_starts)])
            print(f"  pytorch step {done:>5}  valid {evals[-1][1]:.4f}", flush=True)
    return {
        "evals": evals,
        "step_seconds": step_seconds,
        "threads": torch.get_num_threads(),
        "cpu": cpu_name(),
    }


def run_oxmera(init, batches, out, threads):
    if not os.path.exists(BINARY):
        print("oxmera's example is not built: building it (cargo build --release "
              "-p oxmera --example transformer_parity)", flush=True)
        subprocess.run(
            ["cargo", "build", "--release", "-p", "oxmera", "--example", "transformer_parity"],
            cwd=REPO,
            check=True,
        )
    cmd = [BINARY, "--init", init, "--batches", batches, "--out", out, "--threads", str(threads)]
    print("  " + " ".join(cmd), flush=True)
    subprocess.run(cmd, cwd=REPO, check=True)
    with open(out) as f:
        return json.load(f)


def mean_step(seconds):
    timed = seconds[WARMUP:] if len(seconds) > WARMUP else seconds
    return sum(timed) / len(timed)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--eval-every", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=os.path.join(REPO, "target", "transformer_parity"))
    args = parser.parse_args()
    if args.steps < 1 or args.eval_every < 1 or args.threads < 1:
        parser.error("--steps, --eval-every and --threads must be at least 1")
    os.makedirs(args.out, exist_ok=True)
    out = os.path.abspath(args.out)
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(args.threads)

    vocab, train, valid = load_text()

    # The initial weights, shared by both frameworks.
    torch.manual_seed(args.seed)
    model = CharTransformer(vocab)
    gpt2_init(model)
    init = os.path.join(out, "init.safetensors")
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, init)

    # The batch order: training windows drawn uniformly, validation windows
    # spread evenly (as TextSplit::valid_batch spreads them).
    rng = np.random.default_rng(args.seed)
    train_starts = rng.integers(0, len(train) - CONTEXT, size=(args.steps, BATCH), dtype=np.int64)
    span = len(valid) - CONTEXT
    count = min(VALID_WINDOWS, span)
    valid_starts = np.arange(count, dtype=np.int64) * (span // count)
    batches = os.path.join(out, "batches.safetensors")
    save_file(
        {"train_starts": torch.from_numpy(train_starts), "valid_starts": torch.from_numpy(valid_starts)},
        batches,
        metadata={"eval_every": str(args.eval_every), "steps": str(args.steps)},
    )

    print(f"PyTorch {torch.__version__}: {args.steps} steps, {args.threads} threads", flush=True)
    theirs = train_pytorch(model, train, valid, train_starts, valid_starts, args.eval_every)
    with open(os.path.join(out, "pytorch.json"), "w") as f:
        json.dump(theirs, f)
    print("oxmera:", flush=True)
    ours = run_oxmera(init, batches, os.path.join(out, "oxmera.json"), args.threads)

    rows, worst = [], 0.0
    for (step, t), (ostep, o) in zip(theirs["evals"], ours["evals"]):
        if step != ostep:
            sys.exit(f"evaluation steps differ: PyTorch {step}, oxmera {ostep}")
        rel = abs(o - t) / abs(t)
        worst = max(worst, rel)
        rows.append(f"| {step} | {t:.6f} | {o:.6f} | {rel:.1e} |")
    if len(theirs["evals"]) != len(ours["evals"]):
        sys.exit(f"{len(theirs['evals'])} PyTorch evaluations, {len(ours['evals'])} oxmera")
    pt, ox = mean_step(theirs["step_seconds"]), mean_step(ours["step_seconds"])
    table = "\n".join(
        [
            "| step | PyTorch val loss | oxmera val loss | relative difference |",
            "|---:|---:|---:|---:|",
            *rows,
        ]
    )
    timing = "\n".join(
        [
            f"Mean step time (steps after the first {WARMUP}, batch {BATCH}, "
            f"{args.threads} threads, {theirs['cpu']}):",
            "",
            f"- PyTorch {torch.__version__}: {1000 * pt:.2f} ms",
            f"- oxmera: {1000 * ox:.2f} ms",
            f"- oxmera / PyTorch: {ox / pt:.2f}",
        ]
    )
    verdict = (
        f"Largest relative difference {worst:.1e} "
        f"({'within' if worst <= TOLERANCE else 'OVER'} the {100 * TOLERANCE:.0f}% tolerance)."
    )
    report = f"{table}\n\n{timing}\n\n{verdict}\n"
    print()
    print(report)
    with open(os.path.join(out, "parity.md"), "w") as f:
        f.write(f"# oxmera vs PyTorch: CharTransformer, {args.steps} steps, seed {args.seed}\n\n")
        f.write(report)
    sys.exit(0 if worst <= TOLERANCE else 1)


if __name__ == "__main__":
    main()
