# Writes the .npy fixtures of npy_test.go with NumPy itself, so that the
# reader is tested against files NumPy wrote. Run with Debian's python3
# (python3-numpy): /usr/bin/python3 testdata/npy/gen.py
import os
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
def save(name, arr):
    np.save(os.path.join(here, name), arr)

save("f32_2x3.npy", np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5)
save("f64_fortran_2x3.npy", np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3)))
save("bool_4.npy", np.array([True, False, False, True]))
save("u16_3.npy", np.array([0x3f80, 0x4000, 0xc040], dtype=np.uint16))  # bf16 bits of 1, 2, -3
save("s32_scalar.npy", np.array(-7, dtype=np.int32))
save("f32_bigendian.npy", np.array([1, 2], dtype=">f4"))
save("f32_empty_0x4.npy", np.zeros((0, 4), dtype=np.float32))
