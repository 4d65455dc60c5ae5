"""Device queries through hip-python against a hip-remote worker."""
from hip import hip
from hiputil import hip_check


def test_device_count_and_properties():
    count = hip_check(hip.hipGetDeviceCount())
    assert count >= 1
    props = hip_check(hip.hipGetDeviceProperties(0))
    assert props.totalGlobalMem > 0
    assert props.warpSize in (32, 64)
    assert len(props.name) > 0
    assert props.multiProcessorCount > 0
    warp = hip_check(hip.hipDeviceGetAttribute(hip.hipDeviceAttribute_t.hipDeviceAttributeWarpSize, 0))
    assert warp == props.warpSize


def test_versions_and_memory_info():
    assert hip_check(hip.hipRuntimeGetVersion()) >= 70000000
    assert hip_check(hip.hipDriverGetVersion()) > 0
    free, total = hip_check(hip.hipMemGetInfo())
    assert 0 < free <= total


def test_errors_are_reported():
    err = hip.hipSetDevice(1000)[0] if isinstance(hip.hipSetDevice(1000), tuple) else hip.hipSetDevice(1000)
    assert err == hip.hipError_t.hipErrorInvalidDevice
