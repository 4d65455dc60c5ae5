#!/usr/bin/env bash
# Checks an archive that scripts/dist.sh wrote, against this source tree:
#   - one top folder named as the archive, nothing outside it;
#   - include/ holds exactly the headers of client-capi/include; the Linux layout also the
#     CMake and pkg-config files of tools/cli/layout;
#   - the libraries and tools of its platform (Linux: libamdhip64.so and its soname and
#     versioned file, hiprtc, hipblas, libamd_smi.so, every shim of client-capi/shims, the
#     programs and the probe-tool links, the clang driver links; macOS: the dylibs and programs;
#     Windows: AMD's DLL names, the programs, and import libraries naming those DLLs), each a
#     binary of the archive's system and CPU (ELF, Mach-O or PE header read here);
#   - for a Linux archive of this machine's CPU, with --run: unpacked, its own hip-worker
#     (host backend) serves, and C programs compiled against the unpacked include/ and lib/
#     run through it (device query, the hiprtc example), with hipconfig, hipcc --version,
#     hip-remote ping and rocminfo from bin/.
#   scripts/dist-check.sh ARCHIVE [--run]
# Exits non-zero on any failure (each printed as a FAIL line).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
[ $# -ge 1 ] || { echo "usage: scripts/dist-check.sh ARCHIVE [--run]" >&2; exit 2; }
archive=$(realpath "$1")
run=0
[ "${2:-}" = --run ] && run=1

# Contents and headers: Python reads both archive kinds and the three binary formats.
python3 - "$archive" "$ROOT" <<'PY'
import os, re, struct, sys, tarfile, zipfile

archive, root = sys.argv[1:]
base = os.path.basename(archive)
m = re.fullmatch(r"hip-remote-(.+?)-((?:x86_64|aarch64)-(?:unknown-linux-gnu|pc-windows-gnu|apple-darwin))\.(tar\.gz|zip)", base)
if not m:
    sys.exit(f"dist-check: {base} is not named hip-remote-<version>-<TARGET>.tar.gz|.zip")
version, target, kind = m.groups()
name = base[: -len(kind) - 1]
platform = "windows" if "windows" in target else "macos" if "apple" in target else "linux"
cpu = target.split("-")[0]
passed = failed = 0

def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {base}: {what}")

# path under the top folder -> (kind: file|link|dir, first bytes, link target)
entries = {}

def head_bytes(path):
    # Enough for a binary's headers; an import library whole (the DLL name follows its
    # symbol index, which is as long as the export list).
    return -1 if path.endswith(".lib") else 4096

outside = []
if kind == "zip":
    with zipfile.ZipFile(archive) as z:
        for info in z.infolist():
            top, _, rest = info.filename.partition("/")
            if top != name:
                outside.append(info.filename)
                continue
            if info.is_dir() or not rest:
                continue
            with z.open(info) as f:
                entries[rest.rstrip("/")] = ("file", f.read(head_bytes(rest)), None)
else:
    with tarfile.open(archive) as t:
        for member in t.getmembers():
            top, _, rest = member.name.partition("/")
            if top != name:
                outside.append(member.name)
                continue
            if not rest:
                continue
            if member.issym():
                entries[rest] = ("link", b"", member.linkname)
            elif member.isdir():
                entries[rest] = ("dir", b"", None)
            else:
                entries[rest] = ("file", t.extractfile(member).read(head_bytes(rest)), None)
check(not outside, f"entries outside the folder {name}/: {outside[:5]}")
print(f"dist-check: {base}: {sum(1 for e in entries.values() if e[0] != 'dir')} files and links")

def tree(folder):
    out = set()
    for d, _, files in os.walk(folder):
        for f in files:
            out.add(os.path.relpath(os.path.join(d, f), folder))
    return out

# Headers: exactly the source tree's.
want = {"include/" + p for p in tree(os.path.join(root, "client-capi/include"))}
have = {p for p, e in entries.items() if p.startswith("include/") and e[0] == "file"}
check(want == have, f"include/ differs from client-capi/include: missing {sorted(want - have)[:5]}, extra {sorted(have - want)[:5]}")
check("include/hip/hip_runtime.h" in have, "no include/hip/hip_runtime.h")
check(".info/version" in entries, "no .info/version")

def resolve(path, depth=0):
    e = entries.get(path)
    if e is None or depth > 8:
        return None
    if e[0] == "link":
        return resolve(os.path.normpath(os.path.join(os.path.dirname(path), e[2])), depth + 1)
    return path

ELF_MACHINE = {"x86_64": 62, "aarch64": 183}
MACHO_CPU = {"x86_64": 0x01000007, "aarch64": 0x0100000C}

def binary(path, library):
    real = resolve(path)
    if real is None:
        check(False, f"{path}: missing (or a link to nothing)")
        return
    head = entries[real][1]
    if platform == "linux":
        ok = head[:4] == b"\x7fELF" and head[4] == 2 and struct.unpack_from("<H", head, 18)[0] == ELF_MACHINE[cpu]
        etype = struct.unpack_from("<H", head, 16)[0] if len(head) > 18 else 0
        check(ok and etype in (2, 3), f"{path}: not a 64-bit {cpu} ELF executable or library")
    elif platform == "macos":
        ok = head[:4] == b"\xcf\xfa\xed\xfe" and struct.unpack_from("<I", head, 4)[0] == MACHO_CPU[cpu]
        filetype = struct.unpack_from("<I", head, 12)[0] if len(head) >= 16 else 0
        check(ok and filetype == (6 if library else 2), f"{path}: not a {cpu} Mach-O {'dylib' if library else 'executable'}")
    else:
        pe = struct.unpack_from("<I", head, 0x3C)[0] if head[:2] == b"MZ" else None
        ok = pe is not None and pe + 24 <= len(head) and head[pe : pe + 4] == b"PE\0\0"
        machine, characteristics = struct.unpack_from("<H", head, pe + 4)[0] if ok else 0, struct.unpack_from("<H", head, pe + 22)[0] if ok else 0
        is_dll = bool(characteristics & 0x2000)
        check(ok and machine == 0x8664 and is_dll == library, f"{path}: not an x86-64 PE {'DLL' if library else 'program'}")

if platform == "linux":
    libs = []
    for stem, soname in [("libamdhip64.so", "libamdhip64.so.7"), ("libhiprtc.so", "libhiprtc.so.7")]:
        versioned = [p for p in entries if re.fullmatch(re.escape(f"lib/{soname}") + r"\.\d+\.\d+", p)]
        check(len(versioned) == 1, f"lib/{soname}.<minor>.<patch>: {versioned}")
        for p in [f"lib/{stem}", f"lib/{soname}"]:
            check(entries.get(p, ("",))[0] == "link", f"{p}: not a link")
        libs += [f"lib/{stem}", f"lib/{soname}"] + versioned
    libs += ["lib/libhipblas.so", "lib/libhipblas.so.3", "lib/libamd_smi.so"]
    shims = re.findall(r'soname: "([^"]+)"', open(os.path.join(root, "client-capi/shims/src/libraries.rs")).read())
    check(len(shims) > 0, "no shim sonames found in client-capi/shims/src/libraries.rs")
    libs += [f"lib/{s}" for s in shims]
    programs = [f"bin/{p}" for p in ["hipcc", "hipconfig", "hip-worker", "hip-remote"]]
    for link in ["rocminfo", "rocm_agent_enumerator", "amd-smi"]:
        check(resolve(f"bin/{link}") == "bin/hip-remote", f"bin/{link}: not a link to hip-remote")
    for link in ["lib/llvm/bin/clang++", "lib/llvm/bin/clang"]:
        check(resolve(link) == "bin/hipcc", f"{link}: not a link to bin/hipcc")
    layout = tree(os.path.join(root, "tools/cli/layout"))
    missing = sorted(p for p in layout if p not in entries)
    check(not missing, f"CMake/pkg-config files missing: {missing[:5]}")
elif platform == "macos":
    libs = [f"lib/lib{n}.dylib" for n in ["amdhip64", "hiprtc", "hipblas"]]
    programs = [f"bin/{p}" for p in ["hipcc", "hipconfig", "hip-remote"]]
else:
    libs = [f"bin/{n}.dll" for n in ["amdhip64_7", "hiprtc0702", "hipblas"]]
    programs = [f"bin/{p}.exe" for p in ["hipcc", "hipconfig", "hip-remote"]]
    for lib, dll in [("amdhip64", "amdhip64_7.dll"), ("hiprtc", "hiprtc0702.dll"), ("hipblas", "hipblas.dll")]:
        e = entries.get(f"lib/{lib}.lib")
        check(e is not None and e[1].startswith(b"!<arch>\n") and dll.encode() in e[1], f"lib/{lib}.lib: not an import library naming {dll}")
for p in libs:
    binary(p, True)
for p in programs:
    binary(p, False)
print(f"dist-check: {base}: {len(libs)} libraries, {len(programs)} programs, {len(have)} headers ({platform}, {cpu})")
print(f"dist-check: {base}: {passed} checks passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
rc=$?
[ "$rc" = 0 ] && echo "dist-check: $(basename "$archive"): contents as expected"
[ "$rc" = 0 ] || [ "$rc" = 1 ] || exit "$rc"
failed=$rc

case $(basename "$archive") in
  *-"$(uname -m)"-unknown-linux-gnu.tar.gz) ;;
  *) [ "$run" = 1 ] && echo "dist-check: --run needs a Linux archive of this CPU ($(uname -m)); contents only"; run=0 ;;
esac
if [ "$run" = 1 ]; then
  WORK=$(mktemp -d)
  worker_pid=
  cleanup() { [ -n "$worker_pid" ] && kill "$worker_pid" 2>/dev/null; rm -rf "$WORK"; }
  trap cleanup EXIT
  tar -C "$WORK" -xzf "$archive"
  P=$(echo "$WORK"/hip-remote-*)
  unset LD_LIBRARY_PATH ROCM_PATH ROCM_HOME HIP_PATH
  fails=0
  bad() { echo "FAIL $*"; fails=$((fails + 1)); }
  TOKEN=dist-check-token
  "$P/bin/hip-worker" --listen 127.0.0.1:0 --backend host --allow-host-code --host-memory-mib 256 --token "$TOKEN" \
    >"$WORK/worker.out" 2>"$WORK/worker.log" &
  worker_pid=$!
  addr=
  for _ in $(seq 100); do
    # The TCP address (the worker also prints its same-host shm:// address).
    addr=$(sed -n 's#^hip-worker listening on \([0-9.]*:[0-9]*\)$#\1#p' "$WORK/worker.out" | head -n 1)
    [ -n "$addr" ] && break
    sleep 0.1
  done
  if [ -z "$addr" ]; then
    bad "the archive's hip-worker did not start: $(tail -3 "$WORK/worker.log")"
  else
    export HIP_REMOTE_WORKER=$addr HIP_REMOTE_TOKEN=$TOKEN
    for src in tests/c/device_query.c examples/hiprtc/saxpy.c; do
      exe=$WORK/$(basename "$src" .c)
      if ! cc -std=c11 -O1 -I "$P/include" "$src" -o "$exe" -L "$P/lib" -lhiprtc -lamdhip64 -lm -Wl,-rpath,"$P/lib" 2>"$exe.cc.log"; then
        bad "$src does not compile against the archive: $(head -3 "$exe.cc.log")"
        continue
      fi
      # The program's HIP library is the archive's, not one from the build tree.
      resolved=$(ldd "$exe" | sed -n 's/^[[:space:]]*libamdhip64\.so\.7 => \([^ ]*\).*/\1/p')
      case $resolved in "$P"/lib/*) ;; *) bad "$src: libamdhip64.so.7 resolves to '$resolved', not the archive's lib/" ;; esac
      if timeout 120 "$exe" >"$exe.out" 2>&1; then
        echo "dist-check: $(basename "$src"): $(tail -1 "$exe.out")"
      else
        bad "$src against the archive's worker: $(tail -3 "$exe.out")"
      fi
    done
    grep -q "^PASS device_query" "$WORK/device_query.out" 2>/dev/null || bad "device_query printed no PASS line"
    grep -q "correct" "$WORK/saxpy.out" 2>/dev/null || bad "saxpy printed no result"
    "$P/bin/hipconfig" --version >"$WORK/hipconfig.out" 2>&1 && grep -Eq '^[0-9]+\.[0-9]+' "$WORK/hipconfig.out" \
      || bad "bin/hipconfig --version: $(head -2 "$WORK/hipconfig.out")"
    "$P/bin/hipcc" --version >"$WORK/hipcc.out" 2>&1 || bad "bin/hipcc --version: $(head -2 "$WORK/hipcc.out")"
    "$P/bin/hip-remote" ping --worker "$addr" >"$WORK/ping.out" 2>&1 || bad "bin/hip-remote ping: $(tail -2 "$WORK/ping.out")"
    "$P/bin/rocminfo" >"$WORK/rocminfo.out" 2>&1 && grep -q "gfx\|Marketing Name" "$WORK/rocminfo.out" \
      || bad "bin/rocminfo: $(tail -2 "$WORK/rocminfo.out")"
  fi
  [ "$fails" = 0 ] && echo "dist-check: programs built against the unpacked archive ran through its own worker"
  failed=$((failed + fails))
fi
[ "$failed" = 0 ] && echo "dist-check: passed" || echo "dist-check: failed"
[ "$failed" = 0 ]
