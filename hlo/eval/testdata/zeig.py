# Writes zeig.json: LAPACK's complex eigenproblems for hlo/eval's
# TestGeevComplexAgainstLapack and TestGehrdComplexAgainstLapack:
# zgeev's eigenvalues and right eigenvectors (through NumPy's
# np.linalg.eig of complex128 matrices) of random complex matrices and
# some with known structure, and zgehrd (low 1, high n) through ctypes
# (NumPy has no gehrd). Run: /usr/bin/python3 zeig.py > zeig.json
import ctypes, ctypes.util, json
import numpy as np

rng = np.random.default_rng(20261207)
def enc(v):
    return [[float(x.real), float(x.imag)] for x in np.asarray(v, dtype=complex).ravel()]
def crand(n):
    return rng.uniform(-1, 1, (n, n)) + 1j * rng.uniform(-1, 1, (n, n))

mats = [crand(n) for n in (1, 2, 3, 5, 8, 17, 30)]
mats.append(np.arange(16.0).reshape(4, 4).astype(complex))  # real, rank 2
h = crand(6)
mats.append(h + h.conj().T)  # Hermitian: real eigenvalues
mats.append(np.triu(crand(5)))  # Schur form already
# A cyclic permutation: the roots of unity, every vector's elements
# of one magnitude (ties for the largest).
mats.append(np.roll(np.eye(5), 1, axis=0).astype(complex))
# Badly scaled (LAPACK balances it back) and tiny (scaled first).
d = np.diag([1e6, 1, 1e-6, 1, 1e3, 1e-3])
mats.append(d @ crand(6) @ np.linalg.inv(d))
mats.append(crand(5) * 1e-30)
# A Jordan block of order 12 at 1 + i: defective.
mats.append((1 + 1j) * np.eye(12) + np.diag(np.ones(11), 1))
# P B P^T, B block upper triangular with triangular corners of orders 2
# and 3 around a dense block of 3, the case gebal's permutation
# isolates; from a generator of its own, so the gehrd cases stay.
prng = np.random.default_rng(20261205)
b = np.triu(prng.uniform(-1, 1, (8, 8)) + 1j * prng.uniform(-1, 1, (8, 8)))
b[2:5, 2:5] = prng.uniform(-1, 1, (3, 3)) + 1j * prng.uniform(-1, 1, (3, 3))
b[[0, 1, 5, 6, 7], [0, 1, 5, 6, 7]] = [3, -1.5j, 0.25 + 1j, 7, 0.5]
p = prng.permutation(8)
mats.append(b[p][:, p])
eig = []
for a in mats:
    w, v = np.linalg.eig(a)  # LAPACK's zgeev
    eig.append({"n": a.shape[0], "a": enc(a), "w": enc(w), "v": enc(v)})

lib = ctypes.CDLL(ctypes.util.find_library('openblas') or ctypes.util.find_library('lapack'))
gehrd = []
for n in (1, 2, 3, 5, 8, 13):
    a = crand(n)
    f = np.asfortranarray(a.copy())
    tau = np.zeros(max(n - 1, 1), dtype=complex)
    lwork = 64 * n
    work, info = np.zeros(lwork, dtype=complex), ctypes.c_int(0)
    i = lambda v: ctypes.byref(ctypes.c_int(v))
    lib.zgehrd_(i(n), i(1), i(n), f.ctypes.data_as(ctypes.c_void_p), i(n), tau.ctypes.data_as(ctypes.c_void_p),
                work.ctypes.data_as(ctypes.c_void_p), i(lwork), ctypes.byref(info))
    assert info.value == 0
    gehrd.append({"n": n, "a": enc(a), "h": enc(np.ascontiguousarray(f)), "tau": enc(tau[:n - 1])})
print(json.dumps({"eig": eig, "gehrd": gehrd}, indent=0))
