"""What bench/accuracy/geev.sh and zgeev.sh share: LAPACK through ctypes
and the errors both measure, for real and complex matrices alike (the
conjugate transpose of a real matrix is its transpose)."""
import ctypes
import ctypes.util

import numpy as np

lib = ctypes.CDLL(ctypes.util.find_library('openblas') or ctypes.util.find_library('lapack'))


def i(v):
    return ctypes.byref(ctypes.c_int(v))


def p(v):
    return v.ctypes.data_as(ctypes.c_void_p)


def eig_errors(w, vl, vr, a, eps):
    """Eigenvalues' distances to NumPy's (LAPACK's xgeev in float64 or
    complex128) and the right and left residuals, in ulps of max|w|."""
    wn = np.linalg.eigvals(a)
    scale = np.abs(wn).max() * eps
    ew = [np.abs(wn - x).min() / scale for x in w]
    rr = np.abs(a @ vr - vr * w).max() / scale
    rl = np.abs(vl.conj().T @ a - vl.conj().T * w[:, None]).max() / scale
    return ew, rr, rl


def schur_errors(t, z, a, eps):
    """|a - Z T Z^H| in ulps of |a|_2 and |Z^H Z - I| in ulps."""
    scale = np.linalg.norm(a, 2) * eps
    return (np.abs(a - z @ t @ z.conj().T).max() / scale,
            np.abs(z.conj().T @ z - np.eye(a.shape[0])).max() / eps)


def gehrd(x, letter, dt):
    """LAPACK's xgehrd of x in dtype dt (letter s, d, c or z): h with the
    reflectors below it, and tau, widened to float64 or complex128."""
    n = x.shape[0]
    f = np.asfortranarray(x.astype(dt))
    tau = np.zeros(n - 1, dt)
    lwork = 64 * n
    work, info = np.zeros(lwork, dt), ctypes.c_int(0)
    getattr(lib, letter + 'gehrd_')(i(n), i(1), i(n), p(f), i(n), p(tau), p(work), i(lwork), ctypes.byref(info))
    wide = np.promote_types(dt, np.float64)
    return np.ascontiguousarray(f).astype(wide), tau.astype(wide)


def gehrd_errors(h, tau, x, wide_letter, eps):
    """h and tau against the float64 (complex128) xgehrd of x: h in ulps
    of max|h|, tau in ulps."""
    hw, tw = gehrd(x.astype(np.promote_types(x.dtype, np.float64)), wide_letter, np.promote_types(x.dtype, np.float64))
    return np.abs(h - hw).max() / np.abs(hw).max() / eps, np.abs(tau - tw).max() / eps


def sytrd(x, letter, dt, uplo):
    """LAPACK's xsytrd (xhetrd for complex letters c, z) of x in dtype
    dt, its uplo ('L' or 'U') triangle read: (a, d, e, tau), widened to
    float64 or complex128."""
    n = x.shape[0]
    f = np.asfortranarray(x.astype(dt))
    rt = np.float32 if dt in (np.float32, np.complex64) else np.float64
    d, e, tau = np.zeros(n, rt), np.zeros(max(n - 1, 1), rt), np.zeros(max(n - 1, 1), dt)
    lwork = 64 * n
    work, info = np.zeros(lwork, dt), ctypes.c_int(0)
    name = letter + ('hetrd_' if letter in 'cz' else 'sytrd_')
    getattr(lib, name)(ctypes.c_char_p(uplo.encode()), i(n), p(f), i(n), p(d), p(e), p(tau), p(work), i(lwork), ctypes.byref(info))
    assert info.value == 0
    wide = np.promote_types(dt, np.float64)
    return (np.ascontiguousarray(f).astype(wide), d.astype(np.float64), e[:n - 1].astype(np.float64),
            tau[:n - 1].astype(wide))


def geqp3(x, letter, dt):
    """LAPACK's xgeqp3 of x in dtype dt, no column fixed: (r with the
    reflectors below it, jpvt 1-based, tau), widened to float64 or
    complex128."""
    m, n = x.shape
    f = np.asfortranarray(x.astype(dt))
    jp = np.zeros(n, np.int32)
    tau = np.zeros(min(m, n), dt)
    lwork = 64 * (n + 1)
    work, info = np.zeros(lwork, dt), ctypes.c_int(0)
    args = [i(m), i(n), p(f), i(m), p(jp), p(tau), p(work), i(lwork)]
    if letter in 'cz':
        args.append(p(np.zeros(2 * n, np.float32 if letter == 'c' else np.float64)))
    getattr(lib, letter + 'geqp3_')(*args, ctypes.byref(info))
    assert info.value == 0
    wide = np.promote_types(dt, np.float64)
    return np.ascontiguousarray(f).astype(wide), jp, tau.astype(wide)
