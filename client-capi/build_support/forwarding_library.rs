// Shared by `client-capi/hiprtc/build.rs` and `client-capi/hipblas/build.rs` (`include!`d by
// both, after `soname_link.rs` and `target_cc.rs`): the link settings of a library that reaches libamdhip64
// through `dlsym` only.

/// Link settings of `<library>.so` with soname `<soname>`: the soname, `NEEDED
/// libamdhip64.so.7` and `RUNPATH $ORIGIN` ([`needs_libamdhip64`]) and the `<soname>` link in
/// the profile directory ([`soname_link`]) on Linux; an install name on macOS.
fn forwarding_library(library: &str, soname: &str) {
    let out_dir = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    match std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default().as_str() {
        "linux" => {
            println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
            needs_libamdhip64(&out_dir, library);
            soname_link(&out_dir, &format!("{library}.so"), soname);
        }
        "macos" => println!("cargo:rustc-cdylib-link-arg=-Wl,-install_name,@rpath/{library}.dylib"),
        _ => {}
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CC");
}

/// Gives the cdylib `NEEDED libamdhip64.so.7` and `RUNPATH $ORIGIN`.
///
/// Why: this library reaches libamdhip64 only through `dlsym` (`__hipRemoteRtcCompile`,
/// `__hipRemoteBlasCall`), so nothing made the loader bring libamdhip64 in. A program that calls only
/// its functions and links with `-Wl,--as-needed -lhiprtc -lamdhip64` (the default of
/// Debian and Ubuntu's gcc) dropped libamdhip64, and every call failed. ROCm's own
/// libhiprtc and libhipblas need libamdhip64 too. `$ORIGIN` finds it beside this library: the program's
/// `DT_RUNPATH` applies to its own dependencies only, not to ours.
///
/// How, without linking the `client-capi` crate (that would be a second copy of its state,
/// hence a second connection) and without needing the real library built first (cargo does not
/// order the two cdylibs): an empty stub shared object with soname `libamdhip64.so.7`, built
/// here by the C compiler, is named on the link line outside `--as-needed`. The linker records
/// its soname and nothing else: no symbol is resolved from it. At run time the loader finds
/// the real `libamdhip64.so.7` (or reuses the one already loaded).
fn needs_libamdhip64(out_dir: &std::path::Path, library: &str) {
    let Some(cc) = target_cc() else {
        println!("cargo:warning=cross build without a C compiler for the target (CC_<target>): {library}.so gets no NEEDED libamdhip64.so.7");
        return;
    };
    let src = out_dir.join("libamdhip64_stub.c");
    let stub = out_dir.join("libamdhip64.so.7");
    std::fs::write(&src, "/* Link-time stand-in for hip-remote's libamdhip64.so.7 (see build.rs). */\n")
        .unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    let status = std::process::Command::new(&cc)
        .args(["-shared", "-fPIC", "-nostdlib", "-Wl,-soname,libamdhip64.so.7", "-o"])
        .arg(&stub)
        .arg(&src)
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{cc}` (set CC): {e}"));
    assert!(status.success(), "`{cc}` failed to build {}: {status}", stub.display());
    // `--as-needed` again after it, not `--push-state`/`--pop-state`: rustc links Linux
    // cdylibs `--as-needed` throughout, and zig's linker (cross builds) has no state stack.
    println!("cargo:rustc-cdylib-link-arg=-Wl,--no-as-needed");
    println!("cargo:rustc-cdylib-link-arg={}", stub.display());
    println!("cargo:rustc-cdylib-link-arg=-Wl,--as-needed");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-rpath,$ORIGIN");
}

