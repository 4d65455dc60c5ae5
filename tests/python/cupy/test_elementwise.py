"""Elementwise operations and reductions (CuPy compiles each with hiprtc at first use)."""
import cupy
import numpy as np

rng = np.random.default_rng(17)


def test_arithmetic_and_ufuncs():
    x = rng.standard_normal(10_000).astype(np.float32)
    y = rng.standard_normal(10_000).astype(np.float32)
    gx, gy = cupy.asarray(x), cupy.asarray(y)
    np.testing.assert_allclose((gx * 2 + gy).get(), x * 2 + y, rtol=1e-6)
    np.testing.assert_allclose(cupy.sqrt(cupy.abs(gx)).get(), np.sqrt(np.abs(x)), rtol=1e-6)
    np.testing.assert_allclose(cupy.exp(gx / 4).get(), np.exp(x / 4), rtol=1e-5)
    np.testing.assert_allclose(cupy.sin(gx).get(), np.sin(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(cupy.maximum(gx, gy).get(), np.maximum(x, y))
    np.testing.assert_array_equal((gx > gy).get(), x > y)


def test_broadcasting_and_mixed_dtypes():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    b = np.linspace(0, 1, 4)
    np.testing.assert_allclose((cupy.asarray(a) + cupy.asarray(b)).get(), a + b)
    np.testing.assert_array_equal((cupy.asarray(a) % 5).get(), a % 5)
    np.testing.assert_array_equal(cupy.asarray(a).astype(np.float16).get(), a.astype(np.float16))


def test_reductions_sum_mean_argmax():
    x = rng.standard_normal((64, 300)).astype(np.float64)
    g = cupy.asarray(x)
    np.testing.assert_allclose(float(cupy.sum(g)), x.sum(), rtol=1e-10)
    np.testing.assert_allclose(cupy.sum(g, axis=0).get(), x.sum(axis=0), rtol=1e-10)
    np.testing.assert_allclose(cupy.mean(g, axis=1).get(), x.mean(axis=1), rtol=1e-10)
    assert int(cupy.argmax(g)) == int(np.argmax(x))
    np.testing.assert_array_equal(cupy.argmax(g, axis=1).get(), np.argmax(x, axis=1))
    np.testing.assert_array_equal(cupy.argmin(g, axis=0).get(), np.argmin(x, axis=0))
    np.testing.assert_allclose(float(g.max()), x.max())
    np.testing.assert_allclose(float(cupy.std(g)), x.std(), rtol=1e-10)


def test_integer_reductions():
    x = rng.integers(-1000, 1000, size=100_003).astype(np.int64)
    g = cupy.asarray(x)
    assert int(g.sum()) == int(x.sum())
    assert int(g.min()) == int(x.min())
    assert int(cupy.count_nonzero(g > 0)) == int(np.count_nonzero(x > 0))
    np.testing.assert_array_equal(cupy.cumsum(g[:5000]).get(), np.cumsum(x[:5000]))


def test_complex_elementwise():
    z = (rng.standard_normal(512) + 1j * rng.standard_normal(512)).astype(np.complex64)
    g = cupy.asarray(z)
    np.testing.assert_allclose((g * g.conj()).real.get(), (z * z.conj()).real, rtol=1e-5)
    np.testing.assert_allclose(cupy.abs(g).get(), np.abs(z), rtol=1e-5)
