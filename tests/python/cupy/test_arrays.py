"""Array creation and copies, as CuPy's user guide shows them (Basics of CuPy)."""
import cupy
import numpy as np


def test_asarray_and_get_round_trip():
    host = np.arange(1 << 16, dtype=np.float32) * 0.5
    dev = cupy.asarray(host)
    assert isinstance(dev, cupy.ndarray)
    assert dev.shape == host.shape and dev.dtype == host.dtype
    np.testing.assert_array_equal(dev.get(), host)
    np.testing.assert_array_equal(cupy.asnumpy(dev), host)


def test_array_from_list_and_2d_copy():
    x_gpu = cupy.array([[1, 2, 3], [4, 5, 6]], dtype=np.int64)
    np.testing.assert_array_equal(x_gpu.get(), np.array([[1, 2, 3], [4, 5, 6]]))
    # A strided (non-contiguous) view copied back: CuPy makes it contiguous on the device.
    np.testing.assert_array_equal(cupy.asnumpy(x_gpu.T), np.array([[1, 4], [2, 5], [3, 6]]))


def test_creation_routines_match_numpy():
    np.testing.assert_array_equal(cupy.zeros((3, 4), np.float64).get(), np.zeros((3, 4)))
    np.testing.assert_array_equal(cupy.ones(7, np.int32).get(), np.ones(7, np.int32))
    np.testing.assert_array_equal(cupy.full(5, 2.5).get(), np.full(5, 2.5))
    np.testing.assert_array_equal(cupy.arange(3, 40, 3).get(), np.arange(3, 40, 3))
    np.testing.assert_allclose(cupy.linspace(0, 1, 11).get(), np.linspace(0, 1, 11))
    np.testing.assert_array_equal(cupy.eye(4).get(), np.eye(4))


def test_device_to_device_copy_and_set():
    a = cupy.asarray(np.arange(100, dtype=np.int32))
    b = a.copy()
    a[:] = 0  # the copy must not alias a
    np.testing.assert_array_equal(b.get(), np.arange(100))
    assert int(a.sum()) == 0
    out = np.empty(100, dtype=np.int32)
    b.get(out=out)
    np.testing.assert_array_equal(out, np.arange(100))
    c = cupy.empty_like(b)
    c.set(np.arange(100, 200, dtype=np.int32))
    np.testing.assert_array_equal(c.get(), np.arange(100, 200))


def test_indexing_and_reshape():
    host = np.arange(60, dtype=np.float64).reshape(3, 4, 5)
    dev = cupy.asarray(host)
    np.testing.assert_array_equal(dev[1, :, ::2].get(), host[1, :, ::2])
    np.testing.assert_array_equal(dev.reshape(12, 5)[3:7].get(), host.reshape(12, 5)[3:7])
    np.testing.assert_array_equal(cupy.transpose(dev, (2, 0, 1)).get(), np.transpose(host, (2, 0, 1)))
    idx = cupy.asarray(np.array([2, 0, 1]))
    np.testing.assert_array_equal(dev[idx].get(), host[[2, 0, 1]])


def test_device_properties():
    props = cupy.cuda.runtime.getDeviceProperties(0)
    assert cupy.cuda.runtime.is_hip
    assert cupy.cuda.runtime.getDeviceCount() >= 1
    assert props["totalGlobalMem"] > 0
    free, total = cupy.cuda.runtime.memGetInfo()
    assert 0 < free <= total
