"""Helpers shared by the hip-python client tests (written the way hip-python's docs show)."""
from hip import hip


def hip_check(call_result):
    """Unwraps a hip-python result tuple, raising on any error code (as in hip-python's examples)."""
    err = call_result[0] if isinstance(call_result, tuple) else call_result
    if isinstance(err, hip.hipError_t) and err != hip.hipError_t.hipSuccess:
        raise RuntimeError(str(err))
    try:
        from hip import hiprtc
        if isinstance(err, hiprtc.hiprtcResult) and err != hiprtc.hiprtcResult.HIPRTC_SUCCESS:
            raise RuntimeError(str(err))
    except ImportError:
        pass
    result = call_result[1:] if isinstance(call_result, tuple) else ()
    if len(result) == 1:
        return result[0]
    return result or None
