#!/usr/bin/env bash
# Builds release binaries here and packs what the GPU machine needs (it has no Rust
# toolchain and no network) into the git-ignored folder device-pack/, which the device tool
# carries. Then, on the GPU machine: bash device-pack/device-test.sh
# HIP_REMOTE_PACK_CUPY=1 packs CuPy for ROCm instead (then: bash device-pack/device-cupy.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
PACK=${HIP_REMOTE_PACK_DIR:-device-pack}  # HIP_REMOTE_PACK_DIR: another folder (e.g. a CuPy pack beside the main one)
cargo build --release -p hip-worker -p hip-remote --features hip-remote/profiling -p client-capi -p client-hiprtc -p client-hipblas -p client-amdsmi -p hip-remote-hipcc
if [ "${HIP_REMOTE_PACK_CUPY:-0}" = 1 ]; then
  # A pack of its own for CuPy for ROCm on the cuda worker (scripts/device-cupy.sh): CuPy,
  # numpy and pytest for the GPU machine's python3.12 come to ~42 MB with xz -9 (CuPy's
  # AMD code objects), too much beside the rest within what the device tool carries (64 MiB).
  rm -rf "$PACK"; mkdir -p "$PACK/cupy/tests"
  target/release/hip-remote install --prefix "$PACK/rocm" >/dev/null
  rm -f "$PACK/rocm/bin/hip-remote"  # not needed there
  site=$(mktemp -d) python=${HIP_REMOTE_CUPY_PYTHON:-3.12}  # the GPU machine's python3
  pip install -q --disable-pip-version-check --no-compile --target "$site" --only-binary=:all: \
      --python-version "$python" --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 --platform any \
      "cupy-rocm-7-0==14.2.0" numpy pytest
  # HIP_REMOTE_CUPY_SYSTEM_NUMPY=1: the GPU machine's own numpy (it has one), within what the
  # device tool carries.
  if [ "${HIP_REMOTE_CUPY_SYSTEM_NUMPY:-0}" = 1 ]; then rm -rf "$site"/numpy "$site"/numpy-*.dist-info "$site"/numpy.libs; fi
  tar -C "$site" --exclude=./bin -cf - . | xz -T0 -9 > "$PACK/cupy/site-py${python/./}.tar.xz"
  rm -rf "$site"
  cp tests/python/cupy/*.py "$PACK/cupy/tests/"
  cp scripts/device-cupy.sh "$PACK/"
  strip "$PACK/rocm/bin/"* "$PACK/rocm/lib/"*.so* 2>/dev/null || true
  du -sh "$PACK"
  echo "on the GPU machine: bash $PACK/device-cupy.sh"
  exit 0
fi
rm -rf "$PACK"; mkdir -p "$PACK/bin" "$PACK/lib" "$PACK/tests"
cp target/release/hip-worker target/release/hip-remote "$PACK/bin/"
cp target/release/libamdhip64.so "$PACK/lib/"
ln -sf libamdhip64.so "$PACK/lib/libamdhip64.so.7"
if [ -f target/release/libhiprtc.so ]; then
  cp target/release/libhiprtc.so "$PACK/lib/"; ln -sf libhiprtc.so "$PACK/lib/libhiprtc.so.7"
fi
# hipBLAS forwarded to the worker (the cuda worker runs it on cuBLAS): its C programs, and the
# sgemm figure of `hip-remote bench` (which loads libhipblas.so.3 beside --lib).
cp target/release/libhipblas.so "$PACK/lib/"; ln -sf libhipblas.so "$PACK/lib/libhipblas.so.3"
# (hipblas_capture compiles its kernels with hiprtc.)
for t in hipblas_ops hipblas_hostile hipblas_capture; do
  cc -std=c11 -O2 -I client-capi/include "tests/c/$t.c" -o "$PACK/tests/$t" \
     -L "$PACK/lib" -lhipblas -lhiprtc -lamdhip64 -lm -lpthread -Wl,-rpath,'$ORIGIN/../lib'
done
# The installed ROCm-style layout (lib/ with the shims, include/, bin/ with hipcc): what CuPy's
# ROCM_HOME points at there. Its hip-remote and hip-worker are links to bin/'s (within what the
# device tool carries).
target/release/hip-remote install --prefix "$PACK/rocm" >/dev/null
for tool in hip-remote hip-worker; do ln -sf "../../bin/$tool" "$PACK/rocm/bin/$tool"; done
# C conformance programs that run against any worker (the multi-process ones need the Rust
# harness and run in CI instead).
for t in device_query memory streams_events errors threads kernels device_control stream_info func_attributes memory2d memory_extra hip_tests_answers blocked_stream_copies \
         memset2d3d device_extra symbols_spt arrays memcpy3d textures mempool vmm contexts pointer_attrs ipc module_lookup_threads module_lookup_missing \
         managed host_register callbacks stream_extra stream_wait_host per_thread_stream module_extra module_link graphs graph_exec graph_nodes capture shared_kernels \
         rtc_client_headers rtc_cupy_kernels stripes no_wait_ops shm_shared device_fault_heal kernel_watchdog freed_memory multi_worker rocm_conformance \
         multi_device visible_devices; do
  [ -f "tests/c/$t.c" ] || continue
  cc -std=c11 -O2 -I client-capi/include "tests/c/$t.c" -o "$PACK/tests/$t" \
     -L "$PACK/lib" -lhiprtc -lamdhip64 -lpthread -Wl,-rpath,'$ORIGIN/../lib'
done
# CuPy's kernel headers (cupy/_core/include of the cupy-rocm-7-0 wheel) for rtc_cupy_kernels,
# which device-test.sh runs with them: CuPy's hiprtc sources compiled by NVRTC on the worker.
CUPY_WHEEL_DIR=$(mktemp -d)
if pip download -q --no-deps --dest "$CUPY_WHEEL_DIR" --only-binary=:all: --python-version 3.11 \
     --platform manylinux2014_x86_64 "cupy-rocm-7-0==14.2.0" 2>/dev/null; then
  mkdir -p "$PACK/cupy-include"
  unzip -q -o "$CUPY_WHEEL_DIR"/*.whl 'cupy/_core/include/cupy/*' -x 'cupy/_core/include/cupy/_cccl/*' 'cupy/_core/include/cupy/xsf/*' \
    -d "$CUPY_WHEEL_DIR/x" && cp -r "$CUPY_WHEEL_DIR/x/cupy/_core/include/cupy" "$PACK/cupy-include/"
else
  echo "could not fetch the cupy-rocm-7-0 wheel; rtc_cupy_kernels will fail on the GPU machine"
fi
rm -rf "$CUPY_WHEEL_DIR"
# The examples, built like a user would build them.
mkdir -p "$PACK/examples"
HIP_REMOTE_LIBDIR="$PACK/lib" bash examples/hello_hip/build.sh "$PACK/examples" >/dev/null
cc -std=c11 -O2 -I client-capi/include examples/hiprtc/saxpy.c -o "$PACK/examples/saxpy" \
   -L "$PACK/lib" -lhiprtc -lamdhip64 -Wl,-rpath,'$ORIGIN/../lib'
cc -std=c11 -O2 -I client-capi/include examples/tour/tour.c -o "$PACK/examples/tour" \
   -L "$PACK/lib" -lhiprtc -lamdhip64 -lpthread -Wl,-rpath,'$ORIGIN/../lib'
patchelf --set-rpath '$ORIGIN/../lib' "$PACK/examples/hello_hip" 2>/dev/null || true
# The HIP samples (tests/hip/samples), built here by our hipcc and carried as binaries: the GPU
# machine runs the executables built from the very source the CI builds and runs against host
# workers (device-test.sh runs and checks them).
mkdir -p "$PACK/samples"
for src in tests/hip/samples/*.hip; do
  name=$(basename "$src" .hip)
  target/release/hipcc -O2 -o "$PACK/samples/$name" "$src"
  # hipcc's rpath names this machine's target/release; device-test.sh's LD_LIBRARY_PATH
  # finds the packed library either way.
  patchelf --set-rpath '$ORIGIN/../lib' "$PACK/samples/$name" 2>/dev/null || true
done
# hipcc's device headers through the driver API on the GPU (tests/hip/device_check.py): the
# NVIDIA pass's PTX of the API and math test kernels, with and without libdevice.
mkdir -p "$PACK/device-check"
nvidia_pass() { clang++-15 -x cuda --cuda-device-only --cuda-gpu-arch=sm_70 -nocudainc -nocudalib -O2 \
  -isystem client-capi/include -D__HIP_REMOTE_HIPCC__=1 -include hip_remote/hipcc_device.h "$@"; }
nvidia_pass -S tests/hip/device_api.hip -o "$PACK/device-check/api.ptx"
nvidia_pass -S tests/hip/device_math.hip -o "$PACK/device-check/math.ptx"
libdevice=$(ls .venv-ptxas/lib/python3*/site-packages/nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc 2>/dev/null | head -1 || true)
if [ -n "$libdevice" ]; then
  nvidia_pass -D__HIP_REMOTE_LIBDEVICE__=1 -Xclang -mlink-builtin-bitcode -Xclang "$libdevice" \
    -S tests/hip/device_math.hip -o "$PACK/device-check/math-libdevice.ptx"
fi
cp tests/hip/device_check.py "$PACK/device-check/"
# The probe of process isolation (device-isolation.sh): one program, a role per run.
mkdir -p "$PACK/isolation"
target/release/hipcc -O2 -o "$PACK/isolation/isolation_probe" tests/hip/isolation/isolation_probe.hip
patchelf --set-rpath '$ORIGIN/../lib' "$PACK/isolation/isolation_probe" 2>/dev/null || true
mkdir -p "$PACK/bench"
target/release/hipcc -O2 -o "$PACK/bench/first_launch" benches/hip/first_launch.hip
patchelf --set-rpath '$ORIGIN/../lib' "$PACK/bench/first_launch" 2>/dev/null || true
# Every GPU-machine script (scripts/device-*.sh).
cp scripts/device-*.sh "$PACK/"
# An earlier build for device-perf-compare.sh (HIP_REMOTE_PERF_BEFORE=DIR holding its hip-remote,
# libamdhip64.so and a COMMIT line).
if [ -n "${HIP_REMOTE_PERF_BEFORE:-}" ]; then mkdir -p "$PACK/perf-before"; cp "$HIP_REMOTE_PERF_BEFORE"/* "$PACK/perf-before/"; fi
# One client, process isolation against shared serving (device-isolation-bench.sh).
cc -std=c11 -O2 -I client-capi/include scripts/session-process-bench.c -o "$PACK/bench/session-process-bench" \
   -L "$PACK/lib" -lhiprtc -lamdhip64 -Wl,-rpath,'$ORIGIN/../lib'
# hip-python for the GPU machine's python3.12, installed there from these wheels (no network).
mkdir -p "$PACK/wheels" "$PACK/python"
pip download -q --dest "$PACK/wheels" --only-binary=:all: --python-version 3.12 \
    --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 --platform any \
    "hip-python==10.0.*" pytest || echo "could not fetch the cp312 wheels; hip-python tests will be skipped there"
cp tests/python/*.py "$PACK/python/"
# Debug info goes, symbols stay: the bench's profiles (--profile) name Rust functions.
strip --strip-debug "$PACK/bin/"* "$PACK/lib/"*.so 2>/dev/null || true
strip "$PACK/rocm/bin/"* "$PACK/rocm/lib/"*.so* 2>/dev/null || true
du -sh "$PACK"
