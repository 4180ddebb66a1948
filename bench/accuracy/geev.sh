#!/bin/sh
# Measures vkjit's geev, gees and gehrd (what JAX's CPU lowering emits
# for jnp.linalg.eig, jax.scipy.linalg.schur and .hessenberg) against
# LAPACK's dgeev through NumPy and dgehrd through ctypes, and LAPACK's
# own sgeev, sgees and sgehrd in f32 beside them, in f32 ulps of the
# largest eigenvalue's magnitude (gees: of the matrix's 2-norm; gehrd:
# of max|h|); docs/ACCURACY.md records the output.
# Usage: bench/accuracy/geev.sh (from the repository root, after make).
set -e
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/geev.hlo" <<'HLO'
HloModule geev
ENTRY e {
  a = f32[8,32,32] parameter(0)
  r = (f32[8,32], f32[8,32], c64[8,32,32], c64[8,32,32], s32[8]) custom-call(a), custom_call_target="lapack_sgeev_ffi", backend_config={compute_left = 86 : ui8, compute_right = 86 : ui8}
  wr = f32[8,32] get-tuple-element(r), index=0
  wi = f32[8,32] get-tuple-element(r), index=1
  vl = c64[8,32,32] get-tuple-element(r), index=2
  vr = c64[8,32,32] get-tuple-element(r), index=3
  info = s32[8] get-tuple-element(r), index=4
  s = (f32[8,32,32], f32[8,32,32], f32[8,32], f32[8,32], s32[8], s32[8]) custom-call(a), custom_call_target="lapack_sgees_ffi", backend_config={mode = 86 : ui8, sort = 78 : ui8}
  t = f32[8,32,32] get-tuple-element(s), index=0
  z = f32[8,32,32] get-tuple-element(s), index=1
  sinfo = s32[8] get-tuple-element(s), index=5
  g = (f32[8,32,32], f32[8,31], s32[8]) custom-call(a), custom_call_target="lapack_sgehrd_ffi", backend_config={high = 32 : i32, low = 1 : i32}
  h = f32[8,32,32] get-tuple-element(g), index=0
  tau = f32[8,31] get-tuple-element(g), index=1
  ROOT out = (f32[8,32], f32[8,32], c64[8,32,32], c64[8,32,32], s32[8], f32[8,32,32], f32[8,32,32], s32[8], f32[8,32,32], f32[8,31]) tuple(wr, wi, vl, vr, info, t, z, sinfo, h, tau)
}
HLO
cd "$dir"
/usr/bin/python3 -c "
import numpy as np
np.save('a.npy', np.random.default_rng(7).uniform(-1, 1, (8, 32, 32)).astype(np.float32))"
cd - >/dev/null
bin/vkjit run "$dir/geev.hlo" "$dir/a.npy" --out "$dir/out.npz" >/dev/null
cd "$dir"
PYTHONPATH="$here" /usr/bin/python3 - <<'PY'
import ctypes
import numpy as np
from lapack import lib, i, p, eig_errors, schur_errors, gehrd, gehrd_errors
o = np.load('out.npz')
a32 = np.load('a.npy')
eps = np.finfo(np.float32).eps
def sgeev(x):  # LAPACK's own, in f32
    n = x.shape[0]
    f = np.asfortranarray(x.astype(np.float32))
    wr, wi = np.zeros(n, np.float32), np.zeros(n, np.float32)
    vl, vr = np.zeros((n, n), np.float32, order='F'), np.zeros((n, n), np.float32, order='F')
    lwork = 8 * n
    work, info = np.zeros(lwork, np.float32), ctypes.c_int(0)
    lib.sgeev_(ctypes.c_char_p(b'V'), ctypes.c_char_p(b'V'), i(n), p(f), i(n), p(wr), p(wi), p(vl), i(n), p(vr), i(n), p(work), i(lwork), ctypes.byref(info))
    w = wr + 1j * wi.astype(np.float64)
    def unpack(v):
        out = v.astype(np.complex128)
        for j in range(n):
            if wi[j] > 0:
                out[:, j] = v[:, j] + 1j * v[:, j + 1]
                out[:, j + 1] = v[:, j] - 1j * v[:, j + 1]
        return out
    return w, unpack(vl), unpack(vr)
for name in ('vkjit', 'LAPACK sgeev'):
    ews, rrs, rls = [], [], []
    for b in range(8):
        a = a32[b].astype(np.float64)
        if name == 'vkjit':
            assert o['out4'][b] == 0
            got = (o['out0'][b] + 1j * o['out1'][b].astype(np.float64), o['out2'][b], o['out3'][b])
        else:
            got = sgeev(a32[b])
        ew, rr, rl = eig_errors(*got, a, eps)
        ews += ew
        rrs.append(rr)
        rls.append(rl)
    print('%s f32 8x32x32: eigenvalues from dgeev\'s, ulp of max|w|: median %.1f, 90th percentile %.1f, max %.1f; |a v - w v| %.1f ulp, |u^H a - w u^H| %.1f ulp' % (
        name, np.median(ews), np.percentile(ews, 90), max(ews), max(rrs), max(rls)))
def sgees(x):  # LAPACK's own, in f32, no sorting
    n = x.shape[0]
    f = np.asfortranarray(x.astype(np.float32))
    wr, wi = np.zeros(n, np.float32), np.zeros(n, np.float32)
    vs = np.zeros((n, n), np.float32, order='F')
    lwork = 8 * n
    work, bwork, sdim, info = np.zeros(lwork, np.float32), np.zeros(n, np.int32), ctypes.c_int(0), ctypes.c_int(0)
    lib.sgees_(ctypes.c_char_p(b'V'), ctypes.c_char_p(b'N'), None, i(n), p(f), i(n), ctypes.byref(sdim), p(wr), p(wi), p(vs), i(n), p(work), i(lwork), p(bwork), ctypes.byref(info))
    return np.asarray(f), np.asarray(vs)
for name in ('vkjit', 'LAPACK sgees'):
    bes, oes = [], []
    for b in range(8):
        a = a32[b].astype(np.float64)
        if name == 'vkjit':
            assert o['out7'][b] == 0
            t, z = o['out5'][b].astype(np.float64), o['out6'][b].astype(np.float64)
        else:
            t, z = (m.astype(np.float64) for m in sgees(a32[b]))
        be, oe = schur_errors(t, z, a, eps)
        bes.append(be)
        oes.append(oe)
    print('%s f32 8x32x32: |a - Z T Z^T| %.1f ulp of |a|_2, |Z^T Z - I| %.1f ulp' % (name, max(bes), max(oes)))
for name in ('vkjit', 'LAPACK sgehrd'):
    hes, tes = [], []
    for b in range(8):
        h, tau = (o['out8'][b], o['out9'][b]) if name == 'vkjit' else gehrd(a32[b], 's', np.float32)
        he, te = gehrd_errors(h, tau, a32[b], 'd', eps)
        hes.append(he)
        tes.append(te)
    print('%s f32 8x32x32: h and reflectors %.1f ulp of max|h| from dgehrd\'s, tau %.1f ulp' % (name, max(hes), max(tes)))
PY
