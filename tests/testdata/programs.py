# Inputs and expected outputs for the end-to-end programs in this folder
# (mlp_train, transformer, cnn, while_loop), computed by NumPy in float32,
# independently of vkjit: each function below is the program's graph.hlo
# written again with NumPy. Run with Debian's python3 (python3-numpy):
#   /usr/bin/python3 tests/testdata/programs.py
# It writes argN.npy and want_outN.npy into each program's folder.
import os
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
f32 = np.float32


def save(name, args, outs):
    d = os.path.join(here, name)
    for i, a in enumerate(args):
        assert a.dtype == np.float32, (name, i, a.dtype)
        np.save(os.path.join(d, "arg%d.npy" % i), a)
    for i, o in enumerate(outs):
        o = np.asarray(o, dtype=np.float32)
        np.save(os.path.join(d, "want_out%d.npy" % i), o)


def normal(rng, shape, scale):
    return (rng.normal(size=shape) * scale).astype(f32)


def mlp_train(rng):
    x = normal(rng, (64, 32), 1.0)
    labels = np.eye(10, dtype=f32)[rng.integers(0, 10, size=64)]
    w1 = normal(rng, (32, 64), 0.25)
    b1 = normal(rng, (64,), 0.1)
    w2 = normal(rng, (64, 10), 0.25)
    b2 = normal(rng, (10,), 0.1)
    z1 = x @ w1 + b1
    a1 = np.maximum(z1, f32(0))
    z2 = a1 @ w2 + b2
    shifted = z2 - z2.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    loss = (labels * logp).sum() * f32(-1 / 64)
    dz2 = (np.exp(logp) - labels) * f32(1 / 64)
    dw2 = a1.T @ dz2
    db2 = dz2.sum(axis=0)
    dz1 = np.where(z1 > 0, dz2 @ w2.T, f32(0))
    dw1 = x.T @ dz1
    db1 = dz1.sum(axis=0)
    lr = f32(0.1)
    outs = [loss, w1 - lr * dw1, b1 - lr * db1, w2 - lr * dw2, b2 - lr * db2]
    save("mlp_train", [x, labels, w1, b1, w2, b2], outs)


def layer_norm(x, g, b):
    mean = x.sum(axis=1, keepdims=True) * f32(1 / 32)
    xc = x - mean
    var = (xc * xc).sum(axis=1, keepdims=True) * f32(1 / 32)
    return xc * (f32(1) / np.sqrt(var + f32(1e-5))) * g + b


def transformer(rng):
    x = normal(rng, (16, 32), 1.0)
    ln1_g = (1 + normal(rng, (32,), 0.1)).astype(f32)
    ln1_b = normal(rng, (32,), 0.1)
    wq, wk, wv, wo = (normal(rng, (32, 32), 32 ** -0.5) for _ in range(4))
    ln2_g = (1 + normal(rng, (32,), 0.1)).astype(f32)
    ln2_b = normal(rng, (32,), 0.1)
    w1 = normal(rng, (32, 64), 32 ** -0.5)
    b1 = normal(rng, (64,), 0.1)
    w2 = normal(rng, (64, 32), 64 ** -0.5)
    b2 = normal(rng, (32,), 0.1)
    n1 = layer_norm(x, ln1_g, ln1_b)
    q, k, v = n1 @ wq, n1 @ wk, n1 @ wv
    scores = (q @ k.T) * f32(32 ** -0.5)
    causal = np.arange(16)[:, None] >= np.arange(16)[None, :]
    masked = np.where(causal, scores, f32(-np.inf))
    e = np.exp(masked - masked.max(axis=1, keepdims=True))
    probs = e / e.sum(axis=1, keepdims=True)
    h = x + (probs @ v) @ wo
    a = layer_norm(h, ln2_g, ln2_b) @ w1 + b1
    gelu = f32(0.5) * a * (1 + np.tanh(f32(0.7978845608028654) * (a + f32(0.044715) * (a * (a * a)))))
    y = h + (gelu @ w2 + b2)
    save("transformer", [x, ln1_g, ln1_b, wq, wk, wv, wo, ln2_g, ln2_b, w1, b1, w2, b2], [y])


def cnn(rng):
    x = normal(rng, (2, 8, 8, 3), 1.0)
    kernel = normal(rng, (3, 3, 3, 4), 0.3)
    cbias = normal(rng, (4,), 0.1)
    wd = normal(rng, (64, 10), 0.2)
    bd = normal(rng, (10,), 0.1)
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    conv = np.zeros((2, 8, 8, 4), dtype=f32)
    for dy in range(3):
        for dx in range(3):
            conv += np.einsum("nhwc,co->nhwo", xp[:, dy:dy + 8, dx:dx + 8, :], kernel[dy, dx])
    relu = np.maximum(conv + cbias, f32(0))
    pool = relu.reshape(2, 4, 2, 4, 2, 4).max(axis=(2, 4))
    out = pool.reshape(2, 64) @ wd + bd
    save("cnn", [x, kernel, cbias, wd, bd], [out])


def while_loop(rng):
    # A symmetric matrix with a clear dominant eigenvalue, so that the
    # iteration converges and rounding differences shrink rather than grow.
    q, _ = np.linalg.qr(rng.normal(size=(16, 16)))
    eig = np.concatenate([[10.0], rng.uniform(0.5, 5.0, size=15)])
    a = (q * eig) @ q.T
    a = ((a + a.T) / 2).astype(f32)
    v = normal(rng, (16,), 1.0)
    v0 = v.copy()
    for _ in range(40):
        w = a @ v
        v = w / np.sqrt(np.dot(w, w))
    lam = np.dot(v, a @ v)
    save("while_loop", [a, v0], [v, lam])


rng = np.random.default_rng(20261130)
mlp_train(rng)
transformer(rng)
cnn(rng)
while_loop(rng)
