#!/bin/sh
# Measures vkjit's sytrd and hetrd (what JAX's CPU lowering emits for
# jax.lax.linalg.tridiagonal) against LAPACK's dsytrd and zhetrd through
# ctypes, with LAPACK's own ssytrd and chetrd in single precision beside
# them: d and e in f32 ulps of max(|d|, |e|), tau and the reflectors'
# elements (|v| <= 1 about) in f32 ulps; both triangles, 8 random 32x32
# matrices of each type. docs/ACCURACY.md records the output.
# Usage: bench/accuracy/sytrd.sh (from the repository root, after make).
set -e
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for t in f32 c64; do
  case $t in f32) call=lapack_ssytrd_ffi ;; c64) call=lapack_chetrd_ffi ;; esac
  for u in 76 85; do
    cat > "$dir/$t$u.hlo" <<HLO
HloModule sytrd
ENTRY e {
  a = $t[8,32,32] parameter(0)
  ROOT r = ($t[8,32,32], f32[8,32], f32[8,31], $t[8,31], s32[8]) custom-call(a), custom_call_target="$call", backend_config={uplo = $u : ui8}
}
HLO
  done
done
cd "$dir"
/usr/bin/python3 -c "
import numpy as np
g = np.random.default_rng(11)
np.save('f32.npy', g.uniform(-1, 1, (8, 32, 32)).astype(np.float32))
np.save('c64.npy', (g.uniform(-1, 1, (8, 32, 32)) + 1j * g.uniform(-1, 1, (8, 32, 32))).astype(np.complex64))"
cd - >/dev/null
for t in f32 c64; do
  for u in 76 85; do
    bin/vkjit run "$dir/$t$u.hlo" "$dir/$t.npy" --out "$dir/$t$u.npz" >/dev/null
  done
done
cd "$dir"
PYTHONPATH="$here" /usr/bin/python3 - <<'PY'
import numpy as np
from lapack import sytrd
eps = np.finfo(np.float32).eps
for t, low, wide in (('f32', 's', 'd'), ('c64', 'c', 'z')):
    a32 = np.load(t + '.npy')
    dt = a32.dtype.type
    for u, uplo in ((76, 'L'), (85, 'U')):
        o = np.load('%s%d.npz' % (t, u))
        n = a32.shape[1]
        # The reflectors' elements: below the subdiagonal (L) or above
        # the superdiagonal (U).
        r, c = np.indices((n, n))
        vmask = r > c + 1 if uplo == 'L' else c > r + 1
        for name in ('vkjit', 'LAPACK ' + low + ('hetrd' if low == 'c' else 'sytrd')):
            des, tes, ves = [], [], []
            for b in range(8):
                x = a32[b]
                if name == 'vkjit':
                    assert o['out4'][b] == 0
                    got = (o['out0'][b], o['out1'][b].astype(np.float64), o['out2'][b].astype(np.float64), o['out3'][b])
                else:
                    got = sytrd(x, low, dt, uplo)
                want = sytrd(x.astype(np.promote_types(dt, np.float64)), wide, np.promote_types(dt, np.float64), uplo)
                scale = max(np.abs(want[1]).max(), np.abs(want[2]).max())
                des.append(max(np.abs(got[1] - want[1]).max(), np.abs(got[2] - want[2]).max()) / scale / eps)
                tes.append(np.abs(got[3] - want[3]).max() / eps)
                ves.append(np.abs(got[0][vmask] - want[0][vmask]).max() / eps)
            print('%s %s 8x32x32 uplo %s: d, e %.1f ulp of max(|d|, |e|); tau %.1f ulp; reflectors %.1f ulp' % (
                name, t, uplo, max(des), max(tes), max(ves)))
PY
