#!/usr/bin/env bash
# Validates deploy/kubernetes/ against the Kubernetes API schema (kubernetes-validate from
# PyPI, strict: an unknown or misspelt field fails), then checks what a schema cannot: the
# manifests agree with each other and with the worker (scripts/check_manifests.py).
# Exits 77 with a "SKIP: " line (scripts/test.sh counts it as skipped) only when no venv can
# be made or kubernetes-validate cannot be installed.
set -euo pipefail
cd "$(dirname "$0")/.."
skip() { echo "check-manifests: SKIP: $*"; exit 77; }
ROOT=$PWD
# The Kubernetes release whose schema the manifests must satisfy.
KUBERNETES_VERSION=1.31.0
VALIDATOR="kubernetes-validate==1.31.0"
VENV=${HIP_REMOTE_MANIFEST_VENV:-$ROOT/.venv-manifests}
PY=${PYTHON:-python3}
if [ ! -x "$VENV/bin/kubernetes-validate" ]; then
  command -v "$PY" >/dev/null || skip "no $PY"
  "$PY" -m venv "$VENV" 2>/dev/null || skip "cannot create a venv with $PY (python3-venv missing)"
  "$VENV/bin/pip" install -q --disable-pip-version-check "$VALIDATOR" ||
    skip "$VALIDATOR not installable here (no network to PyPI): the Kubernetes manifests were not validated"
fi
manifests=(deploy/kubernetes/*.yaml)
[ "${#manifests[@]}" -gt 0 ] && [ -f "${manifests[0]}" ] || { echo "check-manifests: no deploy/kubernetes/*.yaml"; exit 1; }
# Custom resources (the Prometheus Operator's ServiceMonitor) have no schema in the validator:
# it warns and passes them; check_manifests.py checks their references instead.
"$VENV/bin/kubernetes-validate" --strict --quiet -k "$KUBERNETES_VERSION" "${manifests[@]}"
"$VENV/bin/python" scripts/check_manifests.py "${manifests[@]}"
echo "check-manifests: ${#manifests[@]} files valid for Kubernetes $KUBERNETES_VERSION"
