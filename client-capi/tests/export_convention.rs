//! One convention for the C exports under `src/api/`: an export that takes a raw pointer is
//! `unsafe extern "C"`, and every export runs its body inside `hip_boundary!` (which catches
//! panics and records the thread's last error). The few that cannot use it are listed here
//! with the reason; they must catch panics themselves or be unable to panic.

use std::path::{Path, PathBuf};

/// Exports without `hip_boundary!`, and why.
const OUTSIDE_THE_BOUNDARY: &[(&str, &str)] = &[
    ("hipGetLastError", "reads and resets the last error: recording would change it"),
    ("hipPeekAtLastError", "reads the last error: recording would change it"),
    ("hipGetErrorName", "returns a string, not a hipError_t; a table lookup"),
    ("hipGetErrorString", "returns a string, not a hipError_t; a table lookup"),
    ("hipExtGetLastError", "reads and resets the last call's result: recording would change it"),
    ("hipDrvGetErrorName", "a table lookup; ROCm does not record its result as the last error"),
    ("hipDrvGetErrorString", "a table lookup; ROCm does not record its result as the last error"),
    ("hipCreateChannelDesc", "returns a struct by value; cannot panic"),
    ("hipGetDeviceProperties", "forwards to hipGetDevicePropertiesR0000, which has the boundary"),
    ("hipChooseDevice", "forwards to hipChooseDeviceR0000, which has the boundary"),
    ("hipGetStreamDeviceId", "returns a device number and records no error, as ROCm; catches panics itself"),
    ("hipKernelNameRefByPtr", "returns a name and records no error, as ROCm; catches panics itself"),
    ("hipKernelNameRef", "returns a name and records no error, as ROCm; catches panics itself"),
    ("hipApiName", "returns a static name from a table, as ROCm; cannot panic"),
    ("__hipRegisterFatBinary", "returns a handle; catches panics itself"),
    ("__hipRegisterFunction", "returns nothing; catches panics itself"),
    ("__hipRegisterVar", "returns nothing; catches panics itself"),
    ("__hipUnregisterFatBinary", "returns nothing; catches panics itself"),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable src/api") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `(name, signature, body)` of every `#[no_mangle]` function in `source` (outside tests).
fn exports(source: &str) -> Vec<(String, String, String)> {
    let source = source.split("#[cfg(test)]").next().unwrap_or(source);
    let mut found = Vec::new();
    for (at, _) in source.match_indices("\n#[no_mangle]") {
        let rest = &source[at..];
        let Some(fn_at) = rest.find("fn ") else { continue };
        let Some(open) = rest.find('{') else { continue };
        let signature = rest[..open].to_string();
        let name: String = rest[fn_at + 3..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let mut depth = 0;
        let mut end = open;
        for (i, c) in rest[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                end = open + i;
                break;
            }
        }
        found.push((name, signature, rest[open..end].to_string()));
    }
    found
}

#[test]
fn exports_follow_one_convention() {
    let mut files = Vec::new();
    rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/api"), &mut files);
    let mut problems = Vec::new();
    let mut checked = 0;
    for file in files {
        let source = std::fs::read_to_string(&file).expect("readable source");
        for (name, signature, body) in exports(&source) {
            checked += 1;
            let params = match (signature.find('('), signature.rfind(')')) {
                (Some(open), Some(close)) if open < close => &signature[open..close],
                _ => "",
            };
            let takes_pointer = params.contains("*const") || params.contains("*mut");
            if takes_pointer && !signature.contains("unsafe extern \"C\"") {
                problems.push(format!("{name}: takes a raw pointer but is not `unsafe extern \"C\"`"));
            }
            let exempt = OUTSIDE_THE_BOUNDARY.iter().any(|(n, _)| *n == name);
            if !body.contains("hip_boundary!") && !exempt {
                problems.push(format!("{name}: body is not inside hip_boundary!"));
            }
            if exempt && body.contains("hip_boundary!") {
                problems.push(format!("{name}: listed as outside the boundary but uses it"));
            }
        }
    }
    assert!(checked > 100, "found only {checked} exports: the scan is broken");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
