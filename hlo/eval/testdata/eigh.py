# Writes eigh.json: LAPACK's syevd eigenvalues and eigenvectors (through
# NumPy's np.linalg.eigh) of random symmetric matrices, for hlo/eval's
# TestSyevdAgainstLapack. Run: python3 eigh.py > eigh.json
import json
import numpy as np

rng = np.random.default_rng(20261204)
cases = []
for n in (1, 2, 5, 8):
    m = rng.uniform(-1, 1, (n, n))
    a = m + m.T
    w, v = np.linalg.eigh(a)
    cases.append({"n": n, "a": [float(x) for x in a.ravel()], "w": [float(x) for x in w], "v": [float(x) for x in v.ravel()]})
print(json.dumps(cases, indent=0))
