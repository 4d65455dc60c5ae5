#!/usr/bin/env python3
"""What a schema cannot check in deploy/kubernetes/: the manifests agree with each other and
with the worker. Run by scripts/check-manifests.sh after kubernetes-validate.

- every object is in the namespace namespace.yaml creates;
- a DaemonSet's selector matches its pods, which request a GPU device plugin's resource;
- the worker's flags and environment variables exist (worker/src/main.rs), its listen and
  metrics ports are the containerPorts named `hip` and `metrics`, the probes ask `/healthz` on
  `metrics`, the Prometheus annotations name the metrics port;
- the Secrets and keys the pods use are defined;
- the Service is headless, selects every DaemonSet's pods, and targets ports they name;
- a ServiceMonitor selects the Service and scrapes a port it has.
"""
import re
import sys
from pathlib import Path

import yaml

GPU_RESOURCES = {"nvidia.com/gpu", "amd.com/gpu"}
ROOT = Path(__file__).resolve().parent.parent
MAIN_RS = (ROOT / "worker/src/main.rs").read_text()

errors = []


def fail(where, what):
    errors.append(f"{where}: {what}")


def labels_match(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def worker_has_flag(flag):
    """`--tls-cert` is a long option of hip-worker when main.rs has the field `tls_cert:`."""
    field = flag.lstrip("-").replace("-", "_")
    return re.search(rf"\b{field}:", MAIN_RS) is not None


def worker_has_env(name):
    return f'env = "{name}"' in MAIN_RS


def port_of(address):
    return int(address.rsplit(":", 1)[1])


docs = []
for path in sys.argv[1:]:
    for doc in yaml.safe_load_all(Path(path).read_text()):
        if doc:
            docs.append((path, doc))

namespaces = {d["metadata"]["name"] for _, d in docs if d["kind"] == "Namespace"}
secrets = {}
for path, d in docs:
    if d["kind"] == "Secret":
        keys = set(d.get("data", {})) | set(d.get("stringData", {}))
        secrets[d["metadata"]["name"]] = keys
    if d["kind"] != "Namespace" and d["metadata"].get("namespace") not in namespaces:
        fail(path, f"{d['kind']} {d['metadata']['name']} is not in a namespace of these manifests ({sorted(namespaces)})")

daemonsets = [(p, d) for p, d in docs if d["kind"] == "DaemonSet"]
services = [(p, d) for p, d in docs if d["kind"] == "Service"]
if not daemonsets:
    fail("deploy/kubernetes", "no DaemonSet")
if not services:
    fail("deploy/kubernetes", "no Service")

pod_ports = {}  # DaemonSet name -> container port names
for path, ds in daemonsets:
    name = ds["metadata"]["name"]
    pod = ds["spec"]["template"]
    pod_labels = pod["metadata"].get("labels", {})
    if not labels_match(ds["spec"]["selector"].get("matchLabels", {}), pod_labels):
        fail(path, f"{name}: the selector does not match the pod labels")
    containers = pod["spec"]["containers"]
    worker = next((c for c in containers if c["name"] == "hip-worker"), None)
    if worker is None:
        fail(path, f"{name}: no container named hip-worker")
        continue
    ports = {p["name"]: p["containerPort"] for p in worker.get("ports", [])}
    pod_ports[name] = ports
    for needed in ("hip", "metrics"):
        if needed not in ports:
            fail(path, f"{name}: no containerPort named {needed}")
    limits = worker.get("resources", {}).get("limits", {})
    if not GPU_RESOURCES & set(limits):
        fail(path, f"{name}: requests none of {sorted(GPU_RESOURCES)}")
    for arg in worker.get("args", []):
        if arg.startswith("--") and not worker_has_flag(arg.split("=", 1)[0]):
            fail(path, f"{name}: hip-worker has no flag {arg}")
    env = {}
    for e in worker.get("env", []):
        if not worker_has_env(e["name"]):
            fail(path, f"{name}: hip-worker reads no variable {e['name']}")
        ref = e.get("valueFrom", {}).get("secretKeyRef")
        if ref and ref["key"] not in secrets.get(ref["name"], set()):
            fail(path, f"{name}: {e['name']} uses secret {ref['name']} key {ref['key']}, which these manifests do not define")
        env[e["name"]] = e.get("value")
    for var, port_name in (("HIP_REMOTE_LISTEN", "hip"), ("HIP_REMOTE_METRICS", "metrics")):
        if not env.get(var):
            fail(path, f"{name}: {var} is not set")
        elif port_name in ports and port_of(env[var]) != ports[port_name]:
            fail(path, f"{name}: {var}={env[var]} but containerPort {port_name} is {ports[port_name]}")
    for probe in ("livenessProbe", "readinessProbe"):
        get = worker.get(probe, {}).get("httpGet")
        if not get:
            fail(path, f"{name}: no {probe} httpGet")
        elif get.get("path") != "/healthz" or get.get("port") not in ("metrics", ports.get("metrics")):
            fail(path, f"{name}: {probe} must GET /healthz on the metrics port, not {get}")
    notes = pod["metadata"].get("annotations", {})
    if notes.get("prometheus.io/scrape") != "true" or notes.get("prometheus.io/port") != str(ports.get("metrics")):
        fail(path, f"{name}: the prometheus.io annotations must scrape the metrics port {ports.get('metrics')}")
    for volume in pod["spec"].get("volumes", []):
        secret = volume.get("secret")
        if secret and secret["secretName"] not in secrets:
            fail(path, f"{name}: volume {volume['name']} mounts secret {secret['secretName']}, which these manifests do not define")

for path, svc in services:
    name = svc["metadata"]["name"]
    if svc["spec"].get("clusterIP") != "None":
        fail(path, f"{name}: not headless (clusterIP: None): its name must resolve to every worker")
    selector = svc["spec"].get("selector", {})
    for ds_path, ds in daemonsets:
        if not labels_match(selector, ds["spec"]["template"]["metadata"].get("labels", {})):
            fail(path, f"{name}: does not select the pods of {ds['metadata']['name']}")
        for port in svc["spec"]["ports"]:
            target = port.get("targetPort", port["port"])
            known = pod_ports.get(ds["metadata"]["name"], {})
            if target not in known and target not in known.values():
                fail(path, f"{name}: port {port['name']} targets {target}, which {ds['metadata']['name']}'s pods do not name")

for path, mon in ((p, d) for p, d in docs if d["kind"] == "ServiceMonitor"):
    name = mon["metadata"]["name"]
    selected = [s for _, s in services if labels_match(mon["spec"]["selector"].get("matchLabels", {}), s["metadata"].get("labels", {}))]
    if not selected:
        fail(path, f"{name}: selects no Service of these manifests")
    for endpoint in mon["spec"]["endpoints"]:
        if not any(endpoint["port"] in {p["name"] for p in s["spec"]["ports"]} for s in selected):
            fail(path, f"{name}: endpoint port {endpoint['port']} is not a port of the Service it selects")

for e in errors:
    print(f"check-manifests: {e}")
sys.exit(1 if errors else 0)
