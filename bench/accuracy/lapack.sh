#!/bin/sh
# Measures vkjit's LAPACK calls (geqrf, orgqr/ungqr, potrf, trsm: what
# JAX's CPU lowering emits for jnp.linalg) against LAPACK in float64
# through NumPy, in f32 ulps; docs/ACCURACY.md records the output.
# Usage: bench/accuracy/lapack.sh (from the repository root, after make).
set -e
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
python3 - <<'PY'
import numpy as np
rng = np.random.default_rng(7)
a = rng.uniform(-1, 1, (8, 64, 32)).astype(np.float32)
ac = (rng.uniform(-1, 1, (8, 48, 24)) + 1j * rng.uniform(-1, 1, (8, 48, 24))).astype(np.complex64)
spd = (np.einsum('bij,bkj->bik', a[:, :32, :], a[:, :32, :]) + 32 * np.eye(32)).astype(np.float32)
np.save('a.npy', a); np.save('ac.npy', ac); np.save('spd.npy', spd)
PY
cd - >/dev/null
bin/vkjit run bench/accuracy/lapack.hlo "$dir/a.npy" "$dir/ac.npy" "$dir/spd.npy" --out "$dir/out.npz" >/dev/null
cd "$dir"
python3 - <<'PY'
import numpy as np
o = np.load('out.npz')
a = np.load('a.npy').astype(np.float64); ac = np.load('ac.npy').astype(np.complex128); p = np.load('spd.npy').astype(np.float64)
eps = np.finfo(np.float32).eps
def err(got, want, scale):
    return np.abs(got - want).max() / scale / eps
for name, x, off in (('f32 8x64x32', a, 0), ('c64 8x48x24', ac, 3)):
    hs, ts, qs = [], [], []
    for b in range(x.shape[0]):
        h, tau = np.linalg.qr(x[b], mode='raw')
        h = h.T
        q = np.linalg.qr(x[b], mode='reduced')[0]
        hs.append(err(o['out%d' % off][b], h, np.abs(h).max()))
        ts.append(err(o['out%d' % (off + 1)][b], tau, 1))
        qs.append(err(o['out%d' % (off + 2)][b], q, 1))
    print('geqrf/orgqr %s: h %.1f ulp of max|h|, tau %.1f ulp, Q %.1f ulp' % (name, max(hs), max(ts), max(qs)))
ls = [err(o['out6'][b], np.tril(np.linalg.cholesky(p[b])) + np.triu(p[b], 1), np.abs(p[b]).max() ** 0.5) for b in range(8)]
print('potrf f32 8x32x32: %.1f ulp of sqrt(max|a|)' % max(ls))
xs = []
for b in range(8):
    r = np.triu(o['out0'][b][:32, :32].astype(np.float64))
    x = np.linalg.solve(r, p[b])
    xs.append(np.abs(o['out7'][b] - x).max() / np.abs(x).max() / eps)
print('trsm f32 8x32x32: %.1f ulp of max|x|' % max(xs))
import ctypes, ctypes.util
lib = ctypes.CDLL(ctypes.util.find_library('openblas') or ctypes.util.find_library('lapack'))
fs, same = [], True
for b in range(8):
    f = np.asfortranarray(a[b].copy())
    ipiv = np.zeros(32, dtype=np.int32)
    info = ctypes.c_int(0)
    mm, nn = ctypes.c_int(64), ctypes.c_int(32)
    lib.dgetrf_(ctypes.byref(mm), ctypes.byref(nn), f.ctypes.data_as(ctypes.c_void_p), ctypes.byref(mm), ipiv.ctypes.data_as(ctypes.c_void_p), ctypes.byref(info))
    same = same and (ipiv == o['out9'][b]).all()
    fs.append(err(o['out8'][b], f, np.abs(f).max()))
print('getrf f32 8x64x32: %.1f ulp of max|lu|, pivots %s' % (max(fs), 'the same as LAPACK' if same else 'DIFFERENT from LAPACK'))
we, ve = [], []
for b in range(8):
    s = p[b] + p[b].T
    w, v = np.linalg.eigh(s)
    we.append(np.abs(o['out11'][b] - w).max() / np.abs(w).max() / eps)
    got = o['out10'][b] * np.sign((o['out10'][b] * v).sum(axis=0))  # each column's sign as LAPACK's
    ve.append(np.abs(got - v).max() / eps)
print('syevd f32 8x32x32 (Jacobi): eigenvalues %.1f ulp of max|w|, eigenvectors %.1f ulp (up to sign)' % (max(we), max(ve)))
def ssyevd(x):  # LAPACK's own, in f32, for reference
    n = x.shape[0]
    f = np.asfortranarray(x.astype(np.float32))
    w = np.zeros(n, np.float32)
    lwork, liwork = 1 + 6 * n + 2 * n * n, 3 + 5 * n
    work, iwork, info = np.zeros(lwork, np.float32), np.zeros(liwork, np.int32), ctypes.c_int(0)
    i = lambda v: ctypes.byref(ctypes.c_int(v))
    lib.ssyevd_(ctypes.c_char_p(b'V'), ctypes.c_char_p(b'L'), i(n), f.ctypes.data_as(ctypes.c_void_p), i(n), w.ctypes.data_as(ctypes.c_void_p),
                work.ctypes.data_as(ctypes.c_void_p), i(lwork), iwork.ctypes.data_as(ctypes.c_void_p), i(liwork), ctypes.byref(info))
    return w, np.ascontiguousarray(f)
we, ve = [], []
for b in range(8):
    s = p[b] + p[b].T
    w, v = np.linalg.eigh(s)
    w3, v3 = ssyevd(s)
    we.append(np.abs(w3 - w).max() / np.abs(w).max() / eps)
    ve.append(np.abs(v3 * np.sign((v3 * v).sum(axis=0)) - v).max() / eps)
print('  LAPACK ssyevd itself in f32, for reference: eigenvalues %.1f ulp, eigenvectors %.1f ulp' % (max(we), max(ve)))
we, ve = [], []
for b in range(8):
    x = ac[b][:24, :24]
    hm = x + x.conj().T
    w, v = np.linalg.eigh(hm)
    we.append(np.abs(o['out13'][b] - w).max() / np.abs(w).max() / eps)
    g = o['out12'][b]
    ph = (g.conj() * v).sum(axis=0)  # each column's phase as LAPACK's
    ve.append(np.abs(g * (ph / np.abs(ph)) - v).max() / eps)
print('heevd c64 8x24x24 (Jacobi): eigenvalues %.1f ulp of max|w|, eigenvectors %.1f ulp (up to phase)' % (max(we), max(ve)))
se, ue, ve = [], [], []
for b in range(8):
    u, sv, vh = np.linalg.svd(a[b], full_matrices=False)
    se.append(np.abs(o['out14'][b] - sv).max() / sv.max() / eps)
    sign = np.sign((o['out16'][b] * vh).sum(axis=1))  # each pair's sign as LAPACK's
    ve.append(np.abs(o['out16'][b] * sign[:, None] - vh).max() / eps)
    ue.append(np.abs(o['out15'][b] * sign[None, :] - u).max() / eps)
print('gesdd f32 8x64x32 (one-sided Jacobi): singular values %.1f ulp of max s, u %.1f ulp, vt %.1f ulp (up to sign)' % (max(se), max(ue), max(ve)))
PY
