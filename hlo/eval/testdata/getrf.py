# Writes getrf.json: LAPACK's own getrf (lu, ipiv 1-based, info), called
# through ctypes from the LAPACK NumPy links (OpenBLAS), for hlo/eval's
# TestGetrfAgainstLapack. Run: python3 getrf.py > getrf.json
import ctypes
import ctypes.util
import json
import numpy as np

lib = None
for name in ("openblas", "lapack"):
    path = ctypes.util.find_library(name)
    if path:
        try:
            lib = ctypes.CDLL(path)
            lib.dgetrf_
            break
        except (OSError, AttributeError):
            lib = None

def getrf(a, complex_):
    m, n = a.shape
    f = np.asfortranarray(a.astype(np.complex128 if complex_ else np.float64))
    ipiv = np.zeros(min(m, n), dtype=np.int32)
    info = ctypes.c_int(0)
    mm, nn = ctypes.c_int(m), ctypes.c_int(n)
    fn = lib.zgetrf_ if complex_ else lib.dgetrf_
    fn(ctypes.byref(mm), ctypes.byref(nn), f.ctypes.data_as(ctypes.c_void_p), ctypes.byref(mm),
       ipiv.ctypes.data_as(ctypes.c_void_p), ctypes.byref(info))
    return np.ascontiguousarray(f), ipiv, info.value

rng = np.random.default_rng(20261203)
cases = []
for m, n, cplx, singular in [(5, 5, False, False), (6, 4, False, False), (4, 6, False, False), (5, 5, False, True), (4, 4, True, False)]:
    a = rng.uniform(-1, 1, (m, n))
    if cplx:
        a = a + 1j * rng.uniform(-1, 1, (m, n))
    if singular:
        a[:, 2] = 0  # a zero column: info 3
    lu, ipiv, info = getrf(a, cplx)
    cases.append({"m": m, "n": n, "complex": cplx, "a": a, "lu": lu, "ipiv": [int(x) for x in ipiv], "info": info})

def enc(v):
    v = np.asarray(v)
    if np.iscomplexobj(v):
        return [[float(x.real), float(x.imag)] for x in v.ravel()]
    return [float(x) for x in v.ravel()]

print(json.dumps([{k: (enc(v) if isinstance(v, np.ndarray) else v) for k, v in c.items()} for c in cases], indent=0))
