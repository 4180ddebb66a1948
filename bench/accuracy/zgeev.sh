#!/bin/sh
# Measures vkjit's cgeev, cgees and cgehrd (what JAX's CPU lowering
# emits for jnp.linalg.eig, jax.scipy.linalg.schur and .hessenberg of
# complex64 matrices) against LAPACK's zgeev through NumPy and zgehrd
# through ctypes, and LAPACK's own cgeev, cgees and cgehrd in complex64
# beside them, in f32 ulps of the largest eigenvalue's magnitude (gees:
# of the matrix's 2-norm; gehrd: of max|h|); docs/ACCURACY.md records
# the output. Usage: bench/accuracy/zgeev.sh (from the repository root,
# after make).
set -e
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/zgeev.hlo" <<'HLO'
HloModule zgeev
ENTRY e {
  a = c64[8,32,32] parameter(0)
  r = (c64[8,32], c64[8,32,32], c64[8,32,32], s32[8]) custom-call(a), custom_call_target="lapack_cgeev_ffi", backend_config={compute_left = 86 : ui8, compute_right = 86 : ui8}
  w = c64[8,32] get-tuple-element(r), index=0
  vl = c64[8,32,32] get-tuple-element(r), index=1
  vr = c64[8,32,32] get-tuple-element(r), index=2
  info = s32[8] get-tuple-element(r), index=3
  s = (c64[8,32,32], c64[8,32,32], c64[8,32], s32[8], s32[8]) custom-call(a), custom_call_target="lapack_cgees_ffi", backend_config={mode = 86 : ui8, sort = 78 : ui8}
  t = c64[8,32,32] get-tuple-element(s), index=0
  z = c64[8,32,32] get-tuple-element(s), index=1
  sinfo = s32[8] get-tuple-element(s), index=4
  g = (c64[8,32,32], c64[8,31], s32[8]) custom-call(a), custom_call_target="lapack_cgehrd_ffi", backend_config={high = 32 : i32, low = 1 : i32}
  h = c64[8,32,32] get-tuple-element(g), index=0
  tau = c64[8,31] get-tuple-element(g), index=1
  ROOT out = (c64[8,32], c64[8,32,32], c64[8,32,32], s32[8], c64[8,32,32], c64[8,32,32], s32[8], c64[8,32,32], c64[8,31]) tuple(w, vl, vr, info, t, z, sinfo, h, tau)
}
HLO
cd "$dir"
/usr/bin/python3 -c "
import numpy as np
r = np.random.default_rng(8)
np.save('a.npy', (r.uniform(-1, 1, (8, 32, 32)) + 1j * r.uniform(-1, 1, (8, 32, 32))).astype(np.complex64))"
cd - >/dev/null
bin/vkjit run "$dir/zgeev.hlo" "$dir/a.npy" --out "$dir/out.npz" >/dev/null
cd "$dir"
PYTHONPATH="$here" /usr/bin/python3 - <<'PY'
import ctypes
import numpy as np
from lapack import lib, i, p, eig_errors, schur_errors, gehrd, gehrd_errors
o = np.load('out.npz')
a64 = np.load('a.npy')
eps = np.finfo(np.float32).eps
n = 32
def cgeev(x):  # LAPACK's own, in complex64
    f = np.asfortranarray(x.astype(np.complex64))
    w = np.zeros(n, np.complex64)
    vl, vr = np.zeros((n, n), np.complex64, order='F'), np.zeros((n, n), np.complex64, order='F')
    lwork = 8 * n
    work, rwork, info = np.zeros(lwork, np.complex64), np.zeros(2 * n, np.float32), ctypes.c_int(0)
    lib.cgeev_(ctypes.c_char_p(b'V'), ctypes.c_char_p(b'V'), i(n), p(f), i(n), p(w), p(vl), i(n), p(vr), i(n), p(work), i(lwork), p(rwork), ctypes.byref(info))
    assert info.value == 0
    return w.astype(np.complex128), vl.astype(np.complex128), vr.astype(np.complex128)
for name in ('vkjit', 'LAPACK cgeev'):
    ews, rrs, rls = [], [], []
    for b in range(8):
        a = a64[b].astype(np.complex128)
        if name == 'vkjit':
            assert o['out3'][b] == 0
            got = (o['out0'][b].astype(np.complex128), o['out1'][b].astype(np.complex128), o['out2'][b].astype(np.complex128))
        else:
            got = cgeev(a64[b])
        ew, rr, rl = eig_errors(*got, a, eps)
        ews += ew
        rrs.append(rr)
        rls.append(rl)
    print('%s c64 8x32x32: eigenvalues from zgeev\'s, ulp of max|w|: median %.1f, 90th percentile %.1f, max %.1f; |a v - w v| %.1f ulp, |u^H a - w u^H| %.1f ulp' % (
        name, np.median(ews), np.percentile(ews, 90), max(ews), max(rrs), max(rls)))
def cgees(x):  # LAPACK's own, in complex64, no sorting
    f = np.asfortranarray(x.astype(np.complex64))
    w = np.zeros(n, np.complex64)
    vs = np.zeros((n, n), np.complex64, order='F')
    lwork = 8 * n
    work, rwork, bwork = np.zeros(lwork, np.complex64), np.zeros(n, np.float32), np.zeros(n, np.int32)
    sdim, info = ctypes.c_int(0), ctypes.c_int(0)
    lib.cgees_(ctypes.c_char_p(b'V'), ctypes.c_char_p(b'N'), None, i(n), p(f), i(n), ctypes.byref(sdim), p(w), p(vs), i(n), p(work), i(lwork), p(rwork), p(bwork), ctypes.byref(info))
    assert info.value == 0
    return np.asarray(f), np.asarray(vs)
for name in ('vkjit', 'LAPACK cgees'):
    bes, oes = [], []
    for b in range(8):
        a = a64[b].astype(np.complex128)
        if name == 'vkjit':
            assert o['out6'][b] == 0
            t, z = o['out4'][b], o['out5'][b]
        else:
            t, z = cgees(a64[b])
        t, z = t.astype(np.complex128), z.astype(np.complex128)
        assert np.all(np.tril(t, -1) == 0)
        be, oe = schur_errors(t, z, a, eps)
        bes.append(be)
        oes.append(oe)
    print('%s c64 8x32x32: |a - Z T Z^H| %.1f ulp of |a|_2, |Z^H Z - I| %.1f ulp' % (name, max(bes), max(oes)))
for name in ('vkjit', 'LAPACK cgehrd'):
    hes, tes = [], []
    for b in range(8):
        h, tau = (o['out7'][b], o['out8'][b]) if name == 'vkjit' else gehrd(a64[b], 'c', np.complex64)
        he, te = gehrd_errors(h, tau, a64[b], 'z', eps)
        hes.append(he)
        tes.append(te)
    print('%s c64 8x32x32: h and reflectors %.1f ulp of max|h| from zgehrd\'s, tau %.1f ulp' % (name, max(hes), max(tes)))
PY
