//! What backs each function's status in `docs/API_COVERAGE.md`: the requests its export sends
//! to the worker, the tests that name it, and the result-checking tests that make it **real**.
//!
//! `symbols/result_tests.txt` names, per C test program of `tests/c/`, the functions whose
//! results (bytes, values, ordering, error codes of negative cases) the program checks against an
//! oracle. Such a program runs on a host-backend worker in CI (`c_programs`) and on a
//! cuda-backend worker on the GPU machine (`scripts/pack-device.sh` packs it,
//! `scripts/device-test.sh` runs it); [`ResultTests::problems`] refuses an entry whose program
//! does not exist, does not name the function, or is not packed for the GPU run.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The result-checking tests: function → programs (`tests/c/NAME.c`).
pub struct ResultTests {
    pub by_function: BTreeMap<String, Vec<String>>,
}

impl ResultTests {
    pub fn load(manifest_dir: &Path) -> Self {
        let path = manifest_dir.join("symbols/result_tests.txt");
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut by_function: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
            let (file, names) = line.split_once(':').unwrap_or_else(|| panic!("{}: no `file: functions` in {line:?}", path.display()));
            for name in names.split_whitespace() {
                by_function.entry(name.to_string()).or_default().push(file.trim().to_string());
            }
        }
        ResultTests { by_function }
    }

    /// Every entry that does not hold: the program is missing, does not name the function, is
    /// not run on the GPU machine, or the function is not exported.
    pub fn problems(&self, repo_root: &Path, exported: &BTreeSet<&str>) -> Vec<String> {
        let packed = gpu_packed_programs(repo_root);
        let mut out = Vec::new();
        for (name, files) in &self.by_function {
            if !exported.contains(name.as_str()) {
                out.push(format!("{name}: named in result_tests.txt but not exported by client-capi/src"));
            }
            for file in files {
                let text = fs::read_to_string(repo_root.join(file)).unwrap_or_default();
                if text.is_empty() {
                    out.push(format!("{name}: {file} does not exist"));
                    continue;
                }
                if !identifiers(&text).contains(name.as_str()) {
                    out.push(format!("{name}: {file} does not call it"));
                }
                let stem = Path::new(file).file_stem().and_then(|s| s.to_str()).unwrap_or_default();
                if !file.starts_with("tests/c/") || !packed.contains(stem) {
                    out.push(format!("{name}: {file} is not a tests/c program that scripts/pack-device.sh packs for the cuda run"));
                }
            }
        }
        out
    }
}

/// The C programs `scripts/pack-device.sh` builds for the GPU machine (its `for t in …; do`
/// lists), which `scripts/device-test.sh` runs against a cuda worker.
pub fn gpu_packed_programs(repo_root: &Path) -> BTreeSet<String> {
    let text = fs::read_to_string(repo_root.join("scripts/pack-device.sh")).unwrap_or_default();
    let mut out = BTreeSet::new();
    let mut in_list = false;
    for line in text.lines() {
        let l = line.trim();
        let words = if let Some(rest) = l.strip_prefix("for t in ") {
            in_list = true;
            rest
        } else if in_list {
            l
        } else {
            continue;
        };
        for w in words.split_whitespace() {
            match w {
                "\\" => {}
                "do" | "; do" => in_list = false,
                _ if w.ends_with(';') => {
                    out.insert(w.trim_end_matches(';').to_string());
                    in_list = false;
                }
                _ => {
                    out.insert(w.to_string());
                }
            }
        }
        if !l.ends_with('\\') {
            in_list = false;
        }
    }
    out
}

/// The identifiers of a source text.
fn identifiers(text: &str) -> BTreeSet<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).collect()
}

/// Per export, the wire requests its own body names (`wire::Name`, `calls::Name`): what it
/// forwards to the worker. Helpers it calls are not followed, so an empty list means "none in
/// its body" — answered in the client or through a helper.
pub fn forwarded(manifest_dir: &Path) -> BTreeMap<String, Vec<String>> {
    let mut files = Vec::new();
    crate::symbols::collect_rs(&manifest_dir.join("src"), &mut files);
    let mut out = BTreeMap::new();
    for file in files {
        let text = fs::read_to_string(&file).unwrap_or_default();
        let needle = "extern \"C\" fn ";
        let mut from = 0;
        while let Some(at) = text[from..].find(needle) {
            let at = from + at;
            let rest = &text[at + needle.len()..];
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            // The body ends at the first line that is a lone `}` at the item's indentation (0).
            let end = rest.find("\n}").map_or(rest.len(), |i| i + 2);
            let body = &rest[..end];
            let mut reqs: BTreeSet<String> = BTreeSet::new();
            for prefix in ["wire::", "calls::"] {
                let mut f = 0;
                while let Some(i) = body[f..].find(prefix) {
                    let i = f + i + prefix.len();
                    let ident: String = body[i..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                    if ident.chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
                        reqs.insert(ident);
                    }
                    f = i;
                }
            }
            if !name.is_empty() {
                out.entry(name).or_insert_with(|| reqs.into_iter().collect());
            }
            from = at + needle.len();
        }
    }
    out
}

/// The test sources of the repository: C, C++ and HIP programs, Rust tests, Python tests.
pub fn test_sources(repo_root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dir in ["tests/c", "tests/cxx", "tests/hip", "tests/tests", "tests/python", "client-capi/tests"] {
        let mut stack: Vec<PathBuf> = vec![repo_root.join(dir)];
        while let Some(d) = stack.pop() {
            let Ok(rd) = fs::read_dir(&d) else { continue };
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().and_then(|x| x.to_str()).is_some_and(|x| matches!(x, "c" | "h" | "cpp" | "hip" | "rs" | "py" | "cu")) {
                    if let Ok(text) = fs::read_to_string(&p) {
                        let rel = p.strip_prefix(repo_root).unwrap_or(&p).to_string_lossy().replace('\\', "/");
                        out.push((rel, text));
                    }
                }
            }
        }
    }
    out.sort();
    out
}

/// Function → the test files that name it.
pub fn tests_naming<'a>(sources: &'a [(String, String)], functions: &[&str]) -> BTreeMap<String, Vec<&'a str>> {
    let wanted: BTreeSet<&str> = functions.iter().copied().collect();
    let mut out: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for (file, text) in sources {
        // The generated coverage test itself names functions only as data.
        if file.ends_with("api_coverage.rs") {
            continue;
        }
        for id in identifiers(text) {
            if wanted.contains(id) {
                out.entry(id.to_string()).or_default().push(file.as_str());
            }
        }
    }
    out
}
