//! The examples under `examples/` build with their own scripts and run correctly against a
//! host-backend worker.

use hip_remote_tests::{workspace_root, Sandbox};
use std::process::Command;

#[test]
fn hello_hip_module_api_example() {
    let sandbox = Sandbox::new("hello_hip");
    let out_dir = sandbox.path().join("hello_hip");
    let build = Command::new("bash")
        .arg(workspace_root().join("examples/hello_hip/build.sh"))
        .arg(&out_dir)
        .env("HIP_REMOTE_LIBDIR", sandbox.lib_dir())
        .output()
        .expect("run build.sh");
    assert!(build.status.success(), "build.sh failed:\n{}{}", String::from_utf8_lossy(&build.stdout), String::from_utf8_lossy(&build.stderr));
    let worker = sandbox.start_worker();
    let out = worker.run(&out_dir.join("hello_hip"), &[out_dir.to_str().unwrap()]);
    out.assert_success();
    assert!(out.stdout.contains("correct"), "{}", out.report());
}

#[test]
fn hiprtc_example() {
    let sandbox = Sandbox::new("saxpy");
    let exe = sandbox.path().join("saxpy");
    let lib = sandbox.lib_dir();
    let cc = Command::new("cc")
        .args(["-std=c11", "-O2", "-I"])
        .arg(workspace_root().join("client-capi/include"))
        .arg(workspace_root().join("examples/hiprtc/saxpy.c"))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", lib.display()))
        .args(["-lhiprtc", "-lamdhip64"])
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .output()
        .expect("run cc");
    assert!(cc.status.success(), "{}", String::from_utf8_lossy(&cc.stderr));
    let worker = sandbox.start_worker();
    let out = worker.run(&exe, &[]);
    out.assert_success();
    assert!(out.stdout.contains("saxpy of 1048576 elements: correct"), "{}", out.report());
}

/// The tour program (examples/tour/tour.c): managed memory, 2D copies, stream
/// callbacks and IPC between two processes, written as AMD's samples are, unchanged.
#[test]
fn tour_example() {
    let sandbox = Sandbox::new("tour");
    let exe = sandbox.path().join("tour");
    let lib = sandbox.lib_dir();
    let cc = Command::new("cc")
        .args(["-std=c11", "-O2", "-Wall", "-Werror", "-I"])
        .arg(workspace_root().join("client-capi/include"))
        .arg(workspace_root().join("examples/tour/tour.c"))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", lib.display()))
        .args(["-lhiprtc", "-lamdhip64", "-lpthread"])
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .output()
        .expect("run cc");
    assert!(cc.status.success(), "{}", String::from_utf8_lossy(&cc.stderr));
    let worker = sandbox.start_worker();
    let out = worker.run(&exe, &[]);
    out.assert_success();
    assert!(out.stdout.contains("tour: correct"), "{}", out.report());
}
