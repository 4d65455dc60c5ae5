"""Two devices of one worker, as CuPy's multi-GPU tests use them (`cupy.testing.multi_gpu`:
CUPY_TEST_GPU_LIMIT=2): arrays made under `cupy.cuda.Device(i)`, copies between devices,
peer access and an elementwise kernel reading the other device's array, cuBLAS on device 1,
per-device streams and memory. Skipped where the worker serves fewer than two devices."""
import cupy
import numpy as np
import pytest
from cupy import testing

from conftest import needs_hipblas

DEVICES = cupy.cuda.runtime.getDeviceCount()
needs_two = pytest.mark.skipif(DEVICES < 2, reason=f"the worker serves {DEVICES} device(s); these tests need 2")


@needs_two
@testing.multi_gpu(2)
def test_arrays_live_on_the_device_they_were_made_on():
    host = np.arange(4096, dtype=np.int32)
    with cupy.cuda.Device(0):
        a = cupy.asarray(host)
    with cupy.cuda.Device(1):
        b = cupy.asarray(host * 3)
        assert cupy.cuda.runtime.getDevice() == 1
    assert a.device.id == 0 and b.device.id == 1
    np.testing.assert_array_equal(a.get(), host)
    np.testing.assert_array_equal(b.get(), host * 3)
    assert cupy.cuda.runtime.getDevice() == 0


@needs_two
@testing.multi_gpu(2)
def test_copies_between_devices_both_ways():
    host = np.random.default_rng(7).standard_normal(1 << 20).astype(np.float32)
    with cupy.cuda.Device(0):
        a = cupy.asarray(host)
    with cupy.cuda.Device(1):
        b = a.copy()  # device 0 -> device 1
        assert b.device.id == 1
        b *= 2
    with cupy.cuda.Device(0):
        c = cupy.empty_like(a)
        c.set(b.get())
        d = b.copy()  # device 1 -> device 0
        assert d.device.id == 0
    np.testing.assert_array_equal(d.get(), host * 2)
    np.testing.assert_array_equal(c.get(), d.get())
    # The source on device 0 is unchanged.
    np.testing.assert_array_equal(a.get(), host)


@needs_two
@testing.multi_gpu(2)
def test_kernel_reads_the_other_devices_array_after_peer_access():
    assert cupy.cuda.runtime.deviceCanAccessPeer(0, 1) == 1
    host = np.arange(1 << 16, dtype=np.float32)
    with cupy.cuda.Device(1):
        on1 = cupy.asarray(host)
    with cupy.cuda.Device(0):
        try:
            cupy.cuda.runtime.deviceEnablePeerAccess(1)
        except cupy.cuda.runtime.CUDARuntimeError as e:
            if "AlreadyEnabled" not in str(e):
                raise
        on0 = cupy.full(host.shape, 0.5, dtype=np.float32)
        total = on0 + on1  # an elementwise kernel on device 0 reading device 1's memory
        assert total.device.id == 0
        np.testing.assert_array_equal(total.get(), host + 0.5)


@needs_two
@needs_hipblas
@testing.multi_gpu(2)
def test_matmul_on_device_1():
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((128, 64)).astype(np.float32), rng.standard_normal((64, 32)).astype(np.float32)
    with cupy.cuda.Device(1):
        z = cupy.asarray(x) @ cupy.asarray(y)
        assert z.device.id == 1
        np.testing.assert_allclose(z.get(), x @ y, rtol=1e-4, atol=1e-4)


@needs_two
@testing.multi_gpu(2)
def test_streams_and_memory_per_device():
    results = []
    for dev in (0, 1):
        with cupy.cuda.Device(dev):
            free, total = cupy.cuda.Device(dev).mem_info
            assert 0 < free <= total
            stream = cupy.cuda.Stream(non_blocking=True)
            with stream:
                x = cupy.arange(1 << 18, dtype=np.float64) * (dev + 1)
                s = x.sum()
            stream.synchronize()
            results.append(float(s))
            cupy.cuda.Device(dev).synchronize()
    n = 1 << 18
    assert results == [n * (n - 1) / 2, n * (n - 1)]
