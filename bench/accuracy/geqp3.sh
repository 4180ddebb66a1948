#!/bin/sh
# Measures vkjit's geqp3 (QR with column pivoting: what JAX's CPU
# lowering emits for jax.lax.linalg.qr(pivoting=True)) against LAPACK's
# dgeqp3 and zgeqp3 through ctypes, with LAPACK's own sgeqp3 and cgeqp3
# beside them: how many of the 8 random 48x32 matrices of each type get
# dgeqp3's permutation, and R (its upper triangle) in f32 ulps of max|R|
# and tau in f32 ulps over those. docs/ACCURACY.md records the output.
# Usage: bench/accuracy/geqp3.sh (from the repository root, after make).
set -e
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for t in f32 c64; do
  case $t in f32) call=lapack_sgeqp3_ffi ;; c64) call=lapack_cgeqp3_ffi ;; esac
  cat > "$dir/$t.hlo" <<HLO
HloModule qp3
ENTRY e {
  a = $t[8,48,32] parameter(0)
  p = s32[8,32] parameter(1)
  ROOT r = ($t[8,48,32], s32[8,32], $t[8,32]) custom-call(a, p), custom_call_target="$call"
}
HLO
done
cd "$dir"
/usr/bin/python3 -c "
import numpy as np
g = np.random.default_rng(13)
np.save('f32.npy', g.uniform(-1, 1, (8, 48, 32)).astype(np.float32))
np.save('c64.npy', (g.uniform(-1, 1, (8, 48, 32)) + 1j * g.uniform(-1, 1, (8, 48, 32))).astype(np.complex64))
np.save('p.npy', np.zeros((8, 32), np.int32))"
cd - >/dev/null
for t in f32 c64; do
  bin/vkjit run "$dir/$t.hlo" "$dir/$t.npy" "$dir/p.npy" --out "$dir/$t.npz" >/dev/null
done
cd "$dir"
PYTHONPATH="$here" /usr/bin/python3 - <<'PY'
import numpy as np
from lapack import geqp3
eps = np.finfo(np.float32).eps
for t, low, wide in (('f32', 's', 'd'), ('c64', 'c', 'z')):
    a32 = np.load(t + '.npy')
    dt = a32.dtype.type
    o = np.load(t + '.npz')
    upper = np.triu(np.ones((48, 32), bool))
    for name in ('vkjit', 'LAPACK ' + low + 'geqp3'):
        same, res, tes = 0, [], []
        for b in range(8):
            got = (o['out0'][b], o['out1'][b], o['out2'][b]) if name == 'vkjit' else geqp3(a32[b], low, dt)
            want = geqp3(a32[b].astype(np.promote_types(dt, np.float64)), wide, np.promote_types(dt, np.float64))
            if not np.array_equal(got[1], want[1]):
                continue
            same += 1
            res.append(np.abs(got[0][upper] - want[0][upper]).max() / np.abs(want[0][upper]).max() / eps)
            tes.append(np.abs(got[2] - want[2]).max() / eps)
        print('%s %s 8x48x32: %d of 8 with dgeqp3\'s permutation; over those, R %.1f ulp of max|R|, tau %.1f ulp' % (
            name, t, same, max(res) if res else float('nan'), max(tes) if tes else float('nan')))
PY
