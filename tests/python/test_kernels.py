"""Kernels through hip-python: hiprtc compiled on the worker, launched with `extra` and with
`kernelParams`, results checked numerically (the way hip-python's documentation shows)."""
import array
import ctypes

from hip import hip, hiprtc
from hiputil import hip_check

VADD = b"""
extern "C" __global__ void vadd(const float* a, const float* b, float* out, int n, float scale) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (a[i] + b[i]) * scale;
}
"""


def compile_module(source, name):
    prog = hip_check(hiprtc.hiprtcCreateProgram(source, name, 0, [], []))
    props = hip_check(hip.hipGetDeviceProperties(0))
    arch = props.gcnArchName
    arch = arch.encode() if isinstance(arch, str) else arch
    cflags = [b"--offload-arch=" + arch, b"-O3"]
    err, = hiprtc.hiprtcCompileProgram(prog, len(cflags), cflags)
    if err != hiprtc.hiprtcResult.HIPRTC_SUCCESS:
        log_size = hip_check(hiprtc.hiprtcGetProgramLogSize(prog))
        log = bytearray(log_size)
        hip_check(hiprtc.hiprtcGetProgramLog(prog, log))
        raise RuntimeError(log.decode())
    code_size = hip_check(hiprtc.hiprtcGetCodeSize(prog))
    code = bytearray(code_size)
    hip_check(hiprtc.hiprtcGetCode(prog, code))
    hip_check(hiprtc.hiprtcDestroyProgram(prog.createRef()))
    return hip_check(hip.hipModuleLoadData(code))


def device_buffers(n):
    a = array.array("f", [float(i) for i in range(n)])
    b = array.array("f", [2.0 * i for i in range(n)])
    da = hip_check(hip.hipMalloc(n * 4))
    db = hip_check(hip.hipMalloc(n * 4))
    dout = hip_check(hip.hipMalloc(n * 4))
    hip_check(hip.hipMemcpy(da, a, n * 4, hip.hipMemcpyKind.hipMemcpyHostToDevice))
    hip_check(hip.hipMemcpy(db, b, n * 4, hip.hipMemcpyKind.hipMemcpyHostToDevice))
    return a, b, da, db, dout


def test_hiprtc_vector_add_with_extra():
    n = 1000
    module = compile_module(VADD, b"vadd.hip")
    kernel = hip_check(hip.hipModuleGetFunction(module, b"vadd"))
    a, b, da, db, dout = device_buffers(n)
    block = hip.dim3(x=128)
    grid = hip.dim3(x=(n + 127) // 128)
    hip_check(hip.hipModuleLaunchKernel(
        kernel, *grid, *block, sharedMemBytes=0, stream=None, kernelParams=None,
        extra=(da, db, dout, ctypes.c_int(n), ctypes.c_float(0.5)),
    ))
    hip_check(hip.hipDeviceSynchronize())
    out = array.array("f", [0.0] * n)
    hip_check(hip.hipMemcpy(out, dout, n * 4, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
    assert all(abs(out[i] - (a[i] + b[i]) * 0.5) < 1e-5 for i in range(n))
    for d in (da, db, dout):
        hip_check(hip.hipFree(d))
    hip_check(hip.hipModuleUnload(module))


def test_module_launch_with_kernel_params():
    n = 777
    module = compile_module(VADD, b"vadd2.hip")
    kernel = hip_check(hip.hipModuleGetFunction(module, b"vadd"))
    a, b, da, db, dout = device_buffers(n)
    n_arg = ctypes.c_int(n)
    scale = ctypes.c_float(3.0)
    ptrs = [ctypes.c_void_p(int(d)) for d in (da, db, dout)]
    params = (ctypes.c_void_p * 5)(*[ctypes.addressof(p) for p in ptrs], ctypes.addressof(n_arg), ctypes.addressof(scale))
    hip_check(hip.hipModuleLaunchKernel(kernel, (n + 63) // 64, 1, 1, 64, 1, 1, 0, None, params, None))
    hip_check(hip.hipDeviceSynchronize())
    out = array.array("f", [0.0] * n)
    hip_check(hip.hipMemcpy(out, dout, n * 4, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
    assert all(abs(out[i] - (a[i] + b[i]) * 3.0) < 1e-4 for i in range(n))
    for d in (da, db, dout):
        hip_check(hip.hipFree(d))
    hip_check(hip.hipModuleUnload(module))


def test_compile_error_returns_the_log():
    prog = hip_check(hiprtc.hiprtcCreateProgram(b"extern \"C\" __global__ void broken( { }", b"broken.hip", 0, [], []))
    err, = hiprtc.hiprtcCompileProgram(prog, 0, [])
    assert err == hiprtc.hiprtcResult.HIPRTC_ERROR_COMPILATION
    log_size = hip_check(hiprtc.hiprtcGetProgramLogSize(prog))
    log = bytearray(log_size)
    hip_check(hiprtc.hiprtcGetProgramLog(prog, log))
    assert b"error" in log
