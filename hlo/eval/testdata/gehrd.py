# Writes gehrd.json: LAPACK's dgehrd (low 1, high n) of random real
# matrices, through ctypes (NumPy has no gehrd), for hlo/eval's
# TestGehrdAgainstLapack: the Hessenberg form with the reflectors below
# its subdiagonal, and tau. Run: python3 gehrd.py > gehrd.json
import ctypes, ctypes.util, json
import numpy as np

lib = ctypes.CDLL(ctypes.util.find_library('openblas') or ctypes.util.find_library('lapack'))
rng = np.random.default_rng(20261206)
cases = []
for n in (1, 2, 3, 5, 8, 13):
    a = rng.uniform(-1, 1, (n, n))
    f = np.asfortranarray(a.copy())
    tau = np.zeros(max(n - 1, 1))
    lwork = 64 * n
    work, info = np.zeros(lwork), ctypes.c_int(0)
    i = lambda v: ctypes.byref(ctypes.c_int(v))
    lib.dgehrd_(i(n), i(1), i(n), f.ctypes.data_as(ctypes.c_void_p), i(n), tau.ctypes.data_as(ctypes.c_void_p),
                work.ctypes.data_as(ctypes.c_void_p), i(lwork), ctypes.byref(info))
    assert info.value == 0
    cases.append({"n": n, "a": [float(x) for x in a.ravel()], "h": [float(x) for x in np.ascontiguousarray(f).ravel()],
                  "tau": [float(x) for x in tau[:n - 1]]})
print(json.dumps(cases, indent=0))
