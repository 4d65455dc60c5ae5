//! hipcc's device headers (`client-capi/include/hip_remote/hipcc_device.h`): the kernel samples
//! in `tests/hip/` go through both clang passes of hip-remote's hipcc, the host pass (kernels
//! checked, stubs emitted) and the NVIDIA pass (PTX). The PTX must name its kernels, hold the
//! device log, and call nothing it does not define; with `HIP_REMOTE_PTXAS` (ptxas of the
//! nvidia-cuda-nvcc wheel) it is also assembled for sm_90 (warnings are errors), and, when
//! that wheel's libdevice.10.bc is beside it, compiled once more with libdevice linked.
//! Skipped where clang-15 is missing. The PTX's behaviour on a GPU: `tests/hip/device_check.py`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The clang driver hipcc uses, if this machine has it.
fn clang() -> Option<String> {
    let name = std::env::var("HIP_REMOTE_CLANG").unwrap_or_else(|_| "clang++-15".to_string());
    let found = Command::new(&name).arg("--version").output().map(|o| o.status.success()).unwrap_or(false);
    found.then_some(name)
}

fn scratch(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hip-remote-hipcc-device-{label}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs a compiler command; panics with its output unless it succeeds.
fn run(mut cmd: Command, what: &str) {
    let out = cmd.current_dir(repo_root()).output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(out.status.success(), "{what} failed:\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

const HEADER_ARGS: [&str; 4] = ["-D__HIP_REMOTE_HIPCC__=1", "-I", "client-capi/include", "-include"];

fn host_pass(clang: &str, source: &str, object: &Path) {
    let mut cmd = Command::new(clang);
    cmd.args(["-x", "hip", "--cuda-host-only", "-nogpuinc", "-nogpulib", "--offload-arch=gfx90a"])
        .args(HEADER_ARGS)
        .args(["hip_remote/hipcc_device.h", "-Werror", "-c", source, "-o"])
        .arg(object);
    run(cmd, &format!("host pass of {source}"));
}

fn nvidia_pass(clang: &str, source: &str, ptx: &Path, extra: &[&str]) {
    let mut cmd = Command::new(clang);
    cmd.args(["-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_70", "-nocudainc", "-nocudalib"])
        .args(HEADER_ARGS)
        .args(["hip_remote/hipcc_device.h", "-Werror"])
        .args(extra)
        .args(["-S", source, "-o"])
        .arg(ptx);
    run(cmd, &format!("NVIDIA pass of {source}"));
}

/// PTX checks that need no NVIDIA tools: the entries are there, nothing is external but the
/// dynamic shared array, every module holds the (zero-initialised) device log, and the module
/// stays small (no megabyte initialiser for the log).
fn check_ptx(ptx: &Path, entries: &[&str]) {
    let text = std::fs::read_to_string(ptx).unwrap();
    for entry in entries {
        assert!(text.contains(&format!(".entry {entry}(")), "{} lacks the entry {entry}", ptx.display());
    }
    let externs: Vec<&str> = text.lines().filter(|l| l.contains(".extern") && !l.contains(".shared")).collect();
    assert!(externs.is_empty(), "{} has unresolved symbols: {externs:?}", ptx.display());
    let log = ".weak .global .align 8 .b8 __hip_remote_device_log[1048608];";
    assert!(text.contains(log), "{} lacks the device log", ptx.display());
    assert!(text.len() < 1 << 20, "{} is {} bytes", ptx.display(), text.len());
}

fn ptxas() -> Option<PathBuf> {
    std::env::var_os("HIP_REMOTE_PTXAS").map(PathBuf::from)
}

fn assemble(ptxas: &Path, ptx: &Path) {
    let mut cmd = Command::new(ptxas);
    cmd.args(["-arch=sm_90", "--warning-as-error"]).arg(ptx).args(["-o", "/dev/null"]);
    run(cmd, &format!("ptxas {}", ptx.display()));
}

const API_ENTRIES: &[&str] = &[
    "_Z10reduce_sumPKfPfi",
    "_Z11warp_reducePKiPiPy",
    "_Z9histogramPKhiPj",
    "_Z6matmulPKfS0_Pfi",
    "_Z16print_and_assertPKii",
    "_Z11vector_mathPK6float4PS_P4int2",
    "_Z11math_kernelPKfPfPdPy",
    "_Z7atomicsPiPjPyPfPd",
    "_Z5scaleIfLi3EEvPT_i",
    "_Z5scaleIfLi2EEvPT_i",
];
const MATH_ENTRIES: &[&str] = &["_Z15float_functionsPKfPfi", "_Z16double_functionsPKdPdi"];

#[test]
fn kernel_samples_compile_in_both_passes() {
    let Some(clang) = clang() else {
        transport_core::test_skip::skip("hipcc device headers: clang++-15 not found (set HIP_REMOTE_CLANG)");
        return;
    };
    let dir = scratch("samples");
    let ptxas = ptxas();
    let libdevice =
        ptxas.as_ref().and_then(|p| p.parent()?.parent().map(|wheel| wheel.join("nvvm/libdevice/libdevice.10.bc"))).filter(|p| p.is_file());
    for (name, entries) in [("device_api", API_ENTRIES), ("device_math", MATH_ENTRIES)] {
        let source = format!("tests/hip/{name}.hip");
        let object = dir.join(format!("{name}.o"));
        host_pass(&clang, &source, &object);
        let stubs = std::fs::read(&object).unwrap();
        let has = |needle: &str| stubs.windows(needle.len()).any(|w| w == needle.as_bytes());
        assert!(has("__device_stub__") && has("__hipPushCallConfiguration") == name.ends_with("api"), "{name}.o: stubs and launches");

        // -O0 too: nothing may rely on the optimiser to disappear (the builtin variables' objects).
        for opt in ["-O2", "-O0"] {
            let ptx = dir.join(format!("{name}{opt}.ptx"));
            nvidia_pass(&clang, &source, &ptx, &[opt]);
            check_ptx(&ptx, entries);
            if let Some(ptxas) = &ptxas {
                assemble(ptxas, &ptx);
            }
        }
        if let (Some(ptxas), Some(libdevice)) = (&ptxas, &libdevice) {
            let linked = dir.join(format!("{name}-libdevice.ptx"));
            let bitcode = libdevice.to_str().unwrap();
            nvidia_pass(&clang, &source, &linked, &["-O2", "-D__HIP_REMOTE_LIBDEVICE__=1", "-Xclang", "-mlink-builtin-bitcode", "-Xclang", bitcode]);
            check_ptx(&linked, entries);
            assemble(ptxas, &linked);
        }
    }
    if ptxas.is_none() {
        transport_core::test_skip::skip("hipcc PTX not assembled: set HIP_REMOTE_PTXAS to a ptxas");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A kernel calling a function the device side does not have fails to compile, naming it,
/// rather than leaving an unresolved call in the PTX.
#[test]
fn unsupported_device_function_is_a_compile_error() {
    let Some(clang) = clang() else {
        transport_core::test_skip::skip("hipcc device headers: clang++-15 not found (set HIP_REMOTE_CLANG)");
        return;
    };
    let dir = scratch("unsupported");
    let source = dir.join("k.hip");
    std::fs::write(&source, "#include <hip/hip_runtime.h>\n__global__ void k(float* x) { x[0] = atan2f(x[1], x[2]); }\n").unwrap();
    let mut cmd = Command::new(&clang);
    cmd.args(["-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_70", "-nocudainc", "-nocudalib"])
        .args(HEADER_ARGS)
        .args(["hip_remote/hipcc_device.h", "-S", "-o", "/dev/null"])
        .arg(&source)
        .current_dir(repo_root());
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("atan2f"), "expected an error naming atan2f:\n{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The double algorithms behind device math without libdevice, checked against the host's libm.
#[test]
fn device_math_algorithms_match_libm() {
    let compiler = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    if !Command::new(&compiler).arg("--version").output().map(|o| o.status.success()).unwrap_or(false) {
        transport_core::test_skip::skip("device math check: no C++ compiler");
        return;
    }
    let dir = scratch("math");
    let exe = dir.join("device_math_check");
    let mut cmd = Command::new(&compiler);
    cmd.args(["-O2", "-std=c++17", "-I", "client-capi/include", "tests/hip/device_math_check.cpp", "-o"]).arg(&exe);
    run(cmd, "compile device_math_check.cpp");
    let out = Command::new(&exe).output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    eprintln!("{report}");
    assert!(out.status.success(), "device math outside its limits:\n{report}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// hip_fp16.h and hip_bf16.h: the half-precision sample through the NVIDIA pass (PTX, assembled
/// when ptxas is here) and the host pass; and each header alone, as C and as C++, under the
/// system compilers (C sees nothing; C++ gets the types on the host).
#[test]
fn half_precision_headers_compile_everywhere() {
    let source = "tests/hip/samples/half_precision.hip";
    for (compiler, lang, body) in [
        ("cc", "c", "int main(void) { return 0; }"),
        ("c++", "c++", "int main() { half2 h = make_half2(1.0f, 2.0f); __hip_bfloat16 b = 1.5f; return (int)(__low2float(h) + float(b)) - 2; }"),
    ] {
        let dir = scratch(&format!("half-{lang}"));
        let file = dir.join(format!("t.{lang}"));
        std::fs::write(&file, format!("#include <hip/hip_fp16.h>\n#include <hip/hip_bf16.h>\n{body}\n")).unwrap();
        let mut cmd = Command::new(compiler);
        cmd.args(["-x", lang, "-Wall", "-Werror", "-I", "client-capi/include", "-fsyntax-only"]).arg(&file);
        run(cmd, &format!("{compiler} -x {lang} with hip_fp16.h and hip_bf16.h"));
    }
    let Some(clang) = clang() else {
        transport_core::test_skip::skip("half-precision headers through hipcc's passes: clang++-15 not found (set HIP_REMOTE_CLANG)");
        return;
    };
    let dir = scratch("half");
    host_pass(&clang, source, &dir.join("half.o"));
    let ptx = dir.join("half.ptx");
    nvidia_pass(&clang, source, &ptx, &["-O2"]);
    check_ptx(&ptx, &["_Z8half_opsPKfS0_Pf", "_Z9roundingsPt"]);
    if let Some(ptxas) = ptxas() {
        assemble(&ptxas, &ptx);
    }
}

/// hip_math_constants.h: every named constant against the C library's (`<math.h>`,
/// `<float.h>`), in a C and a C++ program built and run with the system compilers.
#[test]
fn math_constants_are_the_correctly_rounded_values() {
    let program = r#"#define _GNU_SOURCE 1
#include <hip/hip_math_constants.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#define CHECK(a, b) if ((a) != (b)) { printf("%s != %s\n", #a, #b); bad = 1; }
int main(void) {
    int bad = 0;
    CHECK(HIP_PI, M_PI) CHECK(HIP_PIO2, M_PI_2) CHECK(HIP_PIO4, M_PI_4) CHECK(HIP_2_OVER_PI, M_2_PI)
    CHECK(HIP_SQRT_TWO, M_SQRT2) CHECK(HIP_SQRT_HALF, M_SQRT1_2) CHECK(HIP_LN2, M_LN2) CHECK(HIP_LNT, M_LN10)
    CHECK(HIP_L2E, M_LOG2E) CHECK(HIP_LGE, M_LOG10E) CHECK(HIP_2PI, 2 * M_PI) CHECK(HIP_LG2, log10(2.0))
    CHECK(HIP_L2T, log2(10.0)) CHECK(HIP_LNPI, log(M_PI)) CHECK(HIP_SQRT_PI, sqrt(M_PI)) CHECK(HIP_SQRT_2PI, sqrt(2 * M_PI))
    CHECK(HIP_MAX_NORMAL, DBL_MAX) CHECK(HIP_MIN_DENORM, DBL_TRUE_MIN) CHECK(HIP_TWO_TO_M1022, DBL_MIN)
    CHECK(HIP_THIRD, 1.0 / 3) CHECK(HIP_TWOTHIRD, 2.0 / 3) CHECK(HIP_3PIO4, 3 * M_PI_4)
    CHECK(HIP_PI_F, (float)M_PI) CHECK(HIP_PIO2_F, (float)M_PI_2) CHECK(HIP_PIO4_F, (float)M_PI_4) CHECK(HIP_3PIO4_F, (float)(3 * M_PI_4))
    CHECK(HIP_2_OVER_PI_F, (float)M_2_PI) CHECK(HIP_SQRT_2_OVER_PI_F, (float)sqrt(M_2_PI)) CHECK(HIP_SQRT_TWO_F, (float)M_SQRT2)
    CHECK(HIP_SQRT_HALF_F, (float)M_SQRT1_2) CHECK(HIP_LN2_F, (float)M_LN2) CHECK(HIP_LNT_F, (float)M_LN10) CHECK(HIP_L2E_F, (float)M_LOG2E)
    CHECK(HIP_L2T_F, (float)log2(10.0)) CHECK(HIP_LG2_F, (float)log10(2.0)) CHECK(HIP_LGE_F, (float)M_LOG10E) CHECK(HIP_LNPI_F, (float)log(M_PI))
    CHECK(HIP_THIRD_F, (float)(1.0 / 3)) CHECK(HIP_MAX_NORMAL_F, FLT_MAX) CHECK(HIP_MIN_DENORM_F, FLT_TRUE_MIN) CHECK(HIP_TWO_TO_M126_F, FLT_MIN)
    CHECK(HIP_TWO_TO_126_F, ldexpf(1.0f, 126)) CHECK(HIP_TWO_TO_24_F, 16777216.0f) CHECK(HIP_TWO_TO_52, ldexp(1.0, 52)) CHECK(HIP_TWO_TO_M54, ldexp(1.0, -54))
    CHECK(HIP_SQRT_HALF_HI_F + HIP_SQRT_HALF_LO_F, (float)M_SQRT1_2)
    if (!isinf(HIP_INF_F) || !isnan(HIP_NAN_F) || !isinf(HIP_INF) || !isnan(HIP_NAN) || !signbit(HIP_NEG_ZERO)) { printf("special values\n"); bad = 1; }
    if (!bad) printf("ok\n");
    return bad;
}
"#;
    for (compiler, lang) in [("cc", "c"), ("c++", "c++")] {
        let dir = scratch(&format!("constants-{lang}"));
        let file = dir.join(format!("constants.{lang}"));
        std::fs::write(&file, program).unwrap();
        let exe = dir.join("constants");
        let mut cmd = Command::new(compiler);
        cmd.args(["-x", lang, "-O0", "-I", "client-capi/include"]).arg(&file).arg("-o").arg(&exe).arg("-lm");
        run(cmd, &format!("{compiler} -x {lang} with hip_math_constants.h"));
        let out = Command::new(&exe).output().unwrap();
        assert!(out.status.success(), "{lang}: {}", String::from_utf8_lossy(&out.stdout));
    }
}

/// ROCm 7.2's top-level `include/hip/` headers (ROCm's `clr`/`HIP` trees), all of which
/// hip-remote installs.
const ROCM_HEADERS: &[&str] = &[
    "channel_descriptor.h",
    "device_functions.h",
    "driver_types.h",
    "hip_bf16.h",
    "hip_bfloat16.h",
    "hip_common.h",
    "hip_complex.h",
    "hip_cooperative_groups.h",
    "hip_deprecated.h",
    "hip_ext.h",
    "hip_ext_ocp.h",
    "hip_fp16.h",
    "hip_fp4.h",
    "hip_fp6.h",
    "hip_fp8.h",
    "hip_gl_interop.h",
    "hip_hcc.h",
    "hip_math_constants.h",
    "hip_profile.h",
    "hip_runtime.h",
    "hip_runtime_api.h",
    "hip_texture_types.h",
    "hip_vector_types.h",
    "hip_version.h",
    "hiprtc.h",
    "library_types.h",
    "linker_types.h",
    "math_functions.h",
    "surface_types.h",
    "texture_types.h",
];

/// Every ROCm header alone in a program, as C and C++ under the system compilers (warnings
/// are errors), then all of them together with a kernel through both of hipcc's clang passes.
#[test]
fn every_rocm_header_compiles_alone() {
    let dir = scratch("rocm-headers");
    for header in ROCM_HEADERS {
        assert!(repo_root().join("client-capi/include/hip").join(header).is_file(), "hip/{header} is missing");
        for (compiler, lang) in [("cc", "c"), ("c++", "c++")] {
            let file = dir.join(format!("t.{lang}"));
            std::fs::write(&file, format!("#include <hip/{header}>\nint main(void) {{ return 0; }}\n")).unwrap();
            let mut cmd = Command::new(compiler);
            cmd.args(["-x", lang, "-Wall", "-Werror", "-I", "client-capi/include", "-fsyntax-only"]).arg(&file);
            run(cmd, &format!("{compiler} -x {lang} with hip/{header} alone"));
        }
    }
    let Some(clang) = clang() else {
        transport_core::test_skip::skip("ROCm headers through hipcc's passes: clang++-15 not found (set HIP_REMOTE_CLANG)");
        return;
    };
    let all: String = ROCM_HEADERS.iter().map(|h| format!("#include <hip/{h}>\n")).collect();
    let source = dir.join("all.hip");
    std::fs::write(&source, format!("{all}__global__ void k(float* x) {{ x[0] = __half2float(__float2half(x[1])); }}\n")).unwrap();
    let source = source.to_str().unwrap();
    host_pass(&clang, source, &dir.join("all.o"));
    let ptx = dir.join("all.ptx");
    nvidia_pass(&clang, source, &ptx, &["-O2", "-Wall"]);
    check_ptx(&ptx, &["_Z1kPf"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The new samples' kernels (fp8/fp6/fp4/complex, cooperative groups, AMD device functions)
/// through both passes, PTX checked (and assembled when ptxas is here); they run on a host
/// worker in `hip_samples.rs` and on NVIDIA through `scripts/device-test.sh`.
#[test]
fn header_samples_compile_for_nvidia() {
    let Some(clang) = clang() else {
        transport_core::test_skip::skip("header samples through hipcc's passes: clang++-15 not found (set HIP_REMOTE_CLANG)");
        return;
    };
    let dir = scratch("header-samples");
    for (name, entries) in [
        ("low_precision", &["_Z6encodePKfiPh", "_Z6decodePfPt", "_Z11complex_opsPfPd"][..]),
        ("cooperative_groups", &["_Z6groupsPi", "_Z13grid_exchangePiS_"][..]),
        ("amd_device_functions", &["_Z9functionsPKjS0_S0_PKfPj"][..]),
    ] {
        let source = format!("tests/hip/samples/{name}.hip");
        host_pass(&clang, &source, &dir.join(format!("{name}.o")));
        let ptx = dir.join(format!("{name}.ptx"));
        nvidia_pass(&clang, &source, &ptx, &["-O2"]);
        check_ptx(&ptx, entries);
        if let Some(ptxas) = ptxas() {
            assemble(&ptxas, &ptx);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
