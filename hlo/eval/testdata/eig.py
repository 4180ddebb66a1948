# Writes eig.json: LAPACK's geev eigenvalues and right eigenvectors
# (through NumPy's np.linalg.eig) of random real matrices and of some
# with known structure, for hlo/eval's TestGeevAgainstLapack.
# Run: python3 eig.py > eig.json
import json
import numpy as np

rng = np.random.default_rng(20261205)
def enc(v):
    v = np.asarray(v)
    if np.iscomplexobj(v):
        return [[float(x.real), float(x.imag)] for x in v.ravel()]
    return [float(x) for x in v.ravel()]

mats = [rng.uniform(-1, 1, (n, n)) for n in (1, 2, 3, 5, 8, 17, 40)]
mats.append(np.array([[0.0, -1.0], [1.0, 0.0]]))  # a rotation: +-i
mats.append(np.triu(rng.uniform(-1, 1, (4, 4))))  # Schur form already
# The companion matrix of (x-1)(x-2)(x-3)(x^2+1): 1, 2, 3, +-i.
c = np.poly([1, 2, 3, 1j, -1j]).real
comp = np.zeros((5, 5))
comp[0, :] = -c[1:]
comp[1:, :-1] = np.eye(4)
mats.append(comp)
# Hessenberg with a zero subdiagonal element: splits at once.
h = np.triu(rng.uniform(-1, 1, (6, 6)), -1)
h[3, 2] = 0
mats.append(h)
# Badly scaled: D a D^-1 with D from 1e-6 to 1e6 (LAPACK balances it
# back), and a matrix of magnitudes 1e-30 (scaled before the QR).
d = np.diag([1e6, 1, 1e-6, 1, 1e3, 1e-3])
mats.append(d @ rng.uniform(-1, 1, (6, 6)) @ np.linalg.inv(d))
mats.append(rng.uniform(-1, 1, (5, 5)) * 1e-30)
# A Jordan block of order 25: one defective eigenvalue, whose vectors'
# substitution grows by 1/smin = 2^52 a row unless scaled (dtrevc3).
mats.append(np.eye(25) + np.diag(np.ones(24), 1))
# P B P^T, B block upper triangular with triangular corners of orders 2
# and 3 around a dense block of 3: gebal's permutation isolates the
# corners' diagonal (3, -1.5, 0.25, 7, 0.5), which LAPACK returns exactly.
b = np.triu(rng.uniform(-1, 1, (8, 8)))
b[2:5, 2:5] = rng.uniform(-1, 1, (3, 3))
b[[0, 1, 5, 6, 7], [0, 1, 5, 6, 7]] = [3, -1.5, 0.25, 7, 0.5]
p = rng.permutation(8)
mats.append(b[p][:, p])
cases = []
for a in mats:
    w, v = np.linalg.eig(a)  # LAPACK's geev
    cases.append({"n": a.shape[0], "a": enc(a), "w": enc(w.astype(complex)), "v": enc(v.astype(complex))})
print(json.dumps(cases, indent=0))
