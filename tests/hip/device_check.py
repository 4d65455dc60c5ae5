#!/usr/bin/env python3
"""hip-remote: runs hipcc-compiled PTX (tests/hip/device_api.hip, device_math.hip) and NVRTC
kernels through hip_compat.h on an NVIDIA GPU with the CUDA driver API (ctypes, no worker), and
decodes each module's device log (docs/KERNELS.md) to check kernel printf/assert end to end.

    python3 tests/hip/device_check.py --api api.ptx --math math.ptx [--math-libdevice m.ptx]

Needs libcuda, libnvrtc and numpy. Exits non-zero on the first failed check."""
import argparse, ctypes, re, struct, sys
import numpy as np

cuda = ctypes.CDLL("libcuda.so.1")
P = ctypes.c_void_p
# Device addresses and sizes are 64-bit: without argtypes ctypes would pass Python ints as C int.
cuda.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t]
cuda.cuMemcpyHtoD_v2.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t]


def ck(r, what):
    if r != 0:
        raise SystemExit(f"FAIL {what}: CUresult {r}")


ck(cuda.cuInit(0), "cuInit")
dev = ctypes.c_int()
ck(cuda.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
ctx = P()
ck(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "ctx")
ck(cuda.cuCtxSetCurrent(ctx), "set ctx")
major, minor = ctypes.c_int(), ctypes.c_int()
cuda.cuDeviceGetAttribute(ctypes.byref(major), 75, dev)
cuda.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev)
SM = f"{major.value}{minor.value}"


def load(ptx: bytes):
    mod = P()
    ck(cuda.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(ptx + b"\0")), "cuModuleLoadData")
    return mod


def fn(mod, name):
    f = P()
    ck(cuda.cuModuleGetFunction(ctypes.byref(f), mod, name.encode()), f"get {name}")
    return f


class Buf:
    def __init__(self, array):
        self.array = np.ascontiguousarray(array)
        self.ptr = ctypes.c_uint64()
        ck(cuda.cuMemAlloc_v2(ctypes.byref(self.ptr), max(self.array.nbytes, 8)), "alloc")
        ck(cuda.cuMemcpyHtoD_v2(self.ptr, self.array.ctypes.data, self.array.nbytes), "HtoD")

    def get(self):
        out = np.empty_like(self.array)
        ck(cuda.cuMemcpyDtoH_v2(out.ctypes.data, self.ptr, out.nbytes), "DtoH")
        return out


def launch(f, grid, block, args, shared=0, sync=True):
    holders = [ctypes.c_uint64(a.ptr.value) if isinstance(a, Buf) else a for a in args]
    params = (P * len(holders))(*[ctypes.cast(ctypes.byref(h), P) for h in holders])
    g = grid + (1,) * (3 - len(grid))
    b = block + (1,) * (3 - len(block))
    ck(cuda.cuLaunchKernel(f, *g, *b, shared, None, params, None), "launch")
    if sync:
        ck(cuda.cuCtxSynchronize(), "synchronize")


def format_record(fmt, args):
    """printf formatting of one record, C rules (enough for the checks)."""
    out, i, argi = [], 0, 0
    spec = re.compile(r"%([-+ #0]*)(\d+|\*)?(?:\.(\d+|\*))?(hh|h|ll|l|z|j|t|L)?([diouxXcfFeEgGaAsp%])")
    for m in spec.finditer(fmt):
        out.append(fmt[i:m.start()])
        i = m.end()
        conv = m.group(5)
        if conv == "%":
            out.append("%")
            continue
        tag, value = args[argi]
        argi += 1
        flags, width, prec = m.group(1), m.group(2) or "", m.group(3)
        pyspec = "%" + flags + width + ("." + prec if prec else "")
        if conv in "di":
            out.append((pyspec + "d") % value)
        elif conv in "ouxX":
            out.append((pyspec + conv) % (value & 0xFFFFFFFFFFFFFFFF if m.group(4) in ("l", "ll", "z", "j", "t") else value & 0xFFFFFFFF))
        elif conv == "c":
            out.append(chr(value & 0xFF))
        elif conv in "fFeEgGaA":
            out.append((pyspec + conv.replace("a", "e").replace("A", "E")) % value)
        elif conv == "s":
            out.append("(null)" if tag == 6 else value)
        elif conv == "p":
            out.append("0x%x" % value)
    out.append(fmt[i:])
    return "".join(out)


def read_log(mod):
    ptr, size = ctypes.c_uint64(), ctypes.c_size_t()
    if cuda.cuModuleGetGlobal_v2(ctypes.byref(ptr), ctypes.byref(size), mod, b"__hip_remote_device_log") != 0:
        raise SystemExit("FAIL: module has no __hip_remote_device_log")
    header = (ctypes.c_ubyte * 32)()
    ck(cuda.cuMemcpyDtoH_v2(header, ptr, 32), "log header")
    magic, capacity, head, asserts, dropped = struct.unpack("<QQQII", bytes(header))
    if magic == 0:
        return [], 0, 0, size.value
    assert magic == 0x31474F4C50494852, hex(magic)
    assert capacity + 32 == size.value, (capacity, size.value)
    used = min(head, capacity)
    data = (ctypes.c_ubyte * max(used, 1))()
    ck(cuda.cuMemcpyDtoH_v2(data, ptr.value + 32, used), "log data")
    data = bytes(data)[:used]
    records, off = [], 0
    while off + 16 <= used:
        rsize, kind, flen, argc = struct.unpack_from("<IIII", data, off)
        assert rsize and rsize % 8 == 0 and off + rsize <= used, (off, rsize)
        p = off + 16
        fmt = data[p:p + flen].decode()
        p += (flen + 7) & ~7
        args = []
        for _ in range(argc):
            tag, ln = struct.unpack_from("<II", data, p)
            p += 8
            if tag == 1:
                args.append((tag, struct.unpack_from("<q", data, p)[0])); p += 8
            elif tag in (2, 4):
                args.append((tag, struct.unpack_from("<Q", data, p)[0])); p += 8
            elif tag == 3:
                args.append((tag, struct.unpack_from("<d", data, p)[0])); p += 8
            elif tag == 5:
                args.append((tag, data[p:p + ln].decode())); p += (ln + 7) & ~7
            elif tag == 6:
                args.append((tag, None))
            else:
                raise AssertionError(f"bad tag {tag}")
        assert p == off + rsize, (p, off, rsize)
        records.append((kind, format_record(fmt, args)))
        off += rsize
    return records, asserts, dropped, size.value


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        sys.exit(1)


def ulp_error(got, want, dtype):
    got = np.asarray(got, dtype=dtype)
    want = np.asarray(want, dtype=dtype)
    itype = np.int32 if dtype == np.float32 else np.int64
    gi, wi = got.view(itype).astype(np.int64), want.view(itype).astype(np.int64)
    imin = np.iinfo(itype).min
    gi = np.where(gi < 0, imin - gi, gi)
    wi = np.where(wi < 0, imin - wi, wi)
    err = np.abs(gi - wi)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    return int(np.max(np.where(same, 0, err)))


def api_checks(ptx):
    mod = load(ptx)
    records, asserts, dropped, size = read_log(mod)
    check(records == [] and asserts == 0, f"fresh module: empty log ({size} bytes)")
    launch(fn(mod, "_Z16print_and_assertPKii"), (1,), (4,), [ctypes.c_uint64(0x1234), ctypes.c_int(2)])
    records, asserts, dropped, _ = read_log(mod)
    for kind, text in records:
        print("     log:", kind, repr(text))
    prints = sorted(t for k, t in records if k == 1)
    want = sorted([f"thread {t} of 4: {1.5 * t:f} device 0x1234 beef -1234567890123 (null) k 2.00e+00%\n" for t in range(4)] + ["no arguments\n"] * 4)
    check(prints == want, "printf records (%d %u %f %s %p %x %lld null %s %c %e %%)")
    fails = [t for k, t in records if k == 2]
    check(len(fails) == 1 and "thread: [2,0,0]" in fails[0] and "static_cast<int>(threadIdx.x) != fail_at" in fails[0], "assert record")
    check(asserts == 1 and dropped == 0, "asserts counted, nothing dropped; the synchronize after exit succeeded")

    ones = Buf(np.ones(1024, np.float32)); total = Buf(np.zeros(1, np.float32))
    launch(fn(mod, "_Z10reduce_sumPKfPfi"), (4,), (256,), [ones, total, ctypes.c_int(1024)])
    check(total.get()[0] == 1024.0, "reduce_sum after an assert: the context still works")

    values = np.arange(64, dtype=np.int32)
    out, ballots = Buf(np.zeros(1, np.int32)), Buf(np.zeros(4, np.uint64))
    launch(fn(mod, "_Z11warp_reducePKiPiPy"), (2,), (32,), [Buf(values), out, ballots])
    expect = 0
    for w in range(2):
        v = values[w * 32:(w + 1) * 32].astype(np.int64).copy()
        for off in (16, 8, 4, 2, 1):
            v = v + np.array([v[l + off] if l + off < 32 else v[l] for l in range(32)])
        expect += v[0] + v[1] + v[0]
    check(out.get()[0] == expect, f"warp shuffles: {out.get()[0]} == {expect}")
    check(list(ballots.get()) == [0xFFFFFFFF | (1 << 40)] * 2 + [0xAA | (30 << 32)] * 2, "ballot / any / all / activemask, also in a divergent branch")

    data = np.random.default_rng(1).integers(0, 256, 10000).astype(np.uint8)
    bins = Buf(np.zeros(256, np.uint32))
    launch(fn(mod, "_Z9histogramPKhiPj"), (4,), (256,), [Buf(data), ctypes.c_int(10000), bins])
    check((bins.get() == np.bincount(data, minlength=256)).all(), "histogram with shared atomics")

    a = np.random.default_rng(2).random((16, 16), dtype=np.float32)
    b = np.random.default_rng(3).random((16, 16), dtype=np.float32)
    c = Buf(np.zeros((16, 16), np.float32))
    launch(fn(mod, "_Z6matmulPKfS0_Pfi"), (1, 1), (16, 16), [Buf(a), Buf(b), c, ctypes.c_int(16)], shared=16 * 16 * 4)
    check(np.allclose(c.get(), a @ b, rtol=1e-5), "tiled matmul with dynamic shared memory")

    vin = np.random.default_rng(4).random((32, 4), dtype=np.float32)
    vout, ints = Buf(np.zeros((32, 4), np.float32)), Buf(np.zeros((32, 2), np.int32))
    launch(fn(mod, "_Z11vector_mathPK6float4PS_P4int2"), (1,), (32,), [Buf(vin), vout, ints])
    v = vin * np.float32(2) + np.array([1, 2, 3, 4], np.float32)
    v = v - vin / np.float32(4)
    v = -v + np.float32(0.5) * v
    check(np.allclose(vout.get(), v, rtol=1e-6), "float4 operators")
    k = np.stack([np.arange(32), -np.arange(32)], axis=1)
    k = (k << 1) ^ np.array([3, 5])
    k = np.fmod(k, 7)
    got = ints.get()
    check(all((got[i] == k[i]).all() for i in range(32) if (k[i] != 0).any()), "int2 operators")

    gi, gu = Buf(np.zeros(8, np.int32)), Buf(np.zeros(8, np.uint32))
    gull, gf, gd = Buf(np.zeros(4, np.uint64)), Buf(np.zeros(4, np.float32)), Buf(np.zeros(2, np.float64))
    launch(fn(mod, "_Z7atomicsPiPjPyPfPd"), (1,), (64,), [gi, gu, gull, gf, gd])
    i, u, ull, f, d = gi.get(), gu.get(), gull.get(), gf.get(), gd.get()
    check(list(i[:5]) == [-64, -3, 5, 64, 65], f"int atomics, scoped atomics, __syncthreads_count: {list(i[:5])}")
    check(list(u[:3]) == [7, 64, 37] and u[4] == 1, f"unsigned atomics, atomicInc/Dec: {list(u[:5])}")
    check(i[5] == 3 and u[5] == 2, f"atomicMax_block, atomicOr_system: {i[5]} {u[5]}")
    check(list(ull) == [9, 0, 64, 4], f"64-bit atomics: {list(ull)}")
    check(list(f[:3]) == [2.0, 0.0, 64.0] and list(d) == [64.0, 3.0], f"float/double atomics: {list(f[:3])} {list(d)}")


FLOATS = ["sqrtf", "rsqrtf", "expf", "exp2f", "logf", "log2f", "log10f", "sinf", "cosf", "tanf", "powf", "fabsf",
          "floorf", "ceilf", "roundf", "truncf", "rintf", "fminf", "fmaxf", "fmaf", "__expf", "__logf", "__sinf",
          "__cosf", "__powf", "std::exp", "std::sin", "std::pow(x,2)"]
DOUBLES = ["sqrt", "rsqrt", "exp", "exp2", "log", "log2", "log10", "sin", "cos", "tan", "pow", "fabs", "floor", "ceil",
           "round", "trunc", "rint", "fmin", "fmax", "fma"]


def reference(x, exponent):
    """`exponent`: pow's second argument as the kernel has it (1.7f for float, 1.7 for double)."""
    r = [np.sqrt(x), 1 / np.sqrt(x), np.exp(x), np.exp2(x), np.log(x), np.log2(x), np.log10(x), np.sin(x), np.cos(x),
         np.tan(x), np.power(x, exponent), np.abs(x), np.floor(x), np.ceil(x), np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5)),
         np.trunc(x), np.rint(x), np.minimum(x, 0.5), np.maximum(x, 0.5), x * x + 1]
    return r


def math_checks(ptx, label, limits):
    mod = load(ptx)
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(0.001, 10, 3000), rng.uniform(10, 80, 500), rng.uniform(-3, 3, 500) ** 2 + 1e-3])
    n = len(x)
    xf = x.astype(np.float32)
    out = Buf(np.zeros(len(FLOATS) * n, np.float32))
    launch(fn(mod, "_Z15float_functionsPKfPfi"), ((n + 255) // 256,), (256,), [Buf(xf), out, ctypes.c_int(n)])
    got = out.get().reshape(len(FLOATS), n)
    pow_f = float(np.float32(1.7))  # the kernels call powf(x, 1.7f)
    ref = reference(xf.astype(np.float64), pow_f)
    ref_f = [r.astype(np.float32) for r in ref] + [np.exp(xf.astype(np.float64)), np.log(xf.astype(np.float64)),
             np.sin(xf.astype(np.float64)), np.cos(xf.astype(np.float64)), np.power(xf.astype(np.float64), pow_f),
             np.exp(xf.astype(np.float64)), np.sin(xf.astype(np.float64)), np.power(xf.astype(np.float64), 2.0)]
    ok = True
    for row, name in enumerate(FLOATS):
        want = ref_f[row].astype(np.float32)
        if name == "fmaf":
            want = (xf.astype(np.float64) * xf + 1).astype(np.float32)
        if name.startswith("__"):
            rel = float(np.max(np.abs(got[row] - want) / np.maximum(np.abs(want), 1e-30)))
            print(f"     {label} {name:14s} max relative error {rel:.2e} (hardware approximation)")
            ok &= rel < 1e-2 or name in ("__sinf", "__cosf")
            continue
        e = ulp_error(got[row], want, np.float32)
        print(f"     {label} {name:14s} max {e} ulp")
        ok &= e <= limits.get(name, 1)
    check(ok, f"{label}: float math within limits")
    dout = Buf(np.zeros(len(DOUBLES) * n, np.float64))
    launch(fn(mod, "_Z16double_functionsPKdPdi"), ((n + 255) // 256,), (256,), [Buf(x), dout, ctypes.c_int(n)])
    got = dout.get().reshape(len(DOUBLES), n)
    ref = reference(x, 1.7)
    ok = True
    for row, name in enumerate(DOUBLES):
        want = ref[row] if name != "fma" else np.array([float(np.longdouble(v) * np.longdouble(v) + 1) for v in x])
        e = ulp_error(got[row], want, np.float64)
        print(f"     {label} {name:14s} max {e} ulp")
        ok &= e <= limits.get(name + "(double)", 4)
    check(ok, f"{label}: double math within limits")


NVRTC_SOURCE = rb"""
#include <hip/hip_runtime.h>
extern "C" __global__ void rtc_print(int fail_at) {
  const char* who = "nvrtc";
  printf("rtc %s %d %u %.3f %llx\n", who, (int)threadIdx.x, 7u, 0.25, 0xabcdefULL);
  assert((int)threadIdx.x != fail_at);
}
"""


def nvrtc_checks(hip_compat, device_log):
    nvrtc = ctypes.CDLL("libnvrtc.so")
    names = [b"hip/hip_runtime.h", b"hip_remote/device_log.h"]
    srcs = [hip_compat, device_log]
    for rdc in (False, True):
        prog = P()
        ck(nvrtc.nvrtcCreateProgram(ctypes.byref(prog), NVRTC_SOURCE, b"rtc.hip", 2, (ctypes.c_char_p * 2)(*srcs), (ctypes.c_char_p * 2)(*names)), "nvrtcCreateProgram")
        opts = [f"--gpu-architecture=compute_{SM}".encode(), b"-std=c++17"] + ([b"--relocatable-device-code=true"] if rdc else [])
        r = nvrtc.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
        logsize = ctypes.c_size_t()
        nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(logsize))
        log = ctypes.create_string_buffer(logsize.value)
        nvrtc.nvrtcGetProgramLog(prog, log)
        if log.value.strip():
            print("     nvrtc log:", log.value.decode())
        check(r == 0, f"NVRTC compiles printf/assert through hip_compat.h (rdc={rdc})")
        size = ctypes.c_size_t()
        nvrtc.nvrtcGetPTXSize(prog, ctypes.byref(size))
        ptx = ctypes.create_string_buffer(size.value)
        nvrtc.nvrtcGetPTX(prog, ptx)
        decl = [l for l in ptx.value.decode().splitlines() if "__hip_remote_device_log" in l and ("global" in l)]
        print("     ptx:", decl[:1], f"{size.value} bytes")
        if rdc:
            check(any(".weak" in l for l in decl), "rdc PTX: the log is .weak")
            continue
        mod = load(ptx.value)
        launch(fn(mod, "rtc_print"), (1,), (3,), [ctypes.c_int(1)])
        records, asserts, dropped, _ = read_log(mod)
        for kind, text in records:
            print("     log:", kind, repr(text))
        want = sorted(f"rtc nvrtc {t} 7 0.250 abcdef\n" for t in range(3))
        check(sorted(t for k, t in records if k == 1) == want and asserts == 1, "NVRTC printf and assert records")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--api")
    ap.add_argument("--math")
    ap.add_argument("--math-libdevice")
    ap.add_argument("--hip-compat")
    ap.add_argument("--device-log")
    a = ap.parse_args()
    if a.api:
        api_checks(open(a.api, "rb").read())
    # pow of double: 7 ulp measured on an H100 (2026-11-24) while the same algorithm gives 2 ulp
    # on the host (tests/hip/device_math_check.cpp, narrower arguments): documented in
    # docs/KERNELS.md.
    limits = {"tan": 2, "powf": 1, "pow(double)": 7, "tan(double)": 4}
    if a.math:
        math_checks(open(a.math, "rb").read(), "no libdevice", limits)
    if a.math_libdevice:
        # libdevice's powf: 6 ulp measured on the H100 (CUDA documents 4 for its own powf).
        math_checks(open(a.math_libdevice, "rb").read(), "libdevice", dict(limits, **{"rsqrtf": 2, "pow(double)": 4, "sinf": 2, "cosf": 2, "tanf": 4, "expf": 2, "exp2f": 2, "logf": 2, "log2f": 2, "log10f": 2, "powf": 6, "std::exp": 2, "std::sin": 2, "std::pow(x,2)": 2}))
    if a.hip_compat:
        nvrtc_checks(open(a.hip_compat, "rb").read(), open(a.device_log, "rb").read())
    print("all checks passed")
