"""The Python side of `oxmera-bench`: NumPy and PyTorch run on request.

The bench starts this script once and keeps it running, so that each peer
measurement can be interleaved with oxmera's own runs. Protocol, one line
each way:

    first line out:   hello numpy=<version or -> torch=<version or ->
    request:          <lib> <bench> <int args...>     (lib: numpy | torch)
    reply:            ok <seconds for one run>  |  skip <reason>

The first request for a (lib, bench, args) builds its inputs (not timed);
every request then times one run with perf_counter. Inputs are seeded, so
every run computes on the same data. Thread counts come from the
environment the bench sets (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and
OXMERA_BENCH_THREADS for torch); the CNN epoch reads its samples from
the files OXMERA_BENCH_DIGITS names (see `src/cnn.rs`).
"""

import os
import sys
import time

try:
    import numpy as np
except ImportError:  # the bench prints that NumPy is skipped
    np = None

try:
    import torch
except ImportError:
    torch = None

if torch is not None:
    torch.set_num_threads(int(os.environ.get("OXMERA_BENCH_THREADS", "1")))


def np_matmul(n):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    return lambda: a @ b


def np_add(n):
    rng = np.random.default_rng(2)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    return lambda: a + b


def np_fused(n):
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal(n, dtype=np.float32) for _ in range(3))
    # NumPy has no fusion: this is its idiomatic form, three passes.
    return lambda: np.maximum(a * b + c, np.float32(0))


def np_sum(n):
    a = np.random.default_rng(4).standard_normal(n, dtype=np.float32)
    return lambda: a.sum()


def np_softmax(rows, cols):
    x = np.random.default_rng(5).standard_normal((rows, cols), dtype=np.float32)

    def run():
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    return run


def np_layer_norm(rows, cols):
    x = np.random.default_rng(8).standard_normal((rows, cols), dtype=np.float32)

    def run():
        mean = x.mean(axis=1, keepdims=True)
        var = x.var(axis=1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-5)

    return run


def np_mlp(batch, d_in, hidden, classes):
    """One SGD step of a ReLU MLP, backward written out by hand."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((batch, d_in), dtype=np.float32)
    y = rng.integers(0, classes, batch)
    sizes = [d_in, hidden, hidden, classes]
    ws = [
        (rng.standard_normal((i, o), dtype=np.float32) * np.float32((2.0 / i) ** 0.5))
        for i, o in zip(sizes, sizes[1:])
    ]
    bs = [np.zeros(o, dtype=np.float32) for o in sizes[1:]]
    lr = np.float32(0.01)

    def run():
        h1 = np.maximum(x @ ws[0] + bs[0], 0)
        h2 = np.maximum(h1 @ ws[1] + bs[1], 0)
        z = h2 @ ws[2] + bs[2]
        z = z - z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        g = p
        g[np.arange(batch), y] -= 1
        g /= batch
        grads = []
        grads.append((h2.T @ g, g.sum(0)))
        g = (g @ ws[2].T) * (h2 > 0)
        grads.append((h1.T @ g, g.sum(0)))
        g = (g @ ws[1].T) * (h1 > 0)
        grads.append((x.T @ g, g.sum(0)))
        for (gw, gb), w, b in zip(reversed(grads), ws, bs):
            w -= lr * gw
            b -= lr * gb

    return run


def t_matmul(n):
    g = torch.Generator().manual_seed(1)
    a = torch.randn(n, n, generator=g)
    b = torch.randn(n, n, generator=g)
    return lambda: a @ b


def t_add(n):
    g = torch.Generator().manual_seed(2)
    a, b = torch.randn(n, generator=g), torch.randn(n, generator=g)
    return lambda: a + b


def t_fused(n):
    g = torch.Generator().manual_seed(3)
    a, b, c = (torch.randn(n, generator=g) for _ in range(3))
    return lambda: torch.relu(a * b + c)


def t_sum(n):
    a = torch.randn(n, generator=torch.Generator().manual_seed(4))
    return lambda: a.sum()


def t_softmax(rows, cols):
    x = torch.randn(rows, cols, generator=torch.Generator().manual_seed(5))
    return lambda: torch.softmax(x, dim=1)


def t_layer_norm(rows, cols):
    x = torch.randn(rows, cols, generator=torch.Generator().manual_seed(8))
    return lambda: torch.nn.functional.layer_norm(x, (cols,), eps=1e-5)


def t_conv(n, c_in, h, w, c_out, k, stride, pad):
    g = torch.Generator().manual_seed(7)
    x = torch.randn(n, c_in, h, w, generator=g)
    wt = torch.randn(c_out, c_in, k, k, generator=g)
    b = torch.randn(c_out, generator=g)
    return lambda: torch.nn.functional.conv2d(x, wt, b, stride=stride, padding=pad)


def t_conv_bwd(n, c_in, h, w, c_out, k, stride, pad):
    """The gradients of a convolution with respect to its input and its
    weights, given the output's: the one call autograd makes for a conv
    layer (bias gradient not asked for; it is a sum)."""
    g = torch.Generator().manual_seed(9)
    x = torch.randn(n, c_in, h, w, generator=g)
    wt = torch.randn(c_out, c_in, k, k, generator=g)
    h_out = (h + 2 * pad - k) // stride + 1
    w_out = (w + 2 * pad - k) // stride + 1
    gy = torch.randn(n, c_out, h_out, w_out, generator=g)
    conv_backward = torch.ops.aten.convolution_backward

    def run():
        return conv_backward(
            gy, x, wt, None, [stride, stride], [pad, pad], [1, 1],
            False, [0, 0], 1, [True, True, False],
        )

    return run


def t_cnn_epoch(batch, c, h, w, classes, n):
    """One epoch of `oxmera train --model cnn` (crates/oxmera-nn/src/models/
    cnn.rs: two 3x3 same convolutions of 16 and 32 channels, each with
    ReLU and 2x2 max pooling, then 64 hidden units) on the digits' training
    part the bench wrote to OXMERA_BENCH_DIGITS.{f32,i64}: batches in
    order, SGD at 0.1 with momentum 0.9, cross-entropy, the loss read back
    every step as the CLI's loop does."""
    stem = os.environ["OXMERA_BENCH_DIGITS"]
    with open(stem + ".f32", "rb") as f:
        x = torch.frombuffer(bytearray(f.read()), dtype=torch.float32)
    with open(stem + ".i64", "rb") as f:
        y = torch.frombuffer(bytearray(f.read()), dtype=torch.int64)
    x = x.reshape(n, c, h, w)
    assert y.shape == (n,), f"{stem}.i64 holds {y.shape[0]} labels, expected {n}"
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(
        nn.Conv2d(c, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * (h // 4) * (w // 4), 64),
        nn.ReLU(),
        nn.Linear(64, classes),
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def run():
        total = 0.0
        for start in range(0, n, batch):
            xb, yb = x[start : start + batch], y[start : start + batch]
            loss = torch.nn.functional.cross_entropy(model(xb), yb)
            total += loss.item()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return total

    return run


def t_mlp(batch, d_in, hidden, classes):
    g = torch.Generator().manual_seed(6)
    x = torch.randn(batch, d_in, generator=g)
    y = torch.randint(0, classes, (batch,), generator=g)
    model = torch.nn.Sequential(
        torch.nn.Linear(d_in, hidden),
        torch.nn.ReLU(),
        torch.nn.Linear(hidden, hidden),
        torch.nn.ReLU(),
        torch.nn.Linear(hidden, classes),
    )
    # The library's own optimizer, as oxmera's step uses its `Sgd`.
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def run():
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    return run


BENCHES = {
    "numpy": {
        "matmul": np_matmul,
        "add": np_add,
        "fused": np_fused,
        "sum": np_sum,
        "softmax": np_softmax,
        "layer_norm": np_layer_norm,
        "mlp": np_mlp,
    },
    "torch": {
        "matmul": t_matmul,
        "add": t_add,
        "fused": t_fused,
        "sum": t_sum,
        "softmax": t_softmax,
        "layer_norm": t_layer_norm,
        "conv": t_conv,
        "conv_bwd": t_conv_bwd,
        "cnn_epoch": t_cnn_epoch,
        "mlp": t_mlp,
    },
}


def main():
    version = lambda m: m.__version__ if m is not None else "-"
    print(f"hello numpy={version(np)} torch={version(torch)}", flush=True)
    prepared = {}
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        lib, bench, args = words[0], words[1], tuple(int(w) for w in words[2:])
        installed = {"numpy": np, "torch": torch}.get(lib)
        make = BENCHES.get(lib, {}).get(bench)
        if installed is None or make is None:
            print(f"skip {lib} has no {bench} here", flush=True)
            continue
        key = (lib, bench, args)
        if key not in prepared:
            prepared[key] = make(*args)
            prepared[key]()  # warm-up: first-touch pages, thread pools
        run = prepared[key]
        start = time.perf_counter()
        run()
        print(f"ok {time.perf_counter() - start!r}", flush=True)


if __name__ == "__main__":
    main()
