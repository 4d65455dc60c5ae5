//! Symbol lists, export scanning and version-map parsing, shared (through `#[path]`) by
//! `build.rs` (which generates the `hipErrorNotSupported` stubs and the version script) and by
//! the tests (`tests/exports.rs`, `tests/api_coverage.rs`), so that the stubs, the coverage table
//! and the checks all derive from one computation. Std only: `build.rs` must stay fast.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The ROCm 7.2 `hipError_t`-returning functions (`symbols/hip_functions.txt`).
pub fn hip_functions(manifest_dir: &Path) -> Vec<String> {
    read_names(&manifest_dir.join("symbols/hip_functions.txt"))
}

/// ROCm 7.2's other C functions with their C return type (`symbols/hip_other_functions.txt`).
pub fn other_functions(manifest_dir: &Path) -> Vec<(String, String)> {
    let path = manifest_dir.join("symbols/hip_other_functions.txt");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|l| {
            let (name, ret) = l.split_once('\t').unwrap_or((l, ""));
            (name.trim().to_string(), ret.trim().to_string())
        })
        .collect()
}

/// The hiprtc functions (`symbols/hiprtc_functions.txt`): defined by `libhiprtc.so.7`, not here.
pub fn hiprtc_functions(manifest_dir: &Path) -> Vec<String> {
    read_names(&manifest_dir.join("symbols/hiprtc_functions.txt"))
}

fn read_names(path: &Path) -> Vec<String> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().map(|l| l.split_whitespace().next().unwrap_or("")).filter(|n| !n.is_empty() && !n.starts_with('#')).map(str::to_string).collect()
}

/// The file that holds the generated exports; never counted as an implementation.
pub const UNSUPPORTED_RS: &str = "src/api/unsupported.rs";

/// Every C export written in the crate's source, other than `src/api/unsupported.rs`: symbol
/// name → defining file (relative to the crate, `/`-separated). An export is an
/// `extern "C" fn NAME` (optionally `pub`/`unsafe`) whose attributes, since the previous item,
/// include `no_mangle` (then the symbol is NAME) or `export_name = "SYMBOL"`. Exports generated
/// by a `macro_rules!` (`fn $name`) are not seen: such an export would clash with a generated
/// stub of the same name, which fails the build loudly ("symbol ... is already defined").
pub fn scan_exports(manifest_dir: &Path) -> BTreeMap<String, String> {
    let mut files = Vec::new();
    collect_rs(&manifest_dir.join("src"), &mut files);
    files.sort();
    let mut out = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(manifest_dir).unwrap_or(&file).to_string_lossy().replace('\\', "/");
        if rel == UNSUPPORTED_RS {
            continue;
        }
        let text = fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for name in exports_in(&text) {
            out.entry(name).or_insert_with(|| rel.clone());
        }
    }
    out
}

/// All `.rs` files under `dir`, recursively.
pub fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_rs(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The exported symbol names in one source file (see [`scan_exports`]).
pub fn exports_in(text: &str) -> Vec<String> {
    // Drop `//` comments (doc comments included) line by line so that prose mentioning
    // `no_mangle` or `extern "C" fn` is not taken for code.
    let code: String = text
        .lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let needle = "extern \"C\" fn ";
    let mut names = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find(needle) {
        let at = from + at;
        let rest = &code[at + needle.len()..];
        let ident: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        // The attributes of this item: the text since the end of the previous item.
        let item_start = code[..at].rfind(['}', ';']).map_or(0, |i| i + 1);
        let attrs = &code[item_start..at];
        if !ident.is_empty() {
            if let Some(sym) = export_name(attrs) {
                names.push(sym);
            } else if attrs.contains("no_mangle") {
                names.push(ident);
            }
        }
        from = at + needle.len();
    }
    names
}

fn export_name(attrs: &str) -> Option<String> {
    let i = attrs.find("export_name")?;
    let rest = &attrs[i..];
    let q1 = rest.find('"')?;
    let q2 = rest[q1 + 1..].find('"')?;
    Some(rest[q1 + 1..q1 + 1 + q2].to_string())
}

/// What the generated code exports for a function of `hip_other_functions.txt` that nothing
/// implements, by its C return type: `Some((rust return type, value))`, or `None` where no
/// return value is safe, so the symbol stays unexported (a program that uses it fails to
/// resolve it at load or first call, rather than computing with a made-up value).
///
/// - `void` → does nothing (`__hipRegisterFunction` & co.: a hipcc program's start-up
///   registrations then succeed; its kernel launches fail with hipErrorNotSupported);
/// - `const char*` → NULL (as ROCm returns for an unknown kernel/API id);
/// - `void**` (`__hipRegisterFatBinary`) → NULL: the handle is only ever passed back to us;
/// - `int` (`hipGetStreamDeviceId`) → -1, ROCm's value for an invalid stream;
/// - `size_t` (`amd_dbgapi_get_build_id`) → 0;
/// - `float`, `unsigned short` (`__gnu_h2f_ieee`/`__gnu_f2h_ieee`: half-float conversions) and
///   the by-value struct of `hipCreateChannelDesc` → none: a wrong number is worse than a
///   missing symbol.
///
/// hiprtc names are never exported here (they belong to `libhiprtc.so.7`).
pub fn other_default(name: &str, c_ret: &str) -> Option<OtherDefault> {
    if name.starts_with("hiprtc") {
        return None;
    }
    let (rust_type, value, c_value) = match c_ret {
        "void" => ("()", "()", "no-op"),
        "const char*" => ("*const ::core::ffi::c_char", "::core::ptr::null()", "NULL"),
        "void**" => ("*mut *mut ::core::ffi::c_void", "::core::ptr::null_mut()", "NULL"),
        "int" => ("::core::ffi::c_int", "-1", "-1"),
        "size_t" => ("usize", "0", "0"),
        _ => return None,
    };
    Some(OtherDefault { rust_type, value, c_value })
}

/// A generated default export (see [`other_default`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OtherDefault {
    /// The Rust return type (`()` for `void`).
    pub rust_type: &'static str,
    /// The Rust expression returned.
    pub value: &'static str,
    /// What a C caller gets, for the docs.
    pub c_value: &'static str,
}

/// One version node of `symbols/libamdhip64.map`.
#[derive(Debug, Clone)]
pub struct VersionNode {
    pub name: String,
    pub parent: Option<String>,
    /// Global patterns: exact names, or a `prefix*` wildcard.
    pub globals: Vec<String>,
}

/// Parses the version script (comments, `global:`/`local:` sections, `} parent;`). Only the
/// subset that `libamdhip64.map` uses: no `extern "C++"` blocks, wildcards only as `prefix*`.
pub fn parse_version_map(text: &str) -> Vec<VersionNode> {
    let mut code = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("/*") {
        code.push_str(&rest[..i]);
        rest = rest[i + 2..].find("*/").map_or("", |j| &rest[i + 2 + j + 2..]);
    }
    code.push_str(rest);
    let code: String = code.lines().map(|l| l.split('#').next().unwrap_or("")).collect::<Vec<_>>().join("\n");

    let mut nodes = Vec::new();
    let mut rest = code.as_str();
    while let Some(open) = rest.find('{') {
        let name = rest[..open].trim().to_string();
        let close = rest[open..].find('}').expect("unbalanced version map") + open;
        let body = &rest[open + 1..close];
        let after = &rest[close + 1..];
        let semi = after.find(';').expect("version node without ';'");
        let parent = after[..semi].trim();
        let mut globals = Vec::new();
        let mut local = false;
        for tok in body.split(';').map(str::trim).filter(|t| !t.is_empty()) {
            let mut tok = tok;
            for (label, is_local) in [("global:", false), ("local:", true)] {
                if let Some(t) = tok.strip_prefix(label) {
                    local = is_local;
                    tok = t.trim();
                }
            }
            if !tok.is_empty() && !local {
                globals.push(tok.to_string());
            }
        }
        nodes.push(VersionNode { name, parent: (!parent.is_empty()).then(|| parent.to_string()), globals });
        rest = &after[semi + 1..];
    }
    nodes
}

/// The version node of `symbol`: the node that lists it exactly, else the first node with a
/// matching `prefix*` wildcard (the linker's precedence).
pub fn version_of<'a>(nodes: &'a [VersionNode], symbol: &str) -> Option<&'a str> {
    nodes
        .iter()
        .find(|n| n.globals.iter().any(|g| g == symbol))
        .or_else(|| {
            nodes
                .iter()
                .find(|n| n.globals.iter().any(|g| g.strip_suffix('*').is_some_and(|p| !p.is_empty() && !p.contains('*') && symbol.starts_with(p))))
        })
        .map(|n| n.name.as_str())
}

/// Everything the build derives from the lists and the source.
pub struct Coverage {
    /// `hip_functions.txt` in file order, with the defining file of the real ones.
    pub hip: Vec<(String, Option<String>)>,
    /// `hip_other_functions.txt`: name, C return type, how it is provided.
    pub other: Vec<(String, String, OtherStatus)>,
    /// `hiprtc_functions.txt`.
    pub hiprtc: Vec<String>,
    /// Every export written in the source (see [`scan_exports`]).
    pub implemented: BTreeMap<String, String>,
}

/// How a `hip_other_functions.txt` function is provided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OtherStatus {
    /// Implemented in the given file.
    Real(String),
    /// Generated default returning the given value (as C sees it).
    Default(&'static str),
    /// Not exported.
    Missing,
}

impl Coverage {
    pub fn compute(manifest_dir: &Path) -> Self {
        let implemented = scan_exports(manifest_dir);
        let hip = hip_functions(manifest_dir).into_iter().map(|n| {
            let f = implemented.get(&n).cloned();
            (n, f)
        });
        let other = other_functions(manifest_dir).into_iter().map(|(n, ret)| {
            let status = match (implemented.get(&n), other_default(&n, &ret)) {
                (Some(f), _) => OtherStatus::Real(f.clone()),
                (None, Some(d)) => OtherStatus::Default(d.c_value),
                (None, None) => OtherStatus::Missing,
            };
            (n, ret, status)
        });
        Coverage { hip: hip.collect(), other: other.collect(), hiprtc: hiprtc_functions(manifest_dir), implemented }
    }

    /// Every symbol the library exports among the listed ones (real, stub or default).
    pub fn exported(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.hip.iter().map(|(n, _)| n.as_str()).collect();
        v.extend(self.other.iter().filter(|(_, _, s)| *s != OtherStatus::Missing).map(|(n, _, _)| n.as_str()));
        v.extend(self.implemented.keys().map(String::as_str));
        v.sort_unstable();
        v.dedup();
        v
    }
}
