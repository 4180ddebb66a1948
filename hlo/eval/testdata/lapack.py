# Writes lapack.json: LAPACK's own geqrf (h, tau), Q (orgqr/ungqr) and
# potrf results, through NumPy, for hlo/eval's TestLapackAgainstNumPy.
# Run: python3 lapack.py > lapack.json (NumPy links LAPACK: OpenBLAS).
import json
import numpy as np

rng = np.random.default_rng(20261202)
cases = []
for m, n, cplx in [(5, 3, False), (3, 5, False), (4, 4, False), (4, 3, True), (3, 3, True)]:
    a = rng.uniform(-1, 1, (m, n))
    if cplx:
        a = a + 1j * rng.uniform(-1, 1, (m, n))
    a[1, 0] = 0  # a zero below a pivot
    h, tau = np.linalg.qr(a, mode="raw")  # h is LAPACK's array, transposed
    case = {"m": m, "n": n, "complex": cplx, "a": a, "h": h.T, "tau": tau}
    if m >= n:
        case["q"] = np.linalg.qr(a, mode="reduced")[0]
    cases.append(case)

def enc(v):
    v = np.asarray(v)
    if np.iscomplexobj(v):
        return [[float(x.real), float(x.imag)] for x in v.ravel()]
    if v.dtype == bool:
        return v
    return [float(x) for x in v.ravel()]

print(json.dumps([{k: (enc(v) if isinstance(v, np.ndarray) else v) for k, v in c.items()} for c in cases], indent=0))
