"""The simulator benchmark's kernels in numba's CUDA simulator.

Prints elements per second for `add` and `reduce_sum`, written to mirror the
oxmera library kernels line by line. numba's simulator runs every thread of a
block as a Python thread, so the sizes are smaller than oxmera's 2^20; the
per-element work (one element per thread for `add`, 16 per thread for
`reduce_sum`) is the same, so elements per second compare. numba's simulator
lacks warp shuffles, so its reduction ends in shared memory instead.
"""

import os
import sys
import time

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import numpy as np  # noqa: E402
from numba import cuda, float32  # noqa: E402


@cuda.jit
def add(a, b, out, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        out[i] = a[i] + b[i]


@cuda.jit
def reduce_sum(x, out, n):
    s = cuda.shared.array(1024, float32)
    tid = cuda.threadIdx.x
    acc = float32(0.0)
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    stride = cuda.gridDim.x * cuda.blockDim.x
    while i < n:
        acc += x[i]
        i += stride
    s[tid] = acc
    cuda.syncthreads()
    half = cuda.blockDim.x // 2
    # numba's simulator has no warp shuffles, so the last 32 partial sums are
    # also folded through shared memory rather than with shfl_down_sync.
    while half >= 1:
        if tid < half:
            s[tid] += s[tid + half]
        cuda.syncthreads()
        half //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = s[0]


def timed(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def main():
    scale = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    rng = np.random.default_rng(1)
    n = (1 << 14) * scale
    a = rng.uniform(-1, 1, n).astype(np.float32)
    b = rng.uniform(-1, 1, n).astype(np.float32)
    out = np.zeros(n, np.float32)
    t = timed(lambda: add[n // 256, 256](a, b, out, n))
    assert np.allclose(out, a + b)
    print(f"numba-cudasim add {n} elements in {t:.2f} s = {n / t:.0f} elements/s")

    n = (1 << 16) * scale
    x = rng.uniform(-1, 1, n).astype(np.float32)
    grid = n // 256 // 16
    partial = np.zeros(grid, np.float32)
    t = timed(lambda: reduce_sum[grid, 256](x, partial, n))
    assert abs(partial.sum() - x.sum()) < 1e-2
    print(f"numba-cudasim reduce_sum {n} elements in {t:.2f} s = {n / t:.0f} elements/s")


if __name__ == "__main__":
    main()
