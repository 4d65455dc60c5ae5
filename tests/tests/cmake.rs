//! CMake projects against an installed layout (`hip-remote install`), both ways ROCm users
//! build HIP with CMake, each program run against the layout's host worker and its results
//! checked:
//! - `enable_language(HIP)` with `HIPCXX=$(hipconfig -l)/clang++` (our clang-compatible driver:
//!   CMake probes it as a clang, reads our prefix from its `-v` output and loads our
//!   `hip-lang` package);
//! - `CXX=hipcc` with `find_package(hip)` and `hip::device`.
//!
//! `tests/cmake/saxpy` also finds hiprtc, hipblas and rocblas, and fails its configure unless
//! `find_package(hip)` found HIP 7.2 (ours, not Debian's ROCm 5.2 in `/usr`, when that is
//! installed). Three of AMD's rocm-examples (`tests/third_party/rocm-examples`) are built by their
//! own CMakeLists.txt (`-DROCM_ROOT=` the layout) and run: two check their own results, saxpy's
//! printed elements are compared with a*x+y. The pkg-config files are checked by compiling and
//! linking a C program with them.
//! Skipped (a counted skip) without cmake or clang.

use hip_remote_tests::{client_command, run_with_timeout, target_debug_dir, workspace_root, TempDir, WorkerProcess, DEFAULT_WORKER_MIB, RUN_TIMEOUT};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Elements the saxpy program checks (its `n`).
const SAXPY_ELEMENTS: usize = 10000;

fn available(program: &str, arg: &str) -> bool {
    Command::new(program).arg(arg).output().is_ok_and(|o| o.status.success())
}

/// A command with nothing from the environment that could point a build elsewhere than the
/// layout.
fn clean(program: impl AsRef<std::ffi::OsStr>, prefix: &Path) -> Command {
    let mut cmd = Command::new(program);
    for var in [
        "CPATH",
        "C_INCLUDE_PATH",
        "CPLUS_INCLUDE_PATH",
        "LIBRARY_PATH",
        "HIP_PATH",
        "HIP_REMOTE_LIB",
        "HIPCXX",
        "CXX",
        "CC",
        "HIPFLAGS",
        "CXXFLAGS",
        "PKG_CONFIG_PATH",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("ROCM_PATH", prefix);
    cmd
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn install(prefix: &Path) {
    let hip_remote = target_debug_dir().join("hip-remote");
    assert!(hip_remote.is_file(), "{} is missing; run `cargo build --workspace` first", hip_remote.display());
    let out = Command::new(&hip_remote).arg("install").arg("--prefix").arg(prefix).output().expect("run hip-remote install");
    assert!(out.status.success(), "hip-remote install failed:\n{}", text(&out));
}

/// The clang-compatible driver, as ROCm's documentation finds it: the clang that
/// `hipconfig -l` names.
fn hip_compiler(prefix: &Path) -> PathBuf {
    let out = clean(prefix.join("bin/hipconfig"), prefix).arg("-l").output().unwrap();
    assert!(out.status.success(), "hipconfig -l: {}", text(&out));
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert_eq!(dir, prefix.join("lib/llvm/bin"), "hipconfig -l names the layout's clang directory");
    dir.join("clang++")
}

/// Configures `source` in `build` with `compiler` as `HIPCXX` or `CXX` and builds it; the
/// configure log.
fn configure_and_build(prefix: &Path, source: &Path, build: &Path, compiler: (&str, PathBuf), defines: &[String]) -> String {
    let mut configure = clean("cmake", prefix);
    configure.arg("-S").arg(source).arg("-B").arg(build).args(defines).env(compiler.0, &compiler.1);
    let out = configure.output().expect("run cmake");
    let log = text(&out);
    assert!(out.status.success(), "{}: cmake configure failed:\n{log}", source.display());
    let out = clean("cmake", prefix).arg("--build").arg(build).arg("--verbose").output().expect("run cmake --build");
    assert!(out.status.success(), "{}: build failed:\n{}", source.display(), text(&out));
    log
}

/// Configures and builds `tests/cmake/saxpy` in `build` the given way; the program's path.
fn build_saxpy(prefix: &Path, build: &Path, style: &str) -> PathBuf {
    let source = workspace_root().join("tests/cmake/saxpy");
    let compiler = match style {
        "language" => ("HIPCXX", hip_compiler(prefix)),
        _ => ("CXX", prefix.join("bin/hipcc")),
    };
    let defines = [format!("-DCMAKE_PREFIX_PATH={}", prefix.display()), format!("-DHIP_REMOTE_STYLE={style}")];
    let log = configure_and_build(prefix, &source, build, compiler, &defines);
    assert!(log.contains(&format!("hip 7.2.53211 from {}", prefix.join("lib/cmake/hip").display())), "{style}: {log}");
    if style == "language" {
        assert!(log.contains("The HIP compiler identification is Clang"), "{style}: {log}");
    }
    build.join("saxpy")
}

/// Builds the vendored rocm-examples samples; `(sample, program)` pairs.
fn build_rocm_examples(prefix: &Path, build: &Path) -> Vec<(String, PathBuf)> {
    let source = workspace_root().join("tests/cmake/rocm-examples");
    configure_and_build(prefix, &source, build, ("HIPCXX", hip_compiler(prefix)), &[format!("-DROCM_ROOT={}", prefix.display())]);
    ["saxpy", "matrix_multiplication", "shared_memory"].iter().map(|s| (s.to_string(), build.join(s).join(format!("hip_{s}")))).collect()
}

#[test]
fn cmake_projects_build_both_ways_and_run() {
    if !available("cmake", "--version") {
        transport_core::test_skip::skip("CMake projects: no cmake here (apt-get install cmake)");
        return;
    }
    let tmp = TempDir::new("cmake_layout");
    let prefix = tmp.path().join("rocm");
    install(&prefix);
    let version = clean(prefix.join("bin/hipcc"), &prefix).arg("--version").output().unwrap();
    if !String::from_utf8_lossy(&version.stdout).lines().any(|l| l.starts_with("Compiler: ")) {
        transport_core::test_skip::skip("CMake projects: the installed hipcc finds no clang here");
        return;
    }
    // The builds in parallel: each is mostly waiting on clang.
    let (saxpy_builds, samples) = std::thread::scope(|s| {
        let samples = s.spawn(|| build_rocm_examples(&prefix, &tmp.path().join("build-rocm-examples")));
        let styles: Vec<_> = ["language", "hipcc"]
            .into_iter()
            .map(|style| {
                let (prefix, build) = (prefix.clone(), tmp.path().join(format!("build-{style}")));
                s.spawn(move || (style.to_string(), build_saxpy(&prefix, &build, style)))
            })
            .collect();
        let builds: Vec<(String, PathBuf)> = styles.into_iter().map(|h| h.join().expect("build thread")).collect();
        (builds, samples.join().expect("rocm-examples build thread"))
    });

    let worker = WorkerProcess::start(&prefix.join("bin/hip-worker"), DEFAULT_WORKER_MIB, &tmp.path().join("worker.log"));
    let run = |exe: &Path| {
        let mut run = client_command(exe, worker.addr());
        run.env("LD_LIBRARY_PATH", prefix.join("lib")).env_remove("HIP_REMOTE_DEBUG");
        let out = run_with_timeout(run, RUN_TIMEOUT);
        out.assert_success();
        out
    };
    for (style, exe) in &saxpy_builds {
        let out = run(exe);
        // The program compares every element with the host's a*x+y; hiprtc answers 7.2.
        let expected = format!("style {style}: 0 of {SAXPY_ELEMENTS} elements wrong; hiprtc 7.2");
        assert!(out.stdout.contains(&expected) && out.stdout.contains("PASSED"), "{style}: {}", out.report());
    }
    for (sample, exe) in &samples {
        let out = run(exe);
        if sample == "saxpy" {
            // y = 2 * x + 1 with x = 1, 2, 3, ... (the sample prints its first ten elements).
            let first: Vec<String> = (1..=10).map(|x| (2 * x + 1).to_string()).collect();
            let expected = format!("[ {} ]", first.join(", "));
            assert!(out.stdout.contains(&expected), "rocm-examples {sample}: expected {expected}: {}", out.report());
        } else {
            assert!(out.stdout.contains("Validation passed."), "rocm-examples {sample}: {}", out.report());
        }
    }
}

#[test]
fn pkg_config_files_compile_and_link_from_the_layout() {
    if !available("pkg-config", "--version") {
        transport_core::test_skip::skip("pkg-config files: no pkg-config here");
        return;
    }
    let tmp = TempDir::new("pkg_config_layout");
    let prefix = tmp.path().join("rocm");
    install(&prefix);
    let flags = |package: &str| {
        let mut cmd = clean("pkg-config", &prefix);
        let out = cmd.env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig")).args(["--cflags", "--libs", package]).output().unwrap();
        assert!(out.status.success(), "pkg-config {package}: {}", text(&out));
        String::from_utf8_lossy(&out.stdout).split_whitespace().map(String::from).collect::<Vec<_>>()
    };
    let lib = prefix.join("lib");
    for package in ["hip", "hiprtc", "hipblas"] {
        let flags = flags(package);
        let include = std::fs::canonicalize(prefix.join("include")).unwrap();
        let named_include = flags.iter().filter_map(|f| f.strip_prefix("-I")).any(|d| std::fs::canonicalize(d).ok().as_deref() == Some(&include));
        assert!(named_include, "{package}: {flags:?}");
        let named_lib = flags.iter().filter_map(|f| f.strip_prefix("-L")).any(|d| std::fs::canonicalize(d).ok() == std::fs::canonicalize(&lib).ok());
        assert!(named_lib, "{package}: {flags:?}");
    }
    let src = tmp.path().join("prog.c");
    std::fs::write(
        &src,
        "#include <hip/hip_runtime_api.h>\n#include <hip/hiprtc.h>\n\
         int main(void) { int major = 0, minor = 0; int count = 0;\n\
         hiprtcVersion(&major, &minor); return hipGetDeviceCount(&count) == hipSuccess && major == 7 ? 0 : 1; }\n",
    )
    .unwrap();
    let exe = tmp.path().join("prog");
    let mut cc = clean("cc", &prefix);
    cc.arg(&src).arg("-o").arg(&exe).args(flags("hip")).args(flags("hiprtc"));
    let out = cc.output().unwrap();
    assert!(out.status.success(), "{cc:?}: {}", text(&out));
    let worker = WorkerProcess::start(&prefix.join("bin/hip-worker"), DEFAULT_WORKER_MIB, &tmp.path().join("worker.log"));
    // The rpath the .pc files give finds the layout's libraries without LD_LIBRARY_PATH.
    let mut run = client_command(&exe, worker.addr());
    run.env_remove("LD_LIBRARY_PATH").env_remove("HIP_REMOTE_DEBUG");
    run_with_timeout(run, RUN_TIMEOUT).assert_success();
}
