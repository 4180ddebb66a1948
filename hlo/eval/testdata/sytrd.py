# Writes sytrd.json: LAPACK's dsytrd and zhetrd of random symmetric
# (Hermitian) matrices given by one triangle, both triangles, through
# ctypes (NumPy has no sytrd), for hlo/eval's TestSytrdAgainstLapack:
# the matrix with the tridiagonal form and the reflectors in the read
# triangle, d, e and tau. Run: python3 sytrd.py > sytrd.json
import ctypes, ctypes.util, json
import numpy as np

lib = ctypes.CDLL(ctypes.util.find_library('openblas') or ctypes.util.find_library('lapack'))
rng = np.random.default_rng(20261206)
i = lambda v: ctypes.byref(ctypes.c_int(v))
p = lambda v: v.ctypes.data_as(ctypes.c_void_p)
enc = lambda v: [[float(x.real), float(x.imag)] for x in np.asarray(v, dtype=complex).ravel()]
cases = []
for cplx in (False, True):
    for uplo in ('L', 'U'):
        for n in (1, 2, 3, 5, 8, 13):
            a = rng.uniform(-1, 1, (n, n))
            if cplx:
                a = a + 1j * rng.uniform(-1, 1, (n, n))
            f = np.asfortranarray(a.copy())
            d, e = np.zeros(n), np.zeros(max(n - 1, 1))
            tau = np.zeros(max(n - 1, 1), dtype=a.dtype)
            lwork = 64 * n
            work, info = np.zeros(lwork, dtype=a.dtype), ctypes.c_int(0)
            fn = lib.zhetrd_ if cplx else lib.dsytrd_
            fn(ctypes.c_char_p(uplo.encode()), i(n), p(f), i(n), p(d), p(e), p(tau), p(work), i(lwork), ctypes.byref(info))
            assert info.value == 0
            cases.append({"n": n, "complex": cplx, "lower": uplo == 'L', "a": enc(a), "t": enc(np.ascontiguousarray(f)),
                          "d": enc(d), "e": enc(e[:n - 1]), "tau": enc(tau[:n - 1])})
print(json.dumps(cases, indent=0))
