//! The built `libamdhip64.so` exports every ROCm 7.2 `hipError_t` function (real or
//! `hipErrorNotSupported`), the safe defaults of the other functions, no hiprtc function, the
//! ROCm soname, and (where the build could, see `symbol_versions` in build.rs) ROCm's symbol
//! versions (`hipMalloc@@hip_4.2`). Linux only: reads the dynamic symbol table with `readelf`.
#![cfg(target_os = "linux")]

#[path = "../tools/symbols.rs"]
mod symbols;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use symbols::{Coverage, OtherStatus};

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `target/<profile>/libamdhip64.so` beside this test binary (`target/<profile>/deps/`), which
/// honours CARGO_TARGET_DIR and the profile; built with `cargo build -p client-capi` if absent.
fn library() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let deps = exe.parent().expect("deps dir");
    let candidates = [deps.join("libamdhip64.so"), deps.parent().expect("profile dir").join("libamdhip64.so")];
    if let Some(found) = candidates.iter().find(|p| p.exists()) {
        return found.clone();
    }
    eprintln!("libamdhip64.so not found next to {}; building it with `cargo build -p client-capi`", exe.display());
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "-p", "client-capi"]).current_dir(manifest_dir());
    if deps.parent().and_then(Path::file_name).is_some_and(|p| p == "release") {
        cmd.arg("--release");
    }
    let status = cmd.status().expect("running cargo build -p client-capi");
    assert!(status.success(), "`cargo build -p client-capi` failed; build the library first");
    candidates
        .into_iter()
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("libamdhip64.so still not found in {}; run `cargo build -p client-capi`", deps.display()))
}

fn readelf(args: &[&str], lib: &Path) -> String {
    let out = Command::new("readelf").args(args).arg(lib).output().unwrap_or_else(|e| panic!("running readelf (binutils) on {}: {e}", lib.display()));
    assert!(out.status.success(), "readelf {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("readelf output")
}

/// Defined global/weak dynamic symbols: name → (type, version or "" when unversioned).
fn dynamic_symbols(lib: &Path) -> BTreeMap<String, (String, String)> {
    let mut syms = BTreeMap::new();
    for line in readelf(&["--dyn-syms", "--wide"], lib).lines() {
        // Num: Value Size Type Bind Vis Ndx Name
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.len() < 8 || !cols[0].ends_with(':') || cols[6] == "UND" || cols[4] == "LOCAL" {
            continue;
        }
        let (name, version) = match cols[7].split_once("@@") {
            Some((n, v)) => (n, v),
            None => (cols[7].split('@').next().unwrap_or(cols[7]), ""),
        };
        syms.insert(name.to_string(), (cols[3].to_string(), version.to_string()));
    }
    syms
}

#[test]
fn library_exports_the_rocm_api() {
    let lib = library();
    let syms = dynamic_symbols(&lib);
    let cov = Coverage::compute(manifest_dir());

    let is_function = |n: &str| matches!(syms.get(n), Some((t, _)) if t == "FUNC");
    let missing: Vec<&str> = cov.hip.iter().map(|(n, _)| n.as_str()).filter(|n| !is_function(n)).collect();
    assert!(missing.is_empty(), "{} lacks these hip_functions.txt exports: {missing:?}", lib.display());
    assert_eq!(cov.hip.len(), 503, "symbols/hip_functions.txt should list ROCm 7.2's 503 functions");

    for (name, _, status) in &cov.other {
        match status {
            OtherStatus::Missing => assert!(!syms.contains_key(name), "{name} has no safe default but is exported"),
            _ => assert!(syms.contains_key(name), "{name} ({status:?}) is not exported"),
        }
    }
    let rtc: Vec<&String> = syms.keys().filter(|n| n.starts_with("hiprtc")).collect();
    assert!(rtc.is_empty(), "hiprtc functions belong to libhiprtc.so.7, not here: {rtc:?}");

    let dynamic = readelf(&["--dynamic", "--wide"], &lib);
    assert!(dynamic.contains("Library soname: [libamdhip64.so.7]"), "soname is not libamdhip64.so.7:\n{dynamic}");
}

#[test]
fn library_exports_rocm_symbol_versions() {
    let setting = env!("HIP_REMOTE_BUILD_SYMBOL_VERSIONS");
    if setting != "1" {
        eprintln!("symbol versions are off for this build ({setting}); nothing to check");
        return;
    }
    let lib = library();
    let syms = dynamic_symbols(&lib);
    let map = std::fs::read_to_string(manifest_dir().join("symbols/libamdhip64.map")).expect("libamdhip64.map");
    let nodes = symbols::parse_version_map(&map);
    assert_eq!(nodes.len(), 17, "ROCm 7.2 has 17 version nodes");
    let mut wrong = Vec::new();
    for (name, (_, version)) in &syms {
        if let Some(want) = symbols::version_of(&nodes, name) {
            if version != want {
                wrong.push(format!("{name}@@{version} (want {want})"));
            }
        }
    }
    assert!(wrong.is_empty(), "{} exports with the wrong version: {wrong:?}", wrong.len());
    for probe in [("hipMalloc", "hip_4.2"), ("hipGraphCreate", "hip_4.3"), ("hipGetDevicePropertiesR0600", "hip_6.0")] {
        assert_eq!(syms.get(probe.0).map(|(_, v)| v.as_str()), Some(probe.1), "{}", probe.0);
    }
    let defs = readelf(&["--version-info", "--wide"], &lib);
    for node in &nodes {
        assert!(defs.contains(&format!("Name: {}", node.name)), "version node {} is not defined", node.name);
    }
}
