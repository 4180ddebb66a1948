# Writes svd.json: LAPACK's gesdd (through NumPy's np.linalg.svd) of
# random matrices, for hlo/eval's TestGesddAgainstLapack.
# Run: python3 svd.py > svd.json
import json
import numpy as np

rng = np.random.default_rng(20261205)
def enc(v):
    v = np.asarray(v)
    if np.iscomplexobj(v):
        return [[float(x.real), float(x.imag)] for x in v.ravel()]
    return [float(x) for x in v.ravel()]

cases = []
for m, n, cplx in ((5, 3, False), (3, 5, False), (4, 4, False), (4, 3, True), (2, 6, True)):
    a = rng.uniform(-1, 1, (m, n))
    if cplx:
        a = a + 1j * rng.uniform(-1, 1, (m, n))
    u, s, vh = np.linalg.svd(a, full_matrices=True)
    cases.append({"m": m, "n": n, "complex": cplx, "a": enc(a), "u": enc(u), "s": enc(s), "vh": enc(vh)})
print(json.dumps(cases, indent=0))
