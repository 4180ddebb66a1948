# Writes geqp3.json: LAPACK's dgeqp3 and zgeqp3 (QR with column
# pivoting) through ctypes, for hlo/eval's TestGeqp3AgainstLapack: tall,
# wide and square random matrices, rank-deficient ones (repeated and
# zero columns) and initial pivots that fix columns; r with the
# reflectors below it, jpvt (1-based) and tau. A rank-deficient matrix's
# reflectors past its rank are made of roundoff (LAPACK's happen to
# cancel to zero): "rank" says where they start.
# Run: python3 geqp3.py > geqp3.json
import ctypes, ctypes.util, json
import numpy as np

lib = ctypes.CDLL(ctypes.util.find_library('openblas') or ctypes.util.find_library('lapack'))
rng = np.random.default_rng(20261206)
i = lambda v: ctypes.byref(ctypes.c_int(v))
p = lambda v: v.ctypes.data_as(ctypes.c_void_p)
enc = lambda v: [[float(x.real), float(x.imag)] for x in np.asarray(v, dtype=complex).ravel()]
cases = []
def case(a, jpvt, rank=None):
    m, n = a.shape
    cplx = np.iscomplexobj(a)
    f = np.asfortranarray(a.copy())
    jp = np.array(jpvt, dtype=np.int32)
    k = min(m, n)
    tau = np.zeros(max(k, 1), dtype=a.dtype)
    lwork = 64 * (n + 1)
    work, info = np.zeros(lwork, dtype=a.dtype), ctypes.c_int(0)
    if cplx:
        rwork = np.zeros(2 * n)
        lib.zgeqp3_(i(m), i(n), p(f), i(m), p(jp), p(tau), p(work), i(lwork), p(rwork), ctypes.byref(info))
    else:
        lib.dgeqp3_(i(m), i(n), p(f), i(m), p(jp), p(tau), p(work), i(lwork), ctypes.byref(info))
    assert info.value == 0
    cases.append({"m": m, "n": n, "rank": rank or k, "complex": cplx, "a": enc(a), "jpvt_in": [int(x) for x in jpvt],
                  "r": enc(np.ascontiguousarray(f)), "jpvt": [int(x) for x in jp], "tau": enc(tau[:k])})
for cplx in (False, True):
    def rand(m, n):
        x = rng.uniform(-1, 1, (m, n))
        return x + 1j * rng.uniform(-1, 1, (m, n)) if cplx else x
    for m, n in ((1, 1), (3, 3), (6, 4), (4, 6), (9, 9), (13, 5)):
        case(rand(m, n), [0] * n)
    x = rand(7, 5)
    x[:, 3] = x[:, 1]  # a repeated column
    x[:, 4] = 0        # and a zero one: rank 3
    case(x, [0] * 5, rank=3)
    case(rand(6, 5), [0, 1, 0, 0, 1])   # columns 2 and 5 fixed
    case(rand(3, 6), [0, 0, 0, 1, 1, 1])  # as many fixed columns as rows
    case(rand(3, 6), [1, 0, 1, 1, 0, 1])  # more
print(json.dumps(cases, indent=0))
