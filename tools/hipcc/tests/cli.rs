//! hipcc and hipconfig as build tools call them: version lines, refusals, and the fat binary
//! `--genco` writes (its entries parsed back). Compiling needs a clang; without one those
//! checks are skipped (and counted as skips by the test command).

use std::path::{Path, PathBuf};
use std::process::Command;

use hip_code_object::fatbin::Bundle;
use hip_code_object::portable::{SourceEntry, PTX_ENTRY_PREFIX, SOURCE_ENTRY_ID};

fn hipcc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hipcc"))
}

fn have_clang() -> bool {
    let out = hipcc().arg("--version").output().unwrap();
    String::from_utf8_lossy(&out.stdout).lines().any(|l| l.starts_with("Compiler: "))
}

fn hipconfig() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hipconfig"))
}

/// Both tools with the clang lookup pointed at `clang` (a path that may not exist) and no
/// other way to find one.
fn with_clang(mut cmd: Command, clang: &Path) -> Command {
    cmd.env("HIP_REMOTE_CLANG", clang).env_remove("HIP_CLANG_PATH");
    cmd
}

/// A stand-in clang++ that answers `--version` (all hipconfig and `hipcc --version` ask of it).
fn fake_clang(dir: &Path, name: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, "#!/bin/sh\necho \"fake clang version 99.0.0\"\necho \"InstalledDir: $(dirname \"$0\")\"\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The commit this build was made from, as `git rev-parse` gives it (the oracle for the hash
/// in `hipconfig --version`), or `None` outside a git checkout.
fn build_commit() -> Option<String> {
    let out = Command::new("git").args(["rev-parse", "--short=9", "HEAD"]).current_dir(env!("CARGO_MANIFEST_DIR")).output().ok()?;
    out.status.success().then(|| text(&out.stdout).trim().to_string())
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hipcc-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn version_lines_are_what_tools_parse() {
    let out = hipcc().arg("--version").output().unwrap();
    assert!(out.status.success());
    let hipcc_says = text(&out.stdout);
    assert!(hipcc_says.lines().next().unwrap().starts_with("HIP version: 7.2."), "{hipcc_says}");
    // ROCm's `MAJOR.MINOR.PATCH-GITHASH`, no newline: upstream's CMake splits it at the dash.
    let config = hipconfig().arg("--version").output().unwrap();
    assert!(config.status.success(), "{}", text(&config.stderr));
    let version = text(&config.stdout);
    let (number, hash) = version.split_once('-').unwrap_or_else(|| panic!("no -GITHASH in {version:?}"));
    assert_eq!(number, "7.2.53211");
    assert_eq!(hash, build_commit().unwrap_or_else(|| "unknown".into()), "{version:?}");
    assert_eq!(hipcc_says.lines().next().unwrap(), format!("HIP version: {version}"), "hipcc and hipconfig agree");
    let platform = hipconfig().arg("--platform").output().unwrap();
    assert_eq!(text(&platform.stdout), "amd");
    let newline = hipconfig().args(["--version", "--newline"]).output().unwrap();
    assert_eq!(text(&newline.stdout), format!("{version}\n"));
}

#[test]
fn queries_need_no_compiler() {
    let dir = scratch("no-clang");
    let missing = dir.join("no-such-clang++");
    let ours = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../client-capi/include").canonicalize().unwrap();

    // `hipcc --version`: the HIP version, no compiler line, a note on stderr.
    let out = with_clang(hipcc(), &missing).arg("--version").output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("HIP version: 7.2.53211-"), "{stdout}");
    assert!(!stdout.contains("Compiler"), "{stdout}");
    assert!(text(&out.stderr).contains("HIP_REMOTE_CLANG"), "{}", text(&out.stderr));

    // CuPy's include query: clang's search list on stderr, nothing on stdout, success.
    let user = dir.join("user-include");
    std::fs::create_dir_all(&user).unwrap();
    let mut cmd = with_clang(hipcc(), &missing);
    cmd.args(["-x", "hip", "-E", "-v", "/dev/null"]).arg(format!("-I{}", user.display())).arg("-Inot/there");
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    let stderr = text(&out.stderr);
    let list: Vec<&str> =
        stderr.lines().skip_while(|l| *l != "#include <...> search starts here:").skip(1).take_while(|l| *l != "End of search list.").collect();
    assert!(stderr.contains("End of search list."), "{stderr}");
    assert_eq!(list.first().map(|l| l.trim()), Some(user.to_str().unwrap()), "-I first: {stderr}");
    assert_eq!(list.get(1).map(|l| l.trim()), Some(ours.to_str().unwrap()), "then our headers: {stderr}");
    assert!(list.iter().all(|l| l.starts_with(' ') && Path::new(l.trim()).is_dir()), "{stderr}");
    assert!(stderr.contains("ignoring nonexistent directory \"not/there\""), "{stderr}");

    // Source that needs preprocessing needs the compiler: the list, then a clear error.
    let source = dir.join("k.hip");
    std::fs::write(&source, "int x;\n").unwrap();
    let out = with_clang(hipcc(), &missing).args(["-x", "hip", "-E", "-v"]).arg(&source).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("End of search list.") && stderr.contains("preprocessing needs a compiler"), "{stderr}");

    // hipconfig: every answer but the compiler's directory.
    for option in ["--path", "--rocmpath", "--version", "--platform", "--compiler", "--runtime", "--cpp_config", "--full"] {
        let out = with_clang(hipconfig(), &missing).arg(option).output().unwrap();
        assert!(out.status.success() && !out.stdout.is_empty(), "hipconfig {option}: {}", text(&out.stderr));
    }
    let cpp = with_clang(hipconfig(), &missing).arg("--cpp_config").output().unwrap();
    assert!(text(&cpp.stdout).ends_with(&format!("-I{}", ours.display())), "{}", text(&cpp.stdout));
    // `-l` with no clang: an error that says why, not an empty line.
    let out = with_clang(hipconfig(), &missing).arg("-l").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    assert!(text(&out.stderr).contains(missing.to_str().unwrap()), "{}", text(&out.stderr));
}

#[test]
fn the_compiler_found_is_named() {
    let dir = scratch("fake-clang");
    let clang = fake_clang(&dir, "clang++");
    let out = with_clang(hipcc(), &clang).arg("--version").output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains(&format!("Compiler: {}\n", clang.display())) && stdout.contains("fake clang version 99.0.0"), "{stdout}");
    let out = with_clang(hipconfig(), &clang).arg("--hipclangpath").output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), dir.to_str().unwrap());

    // Found on PATH by name: the directory it is in (not an empty line).
    let on_path = scratch("fake-clang-path");
    fake_clang(&on_path, "clang++-15");
    let mut cmd = hipconfig();
    cmd.env_remove("HIP_REMOTE_CLANG").env_remove("HIP_CLANG_PATH").env("PATH", &on_path).arg("-l");
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), on_path.to_str().unwrap());
}

#[test]
fn refusals_say_why() {
    let out = hipcc().args(["-fgpu-rdc", "-c", "k.hip"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("-fgpu-rdc") && err.contains("not supported"), "{err}");
    let out = hipcc().args(["--offload-arch=pentium", "k.hip"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown offload architecture 'pentium'"));
}

#[test]
fn genco_writes_ptx_and_the_device_source_without_host_code() {
    if !have_clang() {
        transport_core::test_skip::skip("hipcc --genco: no clang for hipcc to drive");
        return;
    }
    let dir = scratch("genco");
    std::fs::write(dir.join("scale.h"), "#pragma once\ntemplate <typename T> __device__ T twice(T v) { return v + v; }\n").unwrap();
    let source = dir.join("k.hip");
    std::fs::write(
        &source,
        r#"#include <hip/hip_runtime.h>
#include <cstdio>
#include "scale.h"
template <typename T> __global__ void scale(T* x, int n) { int i = threadIdx.x; if (i < n) x[i] = twice(x[i]); }
__device__ int counter;
static void host_helper(hipStream_t s) { hipStreamSynchronize(s); }
int main() {
  float* d = nullptr;
  hipMalloc(&d, 64);
  scale<float><<<1, 16>>>(d, 16);
  scale<int><<<1, 16>>>(reinterpret_cast<int*>(d), 16);
  host_helper(nullptr);
  std::printf("done\n");
}
"#,
    )
    .unwrap();
    let out_path = dir.join("k.hipfb");
    let out = hipcc().args(["--genco", "-O2", "-DFACTOR=2"]).arg(&source).arg("-o").arg(&out_path).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let bytes = std::fs::read(&out_path).unwrap();
    let bundle = Bundle::parse(&bytes).unwrap();
    let ids: Vec<&str> = bundle.entries().iter().map(|e| e.id).collect();
    assert!(ids.contains(&format!("{PTX_ENTRY_PREFIX}sm_70").as_str()), "{ids:?}");
    let ptx = bundle.entries().iter().find(|e| e.id.starts_with(PTX_ENTRY_PREFIX)).unwrap();
    let ptx = String::from_utf8_lossy(ptx.code);
    assert!(ptx.contains(".entry _Z5scaleIfEvPT_i") && ptx.contains(".entry _Z5scaleIiEvPT_i"), "both instances in the PTX");

    let entry = bundle.entries().iter().find(|e| e.id == SOURCE_ENTRY_ID).expect("the device source");
    let src = SourceEntry::parse(entry.code).unwrap();
    assert_eq!(src.name, "k.hip");
    assert_eq!(src.headers.iter().map(|(n, _)| *n).collect::<Vec<_>>(), ["scale.h"], "the user header travels, system headers do not");
    assert!(src.source.contains("#include \"scale.h\"") && src.source.contains("#include <cstdio>"));
    assert!(!src.source.contains("hipMalloc") && !src.source.contains("hipStreamSynchronize"), "host code is gone:\n{}", src.source);
    assert!(src.source.contains("__global__ void scale"), "kernels stay");
    let original = std::fs::read_to_string(&source).unwrap();
    assert_eq!(src.source.lines().count(), original.lines().count(), "line numbers are kept");
    let kernel_line = |text: &str| text.lines().position(|l| l.contains("__global__ void scale"));
    assert_eq!(kernel_line(src.source), kernel_line(&original));
    assert_eq!(src.kernels, [("_Z5scaleIfEvPT_i", "scale<float>"), ("_Z5scaleIiEvPT_i", "scale<int>")]);
    assert_eq!(src.variables, [("counter", "counter")]);
    assert!(src.options.contains(&"-DFACTOR=2"));
    std::fs::remove_dir_all(&dir).ok();
}
