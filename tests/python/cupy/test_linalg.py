"""cupy.matmul / cupy.dot go through hipBLAS (libhipblas.so.3)."""
import cupy
import numpy as np
from conftest import needs_hipblas

rng = np.random.default_rng(3)


@needs_hipblas
def test_matmul_float32():
    a = rng.standard_normal((64, 48)).astype(np.float32)
    b = rng.standard_normal((48, 80)).astype(np.float32)
    np.testing.assert_allclose(cupy.matmul(cupy.asarray(a), cupy.asarray(b)).get(), a @ b, rtol=1e-4, atol=1e-4)


@needs_hipblas
def test_dot_float64_and_vectors():
    a = rng.standard_normal((33, 17))
    b = rng.standard_normal((17, 5))
    v = rng.standard_normal(17)
    np.testing.assert_allclose(cupy.dot(cupy.asarray(a), cupy.asarray(b)).get(), a @ b, rtol=1e-10)
    np.testing.assert_allclose(cupy.dot(cupy.asarray(a), cupy.asarray(v)).get(), a @ v, rtol=1e-10)
    np.testing.assert_allclose(float(cupy.dot(cupy.asarray(v), cupy.asarray(v))), v @ v, rtol=1e-10)


@needs_hipblas
def test_batched_matmul_complex():
    a = (rng.standard_normal((4, 8, 6)) + 1j * rng.standard_normal((4, 8, 6))).astype(np.complex64)
    b = (rng.standard_normal((4, 6, 3)) + 1j * rng.standard_normal((4, 6, 3))).astype(np.complex64)
    np.testing.assert_allclose((cupy.asarray(a) @ cupy.asarray(b)).get(), a @ b, rtol=1e-4, atol=1e-4)
