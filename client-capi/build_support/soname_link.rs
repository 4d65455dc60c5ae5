// Shared by `client-capi/build.rs`, `client-capi/hiprtc/build.rs` and `client-capi/hipblas/build.rs` (`include!`d).

/// Makes `<profile dir>/<soname>` a relative symlink to `<file>`, the name cargo gives the
/// cdylib.
///
/// Why: the library's soname is `libamdhip64.so.7`, so a program linked with
/// `-L target/release -lamdhip64` records `NEEDED libamdhip64.so.7`, and the loader looks for
/// that name, not `libamdhip64.so`; cargo only writes the plain name. ROCm's own lib/ holds the
/// same pair (`.so` and `.so.7`). The link is relative, so copying the profile directory
/// with `cp -a` keeps it valid; it dangles until the library is first linked, which is fine.
///
/// The profile directory is `OUT_DIR`'s great-great-grandparent
/// (`<target>[/<triple>]/<profile>/build/<crate>-<hash>/out`); `client-capi/hiprtc/build.rs`
/// makes `libhiprtc.so.7` the same way. Failing to make the link is a warning, not an error.
fn soname_link(out_dir: &std::path::Path, file: &str, soname: &str) {
    let Some(profile_dir) = out_dir.ancestors().nth(3) else {
        println!("cargo:warning=OUT_DIR {} has no profile directory; no {soname} link", out_dir.display());
        return;
    };
    let link = profile_dir.join(soname);
    if std::fs::read_link(&link).is_ok_and(|target| target == std::path::Path::new(file)) {
        return;
    }
    // Only a stale symlink is replaced: a real file of that name is someone's copy.
    if std::fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink()) {
        let _ = std::fs::remove_file(&link);
    }
    #[cfg(unix)]
    if let Err(e) = std::os::unix::fs::symlink(file, &link) {
        println!("cargo:warning=cannot link {} -> {file}: {e}", link.display());
    }
}
