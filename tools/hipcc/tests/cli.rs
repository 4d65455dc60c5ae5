//! hipcc and hipconfig as build tools call them: version lines, refusals, and the fat binary
//! `--genco` writes (its entries parsed back). Compiling needs a clang; without one those
//! checks are skipped (and counted as skips by the test command).

use std::path::PathBuf;
use std::process::Command;

use hip_code_object::fatbin::Bundle;
use hip_code_object::portable::{SourceEntry, PTX_ENTRY_PREFIX, SOURCE_ENTRY_ID};

fn hipcc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hipcc"))
}

fn have_clang() -> bool {
    let out = hipcc().arg("--version").output().unwrap();
    !String::from_utf8_lossy(&out.stdout).contains("(no compiler:")
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
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().next().unwrap().starts_with("HIP version: 7.2."), "{text}");
    let config = Command::new(env!("CARGO_BIN_EXE_hipconfig")).arg("--version").output().unwrap();
    if config.status.success() {
        assert_eq!(String::from_utf8_lossy(&config.stdout), "7.2.53211");
        let platform = Command::new(env!("CARGO_BIN_EXE_hipconfig")).arg("--platform").output().unwrap();
        assert_eq!(String::from_utf8_lossy(&platform.stdout), "amd");
    }
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
