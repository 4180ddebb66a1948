# Inputs and expected outputs for graph.hlo, computed by NumPy in float32
# (independently of vkjit). Run with Debian's python3 (python3-numpy):
#   /usr/bin/python3 tests/testdata/elementwise/gen.py
import os
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261130)
x = rng.normal(size=(4, 250)).astype(np.float32) * np.float32(3)
y = rng.normal(size=(4, 250)).astype(np.float32)
y[np.abs(y) < 0.05] = 0.5  # keep the division well conditioned

d = (x * y + x) / y
# Keep the comparison away from ties, so that a last-place rounding
# difference in the division cannot flip it.
close = np.abs(d - x) <= 1e-4 * np.abs(x)
x[close] += 1
d = (x * y + x) / y
c = d > x
r = np.sqrt(np.abs(np.where(c, d, x)))
assert r.dtype == np.float32

np.save(os.path.join(here, "x.npy"), x)
np.save(os.path.join(here, "y.npy"), y)
np.save(os.path.join(here, "want_out0.npy"), r)
np.save(os.path.join(here, "want_out1.npy"), c)
