# The bench workloads written again with NumPy, timed the way `vkjit
# bench` times vkjit (median, min, max over iterations after warm-up), on
# the same machine in the same run (bench/run.sh). Prints one JSON object
# per workload. Run with Debian's python3 (python3-numpy); the BLAS NumPy
# loads is reported (install libopenblas0-pthread for the GEMM peer).
#   /usr/bin/python3 bench/peers/numpy_peer.py [--iterations N] [--warmup N] [workload ...]
import argparse
import json
import time

import numpy as np

f32 = np.float32


def chain8(x):
    r = np.maximum(np.tanh(x * f32(1.5) + f32(0.25)) * x - f32(0.5), f32(0))
    return r / (np.abs(x) + f32(1))


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def gemm(a, b):
    return a @ b


def dense_relu(x, w, b):
    return np.maximum(x @ w + b, f32(0))


def mlp_forward(x, w1, b1, w2, b2, w3, b3):
    a1 = np.maximum(x @ w1 + b1, f32(0))
    a2 = np.maximum(a1 @ w2 + b2, f32(0))
    z = a2 @ w3 + b3
    s = z - z.max(axis=1, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=1, keepdims=True))


rng = np.random.default_rng(0)


def u(*shape):
    return rng.uniform(-1, 1, size=shape).astype(f32)


WORKLOADS = {
    "chain8": (chain8, lambda: [u(4096, 4096)]),
    "softmax": (softmax, lambda: [u(4096, 1024)]),
    "gemm1024": (gemm, lambda: [u(1024, 1024), u(1024, 1024)]),
    "gemm2048": (gemm, lambda: [u(2048, 2048), u(2048, 2048)]),
    "dense_relu": (dense_relu, lambda: [u(256, 784), u(784, 512), u(512)]),
    "mlp_forward": (mlp_forward, lambda: [u(256, 784), u(784, 512), u(512), u(512, 512), u(512), u(512, 10), u(10)]),
}


def blas():
    try:
        cfg = np.show_config(mode="dicts")
        return cfg["Build Dependencies"]["blas"]["name"]
    except Exception:
        import ctypes.util
        return ctypes.util.find_library("blas") or "unknown"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("workloads", nargs="*", default=list(WORKLOADS))
    a = ap.parse_args()
    for name in a.workloads:
        fn, make = WORKLOADS[name]
        args = make()
        times = []
        for i in range(a.warmup + a.iterations):
            t = time.perf_counter()
            fn(*args)
            if i >= a.warmup:
                times.append((time.perf_counter() - t) * 1000)
        times.sort()
        n = len(times)
        med = times[n // 2] if n % 2 else (times[n // 2 - 1] + times[n // 2]) / 2
        print(json.dumps({"workload": name, "peer": "numpy", "numpy": np.__version__, "median_ms": med,
                          "min_ms": times[0], "max_ms": times[-1], "iterations": a.iterations}))


main()
