//! Build script of the drop-in library:
//!
//! 1. link settings: the ROCm 7 soname on Linux, an install name on macOS, and on Linux the
//!    link `libamdhip64.so.7 -> libamdhip64.so` in the profile directory (see
//!    [`soname_link`]);
//! 2. `$OUT_DIR/unsupported_exports.rs` (included by `src/api/unsupported.rs`): one
//!    `hipErrorNotSupported` export per function of `symbols/hip_functions.txt` that no
//!    `#[no_mangle] extern "C" fn` in `src/` (other than `src/api/unsupported.rs`) implements,
//!    and a safe default for the unimplemented ones of `symbols/hip_other_functions.txt` where
//!    one exists (see `tools/symbols.rs`, `other_default`);
//! 3. on Linux with rust-lld, ROCm's symbol versions (`hipMalloc@@hip_4.2`, ...; see
//!    [`symbol_versions`]).
//!
//! Std only and no process spawned except one `rustc -vV` on Linux: it runs on every change
//! under `src/` (it must, to see new exports).

#[path = "tools/symbols.rs"]
mod symbols;

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use symbols::{Coverage, OtherStatus};

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let target_os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    match target_os.as_str() {
        "linux" => {
            println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libamdhip64.so.7");
            soname_link(&out_dir, "libamdhip64.so", "libamdhip64.so.7");
        }
        "macos" => {
            println!("cargo:rustc-cdylib-link-arg=-Wl,-install_name,@rpath/libamdhip64.dylib")
        }
        _ => {}
    }

    let cov = Coverage::compute(&manifest_dir);
    write_if_changed(&out_dir.join("unsupported_exports.rs"), &generate_exports(&cov));

    let versioned = if target_os == "linux" {
        match symbol_versions(&manifest_dir, &out_dir, &cov) {
            Ok(()) => "1".to_string(),
            Err(why) => format!("0: {why}"),
        }
    } else {
        format!("0: target_os {target_os} has no ELF symbol versions")
    };
    // Read by tests/exports.rs: "1", or "0: why not".
    println!("cargo:rustc-env=HIP_REMOTE_BUILD_SYMBOL_VERSIONS={versioned}");

    for path in ["build.rs", "tools/symbols.rs", "symbols", "src"] {
        println!("cargo:rerun-if-changed={path}");
    }
    println!("cargo:rerun-if-env-changed=HIP_REMOTE_SYMBOL_VERSIONS");
}

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
/// does the same for `libhiprtc.so.7`. Failing to make the link is a warning, not an error.
fn soname_link(out_dir: &Path, file: &str, soname: &str) {
    let Some(profile_dir) = out_dir.ancestors().nth(3) else {
        println!("cargo:warning=OUT_DIR {} has no profile directory; no {soname} link", out_dir.display());
        return;
    };
    let link = profile_dir.join(soname);
    if fs::read_link(&link).is_ok_and(|target| target == Path::new(file)) {
        return;
    }
    // Only a stale symlink is replaced: a real file of that name is someone's copy.
    if fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink()) {
        let _ = fs::remove_file(&link);
    }
    #[cfg(unix)]
    if let Err(e) = std::os::unix::fs::symlink(file, &link) {
        println!("cargo:warning=cannot link {} -> {file}: {e}", link.display());
    }
}

/// Writes `contents` unless the file already holds exactly that (keeps mtimes stable).
fn write_if_changed(path: &Path, contents: &str) {
    if fs::read_to_string(path).ok().as_deref() != Some(contents) {
        fs::write(path, contents).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

/// The generated exports. Every stub is declared without parameters although C callers pass
/// some: on the x86-64 SysV, AArch64 AAPCS64 and Win64 ABIs the caller owns its argument
/// registers and stack area (caller-cleanup), so a callee that ignores them is safe for integer
/// and pointer (and floating-point) arguments. The return types are exact: `hipError_t` (a
/// 32-bit enum) here, and for the defaults a scalar or pointer returned in a register; no
/// function returning a struct by value (hidden result pointer) is stubbed.
fn generate_exports(cov: &Coverage) -> String {
    let mut s = String::new();
    s.push_str(
        "// @generated by client-capi/build.rs: symbols/hip_functions.txt (and\n\
         // symbols/hip_other_functions.txt) minus the exports written in src/. Do not edit.\n\n",
    );
    let mut stubs = Vec::new();
    for (name, real) in &cov.hip {
        if real.is_some() {
            continue;
        }
        let _ = writeln!(
            s,
            "/// `{name}`: not supported by hip-remote; returns `hipErrorNotSupported`.\n\
             #[no_mangle]\n\
             pub extern \"C\" fn {name}() -> HipError {{\n    \
                 static NOTED: AtomicBool = AtomicBool::new(false);\n    \
                 not_supported(\"{name}\", &NOTED)\n\
             }}\n"
        );
        stubs.push(name.as_str());
    }
    let mut defaults = Vec::new();
    for (name, c_ret, status) in &cov.other {
        if *status == OtherStatus::Missing || matches!(status, OtherStatus::Real(_)) {
            continue;
        }
        let default = symbols::other_default(name, c_ret).expect("a default");
        let (ty, value) = (default.rust_type, default.value);
        let (doc, ret, tail) = match ty {
            "()" => ("does nothing".to_string(), String::new(), String::new()),
            _ => (format!("returns {}", default.c_value), format!(" -> {ty}"), format!("\n    {value}")),
        };
        let _ = writeln!(
            s,
            "/// `{c_ret} {name}(...)`: not supported by hip-remote; {doc}.\n\
             #[no_mangle]\n\
             pub extern \"C\" fn {name}(){ret} {{\n    \
                 static NOTED: AtomicBool = AtomicBool::new(false);\n    \
                 note(\"{name}\", &NOTED, \"{doc}\");{tail}\n\
             }}\n"
        );
        defaults.push(name.as_str());
    }
    let _ = writeln!(
        s,
        "/// Every generated `hipErrorNotSupported` export, by name.\n\
         pub static STUBS: &[(&str, extern \"C\" fn() -> HipError)] = &[{}];\n",
        stubs.iter().map(|n| format!("(\"{n}\", {n})")).collect::<Vec<_>>().join(", ")
    );
    let _ = writeln!(
        s,
        "/// Every generated default export of `symbols/hip_other_functions.txt`, by name.\n\
         pub static DEFAULTS: &[&str] = &[{}];",
        defaults.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ")
    );
    s
}

/// Gives every export listed in `symbols/libamdhip64.map` its ROCm version node, as
/// `NAME@@NODE` in the dynamic symbol table, or says why not.
///
/// How, with rustc's linker invocation left alone (no linker wrapper, no `.cargo/config.toml`):
/// rustc passes its own anonymous version script (`{ global: <every export>; local: *; }`) and
/// a second `--version-script` cannot override it: GNU ld refuses to combine an anonymous
/// version with named ones, and lld assigns exact names in version-definition order, where the
/// anonymous (base) one comes first, so every symbol would stay at the base version. But lld
/// lets a version given in the symbol's *name* take precedence over version scripts, and a
/// `NAME@@NODE` reference names the same symbol as a `NAME` definition. So we pass
///   - `-Wl,--version-script=$OUT_DIR/libamdhip64.ver`: the map filtered to the names defined
///     here (so rustc's `--no-undefined-version` holds; it also drops the hiprtc names), which
///     defines the 17 nodes; and
///   - `-u NAME@@NODE` per versioned export (in the response file
///     `$OUT_DIR/libamdhip64.versions.rsp`, passed as `-Wl,@FILE`): a forced undefined
///     reference that renames the symbol, which then resolves to our definition and is
///     exported as `NAME@@NODE`.
///
/// This needs lld: rustc's default linker on x86_64-unknown-linux-gnu since Rust 1.90 (and
/// nightlies since 1.80). With GNU ld (other Linux targets, older toolchains, or an override
/// such as `-Clinker=`, `-Clinker-features=-lld`, `-Clink-self-contained=...`) the library is
/// left unversioned, which glibc accepts for programs linked against ROCm's versioned library
/// (a library without version definitions satisfies any version; ld.so prints "no version
/// information available" once per program). Set
/// `HIP_REMOTE_SYMBOL_VERSIONS=0` to force that, `=1` to force versions.
fn symbol_versions(manifest_dir: &Path, out_dir: &Path, cov: &Coverage) -> Result<(), String> {
    let forced = env::var("HIP_REMOTE_SYMBOL_VERSIONS").unwrap_or_default();
    match forced.trim() {
        "0" | "off" | "no" | "false" => return Err("HIP_REMOTE_SYMBOL_VERSIONS=0".into()),
        "1" | "on" | "yes" | "true" => {}
        _ => linker_is_rust_lld()?,
    }
    let map_path = manifest_dir.join("symbols/libamdhip64.map");
    let map = fs::read_to_string(&map_path).unwrap_or_else(|e| panic!("{}: {e}", map_path.display()));
    let nodes = symbols::parse_version_map(&map);
    let exported = cov.exported();

    let mut script = String::from(
        "/* @generated by client-capi/build.rs: symbols/libamdhip64.map, restricted to the names\n \
         * this library defines. */\n",
    );
    let mut versioned = Vec::new();
    for node in &nodes {
        let names: Vec<&str> = exported.iter().copied().filter(|n| symbols::version_of(&nodes, n) == Some(node.name.as_str())).collect();
        let _ = writeln!(script, "{} {{", node.name);
        if !names.is_empty() {
            script.push_str("global:\n");
            for n in &names {
                let _ = writeln!(script, "    {n};");
                versioned.push((*n, node.name.as_str()));
            }
        }
        let parent = node.parent.as_deref().map(|p| format!(" {p}")).unwrap_or_default();
        let _ = writeln!(script, "local:\n    *;\n}}{parent};\n");
    }
    let script_path = out_dir.join("libamdhip64.ver");
    write_if_changed(&script_path, &script);
    // One linker response file keeps ~540 `-u` options out of rustc's command line (and out of
    // every link error message).
    let mut args = format!("--version-script={}\n", quote_arg(&script_path.display().to_string()));
    for (name, node) in versioned {
        let _ = writeln!(args, "-u {name}@@{node}");
    }
    let args_path = out_dir.join("libamdhip64.versions.rsp");
    write_if_changed(&args_path, &args);
    println!("cargo:rustc-cdylib-link-arg=-Wl,@{}", args_path.display());
    Ok(())
}

/// `s` quoted for a GNU-style response file.
fn quote_arg(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// Ok when the cdylib will be linked by rustc's self-contained rust-lld, as far as a build
/// script can tell (the default; see [`symbol_versions`]).
fn linker_is_rust_lld() -> Result<(), String> {
    let target = env::var("TARGET").unwrap_or_default();
    if target != "x86_64-unknown-linux-gnu" {
        return Err(format!("{target} links with the system linker (GNU ld), not rust-lld"));
    }
    if let Ok(linker) = env::var("RUSTC_LINKER") {
        return Err(format!("custom linker {linker}"));
    }
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    for flag in ["linker=", "linker-features", "link-self-contained", "linker-flavor"] {
        if flags.contains(flag) {
            return Err(format!("RUSTFLAGS set {flag}"));
        }
    }
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = std::process::Command::new(&rustc).arg("-vV").output().map_err(|e| format!("{rustc} -vV: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let release = text.lines().find_map(|l| l.strip_prefix("release: ")).unwrap_or("");
    let minor: u32 = release.split('.').nth(1).and_then(|m| m.parse().ok()).unwrap_or(0);
    let nightly = release.contains("nightly") || release.contains("dev");
    if minor >= 90 || (nightly && minor >= 80) {
        Ok(())
    } else {
        Err(format!("rustc {release} links with the system linker (rust-lld is the default from 1.90)"))
    }
}
