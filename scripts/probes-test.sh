#!/usr/bin/env bash
# ROCm's probe and SMI tools over the network, as their users run them (docs/PROBES.md):
# lays hip-remote out as a ROCm installation (`hip-remote install --prefix DIR`), starts a
# host-backend worker with its metrics endpoint, then
#  - the PyPI `amdsmi` package (7.0.2, unchanged, in a venv) loads DIR/lib/libamd_smi.so
#    through ROCM_PATH, lists the worker's devices and reads a device's memory in use, which
#    follows a hipMalloc made through DIR/lib/libamdhip64.so;
#  - rocm_agent_enumerator's output is read as PyTorch's and CMake's GPU detection read it
#    (lines, gfx000 dropped), rocminfo's with rocm_agent_enumerator's own `Name:` patterns.
# Exits 77 with a "SKIP: " line when no venv can be made or the package cannot be installed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}/debug
skip() { echo "SKIP: $*"; exit 77; }
VENV=${HIP_REMOTE_AMDSMI_VENV:-$ROOT/.venv-amdsmi}
PY=${PYTHON:-python3}
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV" 2>/dev/null || skip "cannot create a venv with $PY (python3-venv missing)"
fi
"$VENV/bin/pip" install -q --disable-pip-version-check "amdsmi==7.0.2" ||
  skip "amdsmi 7.0.2 not installable here (network?)"
for f in libamdhip64.so libhiprtc.so libamd_smi.so hip-worker hip-remote; do
  [ -e "$TARGET/$f" ] || { echo "probes-test: $TARGET/$f missing; run cargo build --workspace"; exit 1; }
done

ROCM=$(mktemp -d); WORK=$(mktemp -d)
chmod 755 "$ROCM"
cleanup() { [ -n "${WPID:-}" ] && kill "$WPID" 2>/dev/null; rm -rf "$ROCM" "$WORK"; }
trap cleanup EXIT
"$TARGET/hip-remote" install --prefix "$ROCM" >"$WORK/install.log" 2>&1 ||
  { echo "probes-test: hip-remote install --prefix $ROCM failed:"; cat "$WORK/install.log"; exit 1; }

METRICS_PORT=$("$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$TARGET/hip-worker" --listen 127.0.0.1:0 --backend host --host-devices 2 --host-memory-mib 256 \
  --metrics "127.0.0.1:$METRICS_PORT" >"$WORK/worker.out" 2>"$WORK/worker.log" &
WPID=$!
for _ in $(seq 100); do grep -q "listening on" "$WORK/worker.out" 2>/dev/null && break; sleep 0.1; done
ADDR=$(sed -n 's/.*listening on //p' "$WORK/worker.out" | head -1)
[ -n "$ADDR" ] || { echo "probes-test: the worker did not start:"; cat "$WORK/worker.log"; exit 1; }

# Plain Malloc/Free: client-placed memory stays cached by its session after hipFree, and an
# SMI (any other party) sees it in use until the session ends (docs/ALLOCATION.md).
export ROCM_PATH=$ROCM HIP_REMOTE_WORKER=$ADDR HIP_REMOTE_METRICS=127.0.0.1:$METRICS_PORT HIP_REMOTE_CLIENT_ALLOC=off
unset LD_LIBRARY_PATH ROCM_HOME
"$VENV/bin/python" - <<'PY'
import ctypes, os, re, subprocess
rocm = os.environ["ROCM_PATH"]

# The consumers' reading of rocm_agent_enumerator: one target a line, gfx000 (the CPU) dropped.
out = subprocess.run([f"{rocm}/bin/rocm_agent_enumerator"], capture_output=True, text=True, check=True).stdout
targets = [t for t in out.split("\n") if t and t != "gfx000"]
assert out.startswith("gfx000\n"), out
hip = ctypes.CDLL(f"{rocm}/lib/libamdhip64.so")
count = ctypes.c_int()
assert hip.hipGetDeviceCount(ctypes.byref(count)) == 0
assert targets == ["host"] * count.value, (targets, count.value)

# rocminfo's agents, with rocm_agent_enumerator's own pattern for a GPU agent's Name: line.
info = subprocess.run([f"{rocm}/bin/rocminfo"], capture_output=True, text=True, check=True).stdout
names = [m.group(1) for m in map(re.compile(r"\A\s+Name:\s+(\S+)").match, info.split("\n")) if m]
gpu_types = re.findall(r"Device Type:\s+GPU", info)
assert len(gpu_types) == count.value and names.count("host") == count.value, info

# The PyPI amdsmi package over our libamd_smi.so.
import amdsmi
amdsmi.amdsmi_init()
handles = amdsmi.amdsmi_get_processor_handles()
assert len(handles) == count.value, (len(handles), count.value)
dev = handles[1]
assert amdsmi.amdsmi_get_processor_type(dev)["processor_type"] == "AMDSMI_PROCESSOR_TYPE_AMD_GPU"
before = amdsmi.amdsmi_get_gpu_memory_usage(dev, amdsmi.AmdSmiMemoryType.VRAM)
total = amdsmi.amdsmi_get_gpu_memory_total(dev, amdsmi.AmdSmiMemoryType.VRAM)
assert total == 256 << 20, total
assert hip.hipSetDevice(1) == 0
ptr = ctypes.c_void_p()
assert hip.hipMalloc(ctypes.byref(ptr), ctypes.c_size_t(32 << 20)) == 0
assert hip.hipDeviceSynchronize() == 0
during = amdsmi.amdsmi_get_gpu_memory_usage(dev, amdsmi.AmdSmiMemoryType.VRAM)
vram = amdsmi.amdsmi_get_gpu_vram_usage(dev)
assert hip.hipFree(ptr) == 0
# The client sends a free without waiting for its reply; a synchronize makes sure it landed.
assert hip.hipDeviceSynchronize() == 0
after = amdsmi.amdsmi_get_gpu_memory_usage(dev, amdsmi.AmdSmiMemoryType.VRAM)
assert during - before == 32 << 20, (before, during)
assert vram["vram_total"] == 256 and vram["vram_used"] == during >> 20, vram
assert after == before, (before, after)
asic = amdsmi.amdsmi_get_gpu_asic_info(dev)
print(f"probes-test: {len(handles)} devices through amdsmi; device 1 ({asic['market_name']}): "
      f"{before >> 20} -> {during >> 20} -> {after >> 20} MiB of {total >> 20} MiB around a 32 MiB hipMalloc")
try:
    amdsmi.amdsmi_get_power_info(dev)
    raise AssertionError("the host backend has no power sensor")
except amdsmi.AmdSmiLibraryException as e:
    assert e.get_error_code() == amdsmi.amdsmi_wrapper.AMDSMI_STATUS_NOT_SUPPORTED, e
amdsmi.amdsmi_shut_down()
print("1 passed, 0 failed")
PY
