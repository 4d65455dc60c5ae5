"""CuPy for ROCm (cupy-rocm-7-0) against hip-remote: shared setup.

scripts/cupy-test.sh runs these with ROCM_PATH/ROCM_HOME at an installed hip-remote layout,
its bin/ first on PATH (CuPy runs `hipcc` from PATH to find include directories) and
HIP_REMOTE_WORKER at a worker.
"""
import os

# CuPy's default accelerator on ROCm is `cub`: hipCUB kernels precompiled into
# cupy/cuda/cub*.so for AMD GPUs only (gfx9/10/11/12 code objects, no device source), which
# neither the host nor the cuda worker can run. With no accelerator CuPy compiles its own
# reduction kernels with hiprtc, which every worker runs. Set before cupy is imported.
os.environ.setdefault("CUPY_ACCELERATORS", "")

import pytest  # noqa: E402


def hipblas_missing():
    """Why cupy.matmul/dot cannot run yet, or None: they go through libhipblas.so.3."""
    lib_dir = os.path.join(os.environ.get("ROCM_PATH", ""), "lib")
    if not os.path.exists(os.path.join(lib_dir, "libhipblas.so.3")):
        return f"no libhipblas.so.3 in {lib_dir} (cupy.matmul/dot need hipBLAS forwarding)"
    return None


needs_hipblas = pytest.mark.skipif(hipblas_missing() is not None, reason=hipblas_missing() or "")
