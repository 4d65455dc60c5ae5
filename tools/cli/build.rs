//! Embeds the client's header tree (`client-capi/include`: `hip/` and `hip_remote/`) in the
//! binary for `hip-remote install`, so an installed or copied `hip-remote` writes the headers
//! it was built with, whether or not the source tree is still there:
//! `$OUT_DIR/headers.rs` holds `HEADERS: &[(&str, &[u8])]` (path under `include/`, contents).
//! The rest of the layout that is text (`tools/cli/layout`: CMake packages, pkg-config files)
//! is embedded the same way as `LAYOUT_FILES` (path under the prefix, contents).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let include = manifest_dir.join("../../client-capi/include");
    let include = include.canonicalize().unwrap_or_else(|e| panic!("{}: {e}", include.display()));
    let mut s = embed("HEADERS", "`client-capi/include`'s files: path under `include/`, contents.", &include);
    let layout = manifest_dir.join("layout");
    s += &embed("LAYOUT_FILES", "`tools/cli/layout`'s files: path under the prefix, contents.", &layout);
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("headers.rs");
    if std::fs::read_to_string(&out).ok().as_deref() != Some(s.as_str()) {
        std::fs::write(&out, s).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    }
    println!("cargo:rerun-if-changed={}", include.display());
    println!("cargo:rerun-if-changed={}", layout.display());
    println!("cargo:rerun-if-changed=build.rs");
}

/// `pub const NAME: &[(&str, &[u8])]` listing every file under `root`.
fn embed(name: &str, doc: &str, root: &Path) -> String {
    let mut files = Vec::new();
    collect(root, &mut files);
    files.sort();
    let mut s = format!("/// {doc}\npub const {name}: &[(&str, &[u8])] = &[\n");
    for file in &files {
        let relative = file.strip_prefix(root).expect("under the root").to_str().expect("UTF-8 path");
        let _ = writeln!(s, "    ({relative:?}, include_bytes!({:?})),", file.to_str().expect("UTF-8 path"));
    }
    s.push_str("];\n");
    s
}

/// Every regular file under `dir` (cargo reruns this script when any of them changes: it
/// watches the directory tree's mtimes).
fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("directory entry").path();
        println!("cargo:rerun-if-changed={}", path.display());
        if path.is_dir() {
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}
