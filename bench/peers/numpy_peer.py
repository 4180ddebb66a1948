# The bench workloads written again with NumPy's array API, timed the way
# `vkjit bench` times vkjit (median, min, max over iterations after
# warm-up), on the same machine in the same run (bench/run.sh). Prints one
# JSON object per workload. Run with Debian's python3 (python3-numpy); the
# BLAS NumPy loads is reported (install libopenblas0-pthread for the GEMM
# peer). --peer jax runs the same functions through jax.jit on JAX's
# default device (XLA itself: the peer on a GPU), arguments already on the
# device and each run waited for, as vkjit bench excludes transfers.
#   /usr/bin/python3 bench/peers/numpy_peer.py [--peer numpy|jax] [--iterations N] [--warmup N] [workload ...]
import argparse
import json
import time

import numpy as np

f32 = np.float32
xp = np  # the array namespace the workloads compute with: numpy, or jax.numpy


def stream_copy(x):
    return x.copy()


def chain8(x):
    r = xp.maximum(xp.tanh(x * f32(1.5) + f32(0.25)) * x - f32(0.5), f32(0))
    return r / (xp.abs(x) + f32(1))


def softmax(x):
    e = xp.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def gemm(a, b):
    return a @ b


def dense_relu(x, w, b):
    return xp.maximum(x @ w + b, f32(0))


def mlp_forward(x, w1, b1, w2, b2, w3, b3):
    a1 = xp.maximum(x @ w1 + b1, f32(0))
    a2 = xp.maximum(a1 @ w2 + b2, f32(0))
    z = a2 @ w3 + b3
    s = z - z.max(axis=1, keepdims=True)
    return s - xp.log(xp.exp(s).sum(axis=1, keepdims=True))


def mlp_train(x, labels, w1, b1, w2, b2):
    n = f32(x.shape[0])
    z1 = x @ w1 + b1
    a1 = xp.maximum(z1, f32(0))
    z2 = a1 @ w2 + b2
    shifted = z2 - z2.max(axis=1, keepdims=True)
    logp = shifted - xp.log(xp.exp(shifted).sum(axis=1, keepdims=True))
    loss = (labels * logp).sum() * (f32(-1) / n)
    dz2 = (xp.exp(logp) - labels) * (f32(1) / n)
    dw2 = a1.T @ dz2
    db2 = dz2.sum(axis=0)
    dz1 = xp.where(z1 > 0, dz2 @ w2.T, f32(0))
    dw1 = x.T @ dz1
    db1 = dz1.sum(axis=0)
    lr = f32(0.1)
    return loss, w1 - lr * dw1, b1 - lr * db1, w2 - lr * dw2, b2 - lr * db2


def conv_block(x, kernel, bias):
    n, h, w, _ = x.shape
    padded = xp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    # im2col: the 9 shifted windows side by side, then one matrix product
    # (NumPy's fastest form of a small convolution).
    cols = xp.concatenate([padded[:, dy:dy + h, dx:dx + w, :] for dy in range(3) for dx in range(3)], axis=3)
    conv = cols.reshape(n * h * w, -1) @ kernel.reshape(-1, kernel.shape[3])
    relu = xp.maximum(conv.reshape(n, h, w, -1) + bias, f32(0))
    return relu.reshape(n, h // 2, 2, w // 2, 2, -1).max(axis=(2, 4))


def conv_grad(x, w, g):
    # im2col of the stride-2 windows (pad 1 before, 1 after: 64 -> 32);
    # the kernel's gradient one matrix product, the input's the product
    # of g with the kernel scattered back (col2im) window by window.
    n, h, wd, c = x.shape
    o = w.shape[3]
    padded = xp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    oh, ow = h // 2, wd // 2
    cols = xp.concatenate([padded[:, dy:dy + h:2, dx:dx + wd:2, :] for dy in range(3) for dx in range(3)], axis=3)
    g2 = g.reshape(n * oh * ow, o)
    dw = (cols.reshape(n * oh * ow, -1).T @ g2).reshape(3, 3, c, o)
    dcols = (g2 @ w.reshape(-1, o).T).reshape(n, oh, ow, 9, c)
    dpad = xp.zeros_like(padded)
    for i in range(9):
        dy, dx = divmod(i, 3)
        dpad[:, dy:dy + h:2, dx:dx + wd:2, :] += dcols[:, :, :, i, :]
    return dpad[:, 1:h + 1, 1:wd + 1, :], dw


def layer_norm(x, g, b):
    d = f32(x.shape[1])
    mean = x.sum(axis=1, keepdims=True) / d
    xc = x - mean
    var = (xc * xc).sum(axis=1, keepdims=True) / d
    return xc * (f32(1) / xp.sqrt(var + f32(1e-5))) * g + b


def transformer_block(x, ln1_g, ln1_b, wq, wk, wv, wo, ln2_g, ln2_b, w1, b1, w2, b2):
    s, d = x.shape
    n1 = layer_norm(x, ln1_g, ln1_b)
    q, k, v = n1 @ wq, n1 @ wk, n1 @ wv
    scores = (q @ k.T) * f32(d ** -0.5)
    causal = xp.arange(s)[:, None] >= xp.arange(s)[None, :]
    masked = xp.where(causal, scores, f32(-np.inf))
    e = xp.exp(masked - masked.max(axis=1, keepdims=True))
    probs = e / e.sum(axis=1, keepdims=True)
    h = x + (probs @ v) @ wo
    a = layer_norm(h, ln2_g, ln2_b) @ w1 + b1
    gelu = f32(0.5) * a * (1 + xp.tanh(f32(0.7978845608028654) * (a + f32(0.044715) * (a * (a * a)))))
    return h + (gelu @ w2 + b2)


def sort_rows(x):
    return xp.sort(x, axis=1)  # NumPy's default, quicksort (jnp.sort is stable)


def cumsum_rows(x):
    return xp.cumsum(x, axis=1)


def embedding_grad(u):
    # The same hashed indices as embedding_grad.hlo; repeated indices
    # apply one after another, as the scatter applies them.
    idx = (xp.arange(100000) * 7919) % 50000
    if xp is np:
        o = np.zeros((50000, 128), dtype=f32)
        np.add.at(o, idx, u)
        return o
    return xp.zeros((50000, 128), dtype=f32).at[idx].add(u)


def scan_rnn(h, w):
    if xp is np:  # a Python loop: what NumPy has for a scan
        ys = np.zeros((20000, 128), dtype=f32)
        for i in range(20000):
            h = np.tanh(h @ w)
            ys[i] = h
        return ys
    import jax

    def cell(h, _):
        h = xp.tanh(h @ w)
        return h, h

    return jax.lax.scan(cell, h, None, length=20000)[1]


def complex_mul(x, y):
    return x * y


def fft256(x):
    return xp.fft.fft(x, axis=-1)


def fft4096(x):
    return xp.fft.fft(x, axis=-1)


def fft2d256(x):
    return xp.fft.fft2(x)


def rfft512x256(x):
    return xp.fft.rfft(x, axis=-1)  # NumPy's pocketfft computes in float64


def irfft64x1000(x):
    return xp.fft.irfft(x, n=1000, axis=-1)


rng = np.random.default_rng(0)


def u(*shape):
    return rng.uniform(-1, 1, size=shape).astype(f32)


def c(*shape):
    return (rng.uniform(-1, 1, size=shape) + 1j * rng.uniform(-1, 1, size=shape)).astype(np.complex64)


WORKLOADS = {
    "complex_mul": (complex_mul, lambda: [c(1024, 1024), c(1024, 1024)]),
    "fft256": (fft256, lambda: [c(256, 256)]),
    "fft4096": (fft4096, lambda: [c(64, 4096)]),
    "fft2d256": (fft2d256, lambda: [c(256, 256)]),
    "rfft512x256": (rfft512x256, lambda: [u(512, 256)]),
    "irfft64x1000": (irfft64x1000, lambda: [c(64, 501)]),
    "stream_copy": (stream_copy, lambda: [u(4096, 4096)]),
    "sort_rows": (sort_rows, lambda: [u(1024, 4096)]),
    "cumsum_rows": (cumsum_rows, lambda: [u(1024, 4096)]),
    "conv_grad": (conv_grad, lambda: [u(8, 64, 64, 64), u(3, 3, 64, 128), u(8, 32, 32, 128)]),
    "embedding_grad": (embedding_grad, lambda: [u(100000, 128)]),
    "scan_rnn": (scan_rnn, lambda: [u(128), u(128, 128)]),
    "chain8": (chain8, lambda: [u(4096, 4096)]),
    "softmax": (softmax, lambda: [u(4096, 1024)]),
    "gemm1024": (gemm, lambda: [u(1024, 1024), u(1024, 1024)]),
    "gemm2048": (gemm, lambda: [u(2048, 2048), u(2048, 2048)]),
    "gemv4096": (gemm, lambda: [u(1, 4096), u(4096, 4096)]),
    "dense_relu": (dense_relu, lambda: [u(256, 784), u(784, 512), u(512)]),
    "mlp_forward": (mlp_forward, lambda: [u(256, 784), u(784, 512), u(512), u(512, 512), u(512), u(512, 10), u(10)]),
    "mlp_train": (mlp_train, lambda: [u(256, 784), np.eye(10, dtype=f32)[rng.integers(0, 10, size=256)],
                                      u(784, 512), u(512), u(512, 10), u(10)]),
    "conv_block": (conv_block, lambda: [u(8, 32, 32, 32), u(3, 3, 32, 64), u(64)]),
    "transformer_block": (transformer_block, lambda: [u(256, 256), u(256), u(256), u(256, 256), u(256, 256), u(256, 256),
                                                      u(256, 256), u(256), u(256), u(256, 1024), u(1024), u(1024, 256), u(256)]),
}


def blas():
    try:
        cfg = np.show_config(mode="dicts")
        return cfg["Build Dependencies"]["blas"]["name"]
    except Exception:
        import ctypes.util
        return ctypes.util.find_library("blas") or "unknown"


def main():
    global xp
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer", choices=["numpy", "jax"], default="numpy")
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("workloads", nargs="*", default=list(WORKLOADS))
    a = ap.parse_args()
    info = {"numpy": np.__version__, "blas": blas()}
    if a.peer == "jax":
        import jax
        import jax.numpy as jnp
        xp = jnp
        info = {"jax": jax.__version__, "jax_device": str(jax.devices()[0])}
    for name in a.workloads:
        fn, make = WORKLOADS[name]
        args = make()
        run = fn
        if a.peer == "jax":
            args = [jax.device_put(x) for x in args]
            jitted = jax.jit(fn)
            run = lambda *xs: jax.block_until_ready(jitted(*xs))  # noqa: E731
        times = []
        for i in range(a.warmup + a.iterations):
            t = time.perf_counter()
            run(*args)
            if i >= a.warmup:
                times.append((time.perf_counter() - t) * 1000)
        times.sort()
        n = len(times)
        med = times[n // 2] if n % 2 else (times[n // 2 - 1] + times[n // 2]) / 2
        print(json.dumps({"workload": name, "peer": a.peer, **info, "median_ms": med,
                          "min_ms": times[0], "max_ms": times[-1], "iterations": a.iterations}), flush=True)


main()
