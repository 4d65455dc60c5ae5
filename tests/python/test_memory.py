"""Memory round trips through hip-python against a hip-remote worker."""
import array
import ctypes

from hip import hip
from hiputil import hip_check


def test_round_trip_and_memset():
    n = 1 << 16
    host = array.array("f", [float(i) * 0.5 for i in range(n)])
    dev = hip_check(hip.hipMalloc(n * 4))
    hip_check(hip.hipMemcpy(dev, host, n * 4, hip.hipMemcpyKind.hipMemcpyHostToDevice))
    back = array.array("f", [0.0] * n)
    hip_check(hip.hipMemcpy(back, dev, n * 4, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
    assert back == host
    hip_check(hip.hipMemset(dev, 0x7F, n * 4))
    raw = (ctypes.c_ubyte * (n * 4))()
    hip_check(hip.hipMemcpy(raw, dev, n * 4, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
    assert all(b == 0x7F for b in raw)
    hip_check(hip.hipFree(dev))


def test_async_copy_on_stream():
    n = 4096
    stream = hip_check(hip.hipStreamCreate())
    host = (ctypes.c_int * n)(*range(n))
    out = (ctypes.c_int * n)()
    dev = hip_check(hip.hipMalloc(n * 4))
    hip_check(hip.hipMemcpyAsync(dev, host, n * 4, hip.hipMemcpyKind.hipMemcpyHostToDevice, stream))
    hip_check(hip.hipMemcpyAsync(out, dev, n * 4, hip.hipMemcpyKind.hipMemcpyDeviceToHost, stream))
    hip_check(hip.hipStreamSynchronize(stream))
    assert list(out) == list(range(n))
    hip_check(hip.hipFree(dev))
    hip_check(hip.hipStreamDestroy(stream))
