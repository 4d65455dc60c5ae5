#!/usr/bin/env bash
# The probe and SMI tools against a cuda worker on the GPU machine (docs/PROBES.md): amd-smi
# shows NVML's figures (power, temperature, clocks, activity) and memory rising around an
# allocation; rocm_agent_enumerator and rocminfo show the device's gcnArchName (sm_NN).
# Usage: bash device-pack/device-probes.sh   (exit 0: every check passed)
set -uo pipefail
PACK=$(cd "$(dirname "$0")" && pwd)
ROCM=$PACK/rocm
# The pack carries no installed layout (it would pass what the device tool carries): the
# tools are hip-remote under their own names, so links to the packed one make them.
if [ ! -x "$ROCM/bin/amd-smi" ]; then
  ROCM=$(mktemp -d); mkdir -p "$ROCM/bin"
  for tool in rocminfo rocm_agent_enumerator amd-smi; do ln -s "$PACK/bin/hip-remote" "$ROCM/bin/$tool"; done
fi
OUT=${OUT:-/tmp/device-probes}; mkdir -p "$OUT"
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
"$PACK/bin/hip-worker" --listen 127.0.0.1:0 --backend cuda --metrics 127.0.0.1:18599 > "$OUT/worker.stdout" 2> "$OUT/worker.log" &
pid=$!
for _ in $(seq 200); do grep -q "listening on" "$OUT/worker.stdout" 2>/dev/null && break; sleep 0.1; done
export HIP_REMOTE_WORKER=$(sed -n 's/.*listening on //p' "$OUT/worker.stdout" | head -1) HIP_REMOTE_METRICS=127.0.0.1:18599
"$ROCM/bin/rocm_agent_enumerator" > "$OUT/enumerator.txt"
"$ROCM/bin/rocminfo" > "$OUT/rocminfo.txt"
"$ROCM/bin/amd-smi" metric --json > "$OUT/metric.json"
"$ROCM/bin/amd-smi" static > "$OUT/static.txt"
cat "$OUT/enumerator.txt" "$OUT/metric.json"
check "enumerator: gfx000 then sm_NN lines" "head -1 '$OUT/enumerator.txt' | grep -qx gfx000 && sed -n 2p '$OUT/enumerator.txt' | grep -qE '^sm_[0-9]+$'"
check "rocminfo: a GPU agent named sm_NN" "grep -qE '^  Name: +sm_[0-9]+' '$OUT/rocminfo.txt'"
for field in '["power"]["socket_power"]["value"]' '["temperature"]["edge"]["value"]' '["clock"]["gfx_0"]["clk"]["value"]' '["usage"]["gfx_activity"]["value"]'; do
  check "amd-smi metric: $field from NVML" "python3 -c 'import json,sys; d=json.load(open(\"$OUT/metric.json\"))[0]; v=d$field; sys.exit(0 if isinstance(v,(int,float)) else 1)'"
done
check "amd-smi static: NVIDIA vendor" "grep -q 'VENDOR_NAME: NVIDIA Corporation' '$OUT/static.txt'"
kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
exit $fail
