# Generates fft.npz: inputs and NumPy's (pocketfft's) float64 results for
# TestFFTAccuracy. Run from the repository root with
#   /usr/bin/python3 testdata/fft/gen.py
import numpy as np

rng = np.random.default_rng(20261201)
cases = {
    # name: (fft_type, input dtype, input shape, fft_length)
    "fft_c64_3x12": ("FFT", np.complex64, (3, 12), (12,)),
    "fft_c64_5x7_2d": ("FFT", np.complex64, (5, 7), (5, 7)),
    "fft_c128_4x10": ("FFT", np.complex128, (4, 10), (10,)),
    "ifft_c64_6x8x3_2d": ("IFFT", np.complex64, (6, 8, 3), (8, 3)),
    "fft_c64_2x64": ("FFT", np.complex64, (2, 64), (64,)),
    "fft_c64_3x4x5x6_3d": ("FFT", np.complex64, (3, 4, 5, 6), (4, 5, 6)),
    "rfft_f32_2x16": ("RFFT", np.float32, (2, 16), (16,)),
    "rfft_f32_9": ("RFFT", np.float32, (9,), (9,)),
    "rfft_f64_3x6x10_2d": ("RFFT", np.float64, (3, 6, 10), (6, 10)),
    "irfft_c64_2x9_16": ("IRFFT", np.complex64, (2, 9), (16,)),
    "irfft_c128_3x5_9": ("IRFFT", np.complex128, (3, 5), (9,)),
    "irfft_c64_4x6x4_2d_6": ("IRFFT", np.complex64, (4, 6, 4), (6, 6)),
    # long enough to be split into shorter transforms (lower/fft.go fourStep)
    "fft_c64_4x256": ("FFT", np.complex64, (4, 256), (256,)),
    "ifft_c128_2x1000": ("IFFT", np.complex128, (2, 1000), (1000,)),
    "fft_c64_2x4096": ("FFT", np.complex64, (2, 4096), (4096,)),
    "rfft_f32_64x48_2d": ("RFFT", np.float32, (64, 48), (64, 48)),
}
out = {}
for name, (kind, dt, shape, length) in cases.items():
    x = rng.uniform(-1, 1, shape)
    if np.issubdtype(dt, np.complexfloating):
        x = x + 1j * rng.uniform(-1, 1, shape)
    x = x.astype(dt)
    axes = tuple(range(len(shape) - len(length), len(shape)))
    x64 = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    if kind == "FFT":
        y = np.fft.fftn(x64, s=length, axes=axes)
    elif kind == "IFFT":
        y = np.fft.ifftn(x64, s=length, axes=axes)
    elif kind == "RFFT":
        y = np.fft.rfftn(x64, s=length, axes=axes)
    else:
        y = np.fft.irfftn(x64, s=length, axes=axes)
    out[name + "_x"] = x
    out[name + "_y"] = y
np.savez("testdata/fft/fft.npz", **out)
