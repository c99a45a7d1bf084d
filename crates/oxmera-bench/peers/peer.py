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
OXMERA_BENCH_THREADS for torch).
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


def t_conv(n, c_in, h, w, c_out, k):
    g = torch.Generator().manual_seed(7)
    x = torch.randn(n, c_in, h, w, generator=g)
    wt = torch.randn(c_out, c_in, k, k, generator=g)
    b = torch.randn(c_out, generator=g)
    pad = k // 2
    return lambda: torch.nn.functional.conv2d(x, wt, b, padding=pad)


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
    params = list(model.parameters())
    lr = 0.01

    def run():
        loss = torch.nn.functional.cross_entropy(model(x), y)
        for p in params:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= lr * p.grad

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
