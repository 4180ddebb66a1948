# Writes eigh.json: LAPACK's syevd and heevd eigenvalues and eigenvectors
# (through NumPy's np.linalg.eigh) of random symmetric and Hermitian
# matrices, for hlo/eval's
# TestSyevdAgainstLapack. Run: python3 eigh.py > eigh.json
import json
import numpy as np

rng = np.random.default_rng(20261204)
cases = []
def enc(v):
    v = np.asarray(v)
    if np.iscomplexobj(v):
        return [[float(x.real), float(x.imag)] for x in v.ravel()]
    return [float(x) for x in v.ravel()]

for n, cplx in ((1, False), (2, False), (5, False), (8, False), (2, True), (6, True)):
    m = rng.uniform(-1, 1, (n, n))
    if cplx:
        m = m + 1j * rng.uniform(-1, 1, (n, n))
    a = m + m.conj().T
    w, v = np.linalg.eigh(a)  # LAPACK's syevd / heevd
    cases.append({"n": n, "complex": cplx, "a": enc(a), "w": enc(w), "v": enc(v)})
print(json.dumps(cases, indent=0))
