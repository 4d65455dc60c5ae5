//! `hip-remote install --prefix DIR` writes a ROCm-style layout, and programs
//! built and run with nothing but `ROCM_PATH=DIR` / `LD_LIBRARY_PATH=DIR/lib` work against the
//! installed `bin/hip-worker`: a C program compiled with `cc -I DIR/include -L DIR/lib
//! -lamdhip64` (no rpath) and a `.hip` program built by the installed `bin/hipcc`.

use hip_remote_tests::{client_command, run_with_timeout, target_debug_dir, workspace_root, TempDir, WorkerProcess, DEFAULT_WORKER_MIB, RUN_TIMEOUT};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The C program: device memory round trip through the installed libamdhip64, and a roctx
/// range through the installed libroctx64 (a shim: it must load and count).
const C_PROGRAM: &str = r#"
#include <hip/hip_runtime.h>
#include <stdio.h>
#include <string.h>

int roctxRangePushA(const char *message);
int roctxRangePop(void);

int main(void) {
    int count = 0;
    if (hipGetDeviceCount(&count) != hipSuccess || count < 1) { printf("no device\n"); return 1; }
    int host[256], back[256];
    for (int i = 0; i < 256; i++) host[i] = i * 7 + 1;
    void *dev = NULL;
    if (hipMalloc(&dev, sizeof host) != hipSuccess) { printf("hipMalloc failed\n"); return 1; }
    if (hipMemcpy(dev, host, sizeof host, hipMemcpyHostToDevice) != hipSuccess) return 2;
    if (hipMemcpy(back, dev, sizeof back, hipMemcpyDeviceToHost) != hipSuccess) return 3;
    if (memcmp(host, back, sizeof host) != 0) { printf("round trip differs\n"); return 4; }
    hipFree(dev);
    int level = roctxRangePushA("installed");
    int popped = roctxRangePop();
    printf("round trip ok, %d device(s), roctx levels %d %d\n", count, level, popped);
    return 0;
}
"#;

/// A command with the variables that could let a build or run escape the layout removed, and
/// the layout's own set: ROCM_PATH, ROCM_HOME, LD_LIBRARY_PATH.
fn in_layout(mut cmd: Command, prefix: &Path) -> Command {
    for var in ["CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "LIBRARY_PATH", "HIP_PATH", "HIP_REMOTE_LIB"] {
        cmd.env_remove(var);
    }
    cmd.env("ROCM_PATH", prefix).env("ROCM_HOME", prefix).env("LD_LIBRARY_PATH", prefix.join("lib"));
    cmd
}

fn install(prefix: &Path) {
    let hip_remote = target_debug_dir().join("hip-remote");
    assert!(hip_remote.is_file(), "{} is missing; run `cargo build --workspace` first", hip_remote.display());
    let out = Command::new(&hip_remote).arg("install").arg("--prefix").arg(prefix).output().expect("run hip-remote install");
    assert!(out.status.success(), "hip-remote install failed:\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("ROCM_PATH={}", prefix.display())));
}

fn link_target(path: PathBuf) -> String {
    std::fs::read_link(&path).unwrap_or_else(|e| panic!("{} is not a link: {e}", path.display())).to_string_lossy().into_owned()
}

fn start_installed_worker(prefix: &Path, tmp: &TempDir) -> WorkerProcess {
    WorkerProcess::start(&prefix.join("bin/hip-worker"), DEFAULT_WORKER_MIB, &tmp.path().join("worker.log"))
}

#[test]
fn layout_has_rocm_names() {
    let tmp = TempDir::new("install_layout");
    let prefix = tmp.path().join("rocm");
    install(&prefix);
    // Twice: a reinstall over an existing layout replaces it in place.
    install(&prefix);
    let lib = prefix.join("lib");
    for name in ["libamdhip64", "libhiprtc"] {
        let real = link_target(lib.join(format!("{name}.so.7")));
        assert!(real.starts_with(&format!("{name}.so.7.")) && real.split('.').count() == 5, "{name}.so.7 -> {real}");
        assert!(lib.join(&real).is_file() && !lib.join(&real).is_symlink());
        assert_eq!(link_target(lib.join(format!("{name}.so"))), format!("{name}.so.7"));
    }
    for shim in hip_remote_shims::SHIMS {
        assert!(lib.join(shim.soname).is_file() && !lib.join(shim.soname).is_symlink(), "{}", shim.soname);
        assert_eq!(link_target(lib.join(shim.link_name())), shim.soname);
    }
    for file in [
        "include/hip/hip_runtime.h",
        "include/hip/hip_version.h",
        "include/hip_remote/hipcc_device.h",
        "bin/hipcc",
        "bin/hipconfig",
        "bin/hip-worker",
        "bin/hip-remote",
        "lib/libamd_smi.so",
        "lib/cmake/hip/hip-config.cmake",
        "lib/cmake/hip/hip-config-version.cmake",
        "lib/cmake/hip/hip-targets.cmake",
        "lib/cmake/hip-lang/hip-lang-config.cmake",
        "lib/cmake/hiprtc/hiprtc-config.cmake",
        "lib/cmake/hipblas/hipblas-config.cmake",
        "lib/cmake/rocblas/rocblas-config.cmake",
        "lib/pkgconfig/hip.pc",
    ] {
        assert!(prefix.join(file).is_file(), "{file} is missing");
    }
    // ROCm's clang directory holds our clang-compatible driver: hipcc, called as clang++.
    assert_eq!(link_target(prefix.join("lib/llvm/bin/clang++")), "../../../bin/hipcc");
    assert_eq!(link_target(prefix.join("lib/llvm/bin/clang")), "clang++");
    assert_eq!(std::fs::canonicalize(prefix.join("lib/llvm/bin/clang++")).unwrap(), std::fs::canonicalize(prefix.join("bin/hipcc")).unwrap());
    let out = in_layout(Command::new(prefix.join("bin/hipconfig")), &prefix).arg("-l").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), prefix.join("lib/llvm/bin").to_str().unwrap());
    // ROCm's probe tools are hip-remote under their own names (docs/PROBES.md).
    for tool in ["rocminfo", "rocm_agent_enumerator", "amd-smi"] {
        assert_eq!(link_target(prefix.join("bin").join(tool)), "hip-remote", "bin/{tool}");
    }
    let version = std::fs::read_to_string(prefix.join(".info/version")).unwrap();
    assert!(version.starts_with("7."), "{version:?}");
    // hipconfig names the layout, with or without a compiler on this machine.
    let out = in_layout(Command::new(prefix.join("bin/hipconfig")), &prefix).arg("--path").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), prefix.to_str().unwrap(), "{stderr}");
    // `--version` as upstream's CMake parses it: MAJOR.MINOR.PATCH-GITHASH, the number being
    // the layout's `hip/hip_version.h`; no compiler needed.
    let mut no_clang = in_layout(Command::new(prefix.join("bin/hipconfig")), &prefix);
    let out = no_clang.env("HIP_REMOTE_CLANG", tmp.path().join("no-such-clang++")).arg("--version").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let reported = String::from_utf8_lossy(&out.stdout).into_owned();
    let parts: Vec<&str> = reported.split('-').collect();
    assert_eq!(parts.len(), 2, "{reported:?}");
    assert_eq!(parts[0].split('.').count(), 3, "{reported:?}");
    let header = std::fs::read_to_string(prefix.join("include/hip/hip_version.h")).unwrap();
    let define = |name: &str| {
        let prefix = format!("#define {name} ");
        header.lines().find_map(|l| l.strip_prefix(&prefix)).map(str::trim).unwrap_or_else(|| panic!("{name} not in hip_version.h"))
    };
    let number = format!("{}.{}.{}", define("HIP_VERSION_MAJOR"), define("HIP_VERSION_MINOR"), define("HIP_VERSION_PATCH"));
    assert_eq!(parts[0], number, "{reported:?}");
    assert!(!parts[1].is_empty() && parts[1].chars().all(|c| c.is_ascii_alphanumeric()), "{reported:?}");
    // Without ROCM_PATH, from where it is.
    let mut bare = Command::new(prefix.join("bin/hipconfig"));
    for var in ["HIP_PATH", "ROCM_PATH", "ROCM_HOME"] {
        bare.env_remove(var);
    }
    let out = bare.arg("--path").output().unwrap();
    if out.status.success() {
        assert_eq!(std::fs::canonicalize(String::from_utf8_lossy(&out.stdout).trim()).unwrap(), std::fs::canonicalize(&prefix).unwrap());
    }
}

#[test]
fn c_program_builds_and_runs_from_the_layout() {
    let tmp = TempDir::new("install_c");
    let prefix = tmp.path().join("rocm");
    install(&prefix);
    let src = tmp.path().join("prog.c");
    std::fs::write(&src, C_PROGRAM).unwrap();
    let exe = tmp.path().join("prog");
    let cc = std::env::var("CC").ok().filter(|v| !v.is_empty()).unwrap_or_else(|| "cc".into());
    let mut cmd = in_layout(Command::new(&cc), &prefix);
    cmd.args(["-std=c11", "-Wall", "-Werror", "-I"]).arg(prefix.join("include")).arg(&src).arg("-o").arg(&exe);
    cmd.arg(format!("-L{}", prefix.join("lib").display())).args(["-lamdhip64", "-lroctx64"]);
    let out = cmd.output().expect("run cc");
    assert!(out.status.success(), "{cmd:?}:\n{}", String::from_utf8_lossy(&out.stderr));

    let worker = start_installed_worker(&prefix, &tmp);
    let mut run = in_layout(client_command(&exe, worker.addr()), &prefix);
    run.env_remove("HIP_REMOTE_DEBUG");
    let out = run_with_timeout(run, RUN_TIMEOUT);
    out.assert_success();
    assert!(out.stdout.contains("round trip ok, 1 device(s), roctx levels 0 0"), "{}", out.report());

    // Without the layout's LD_LIBRARY_PATH the loader cannot find libamdhip64.so.7: the
    // program really uses the installed library, not one found some other way.
    let mut bare = client_command(&exe, worker.addr());
    bare.env_remove("LD_LIBRARY_PATH");
    let out = run_with_timeout(bare, RUN_TIMEOUT);
    assert!(!out.success() && out.stderr.contains("libamdhip64.so.7"), "{}", out.report());
}

#[test]
fn hipcc_program_builds_and_runs_from_the_layout() {
    let tmp = TempDir::new("install_hipcc");
    let prefix = tmp.path().join("rocm");
    install(&prefix);
    let hipcc = prefix.join("bin/hipcc");
    let version = in_layout(Command::new(&hipcc), &prefix).arg("--version").output().expect("run the installed hipcc");
    if !String::from_utf8_lossy(&version.stdout).lines().any(|l| l.starts_with("Compiler: ")) {
        eprintln!("skipped: the installed hipcc finds no clang here ({})", String::from_utf8_lossy(&version.stderr).trim());
        return;
    }
    let exe = tmp.path().join("vector_add");
    let mut cmd = in_layout(Command::new(&hipcc), &prefix);
    cmd.arg("-O2").arg("-o").arg(&exe).arg(workspace_root().join("tests/hip/samples/vector_add.hip"));
    let out = cmd.output().expect("run hipcc");
    assert!(out.status.success(), "{cmd:?}:\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));

    let worker = start_installed_worker(&prefix, &tmp);
    let out = run_with_timeout(in_layout(client_command(&exe, worker.addr()), &prefix), RUN_TIMEOUT);
    out.assert_success();
    assert!(out.stdout.contains("PASS"), "{}", out.report());
}
