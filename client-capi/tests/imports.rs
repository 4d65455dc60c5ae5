//! The client's modules import down the layers, with no circle (docs/CLIENT.md): runs
//! `scripts/client_imports.py --check`, which reads the `crate::` paths of client-capi/src and
//! fails on a circle or an arrow against the layering.

use std::path::Path;
use std::process::Command;

#[test]
fn client_modules_form_no_import_circle() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/client_imports.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg("--check")
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 {}: {e} (the check needs python3 on PATH)", script.display()));
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "client-capi's import graph has a circle or an arrow against the layering:\n{report}");
    assert!(report.contains("circles: none"), "unexpected report of scripts/client_imports.py:\n{report}");
}
