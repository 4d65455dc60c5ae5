//! `docs/API_COVERAGE.md` is generated from the symbol lists and the exports in `src/` (the same
//! computation as build.rs's stubs) and must match what the generator writes now.
//! Regenerate: `UPDATE_API_COVERAGE=1 cargo test -p client-capi --test api_coverage`.

#[path = "../tools/symbols.rs"]
mod symbols;

#[path = "../tools/coverage.rs"]
mod coverage;

#[path = "../tools/evidence.rs"]
mod evidence;

use std::path::Path;

#[test]
fn api_coverage_doc_is_current() {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = manifest_dir.join("../docs/API_COVERAGE.md");
    let mut want = coverage::render(&symbols::Coverage::compute(manifest_dir), &coverage::reasons(manifest_dir), manifest_dir);
    want.push_str(&coverage::render_libraries(&coverage::LibraryList::all(manifest_dir)));
    if std::env::var_os("UPDATE_API_COVERAGE").is_some_and(|v| v != "0") {
        std::fs::write(&doc, &want).unwrap_or_else(|e| panic!("{}: {e}", doc.display()));
        return;
    }
    let have = std::fs::read_to_string(&doc).unwrap_or_default();
    if have != want {
        let first = have.lines().zip(want.lines()).position(|(a, b)| a != b).unwrap_or(have.lines().count().min(want.lines().count()));
        panic!(
            "docs/API_COVERAGE.md is stale (first difference at line {}: {:?} vs now {:?}).\n\
             Regenerate it with:\n    {}",
            first + 1,
            have.lines().nth(first).unwrap_or("<end of file>"),
            want.lines().nth(first).unwrap_or("<end of file>"),
            coverage::REGENERATE
        );
    }
}

/// Nothing is called real without a result-checking test: every entry of
/// `symbols/result_tests.txt` names an exported function, a `tests/c` program that calls it, and
/// that program is run on the cuda worker too (packed by `scripts/pack-device.sh`).
#[test]
fn real_functions_have_result_checking_tests() {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cov = symbols::Coverage::compute(manifest_dir);
    let exported: std::collections::BTreeSet<&str> = cov.implemented.keys().map(String::as_str).collect();
    let results = evidence::ResultTests::load(manifest_dir);
    assert!(!results.by_function.is_empty(), "result_tests.txt names no function");
    let problems = results.problems(&manifest_dir.join(".."), &exported);
    assert!(problems.is_empty(), "client-capi/symbols/result_tests.txt:\n  {}", problems.join("\n  "));
}

/// The checker refuses what it must: a program that does not call the function, one not packed
/// for the GPU run, a function that is not exported.
#[test]
fn result_test_checker_refuses_bad_entries() {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest_dir.join("..");
    let exported: std::collections::BTreeSet<&str> = ["hipMalloc", "hipGraphLaunch"].into_iter().collect();
    let mut by_function = std::collections::BTreeMap::new();
    by_function.insert("hipGraphLaunch".to_string(), vec!["tests/c/memory.c".to_string()]);
    by_function.insert("hipMalloc".to_string(), vec!["tests/c/exports_match.c".to_string()]);
    by_function.insert("hipNotAFunction".to_string(), vec!["tests/c/memory.c".to_string()]);
    let problems = evidence::ResultTests { by_function }.problems(&root, &exported);
    let text = problems.join("\n");
    assert!(text.contains("hipGraphLaunch: tests/c/memory.c does not call it"), "{text}");
    assert!(text.contains("hipMalloc: tests/c/exports_match.c is not a tests/c program that scripts/pack-device.sh packs"), "{text}");
    assert!(text.contains("hipNotAFunction: named in result_tests.txt but not exported"), "{text}");
    assert!(evidence::gpu_packed_programs(&root).contains("memory"), "pack-device.sh's list was not read");
}

/// A reason is given only for a function of the list that really is not supported: one not
/// implemented, or one implemented only to check its arguments as ROCm does (never one a
/// result-checking test calls real).
#[test]
fn reasons_name_unsupported_functions() {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cov = symbols::Coverage::compute(manifest_dir);
    let results = evidence::ResultTests::load(manifest_dir);
    for (name, why) in coverage::reasons(manifest_dir) {
        assert!(!why.is_empty(), "{name}: empty reason");
        match cov.hip.iter().find(|(n, _)| *n == name) {
            Some((_, None)) => {}
            Some((_, Some(file))) if !results.by_function.contains_key(&name) => {
                let source = std::fs::read_to_string(manifest_dir.join(file)).unwrap_or_default();
                assert!(source.contains("NOT_SUPPORTED"), "{name} has a not-supported reason but {file} never answers hipErrorNotSupported");
            }
            Some((_, Some(file))) => panic!("{name} has a not-supported reason but is real ({file})"),
            None => panic!("{name} (not_supported_reasons.txt) is not a function of hip_functions.txt"),
        }
    }
}

/// Each other library's reasons name functions of its own list (or `*`), and its list names each
/// function once.
#[test]
fn library_lists_are_consistent() {
    let libraries = coverage::LibraryList::all(Path::new(env!("CARGO_MANIFEST_DIR")));
    assert!(libraries.iter().any(|l| l.list == "hipsparse"), "the shims' lists are missing");
    for lib in &libraries {
        let mut seen = std::collections::BTreeSet::new();
        for f in &lib.functions {
            assert!(seen.insert(f), "{}_functions.txt lists {f} twice", lib.list);
        }
        for (name, why) in &lib.reasons {
            assert!(!why.is_empty(), "{}: {name}: empty reason", lib.list);
            assert!(name == "*" || lib.functions.contains(name), "{name} ({}_not_supported_reasons.txt) is not in its list", lib.list);
        }
    }
}

#[test]
fn every_function_has_a_family() {
    let cov = symbols::Coverage::compute(Path::new(env!("CARGO_MANIFEST_DIR")));
    let other: Vec<&str> = cov.hip.iter().map(|(n, _)| n.as_str()).filter(|n| coverage::family(n) == "other").collect();
    assert!(other.is_empty(), "hip functions without a family (extend coverage::family): {other:?}");
}

#[test]
fn scanner_reads_exports() {
    let src = r#"
        /// Doc mentioning #[no_mangle] and extern "C" fn hipNotAnExport.
        #[no_mangle]
        pub unsafe extern "C" fn hipA(x: i32) -> hipError_t { hip_boundary!("hipA", { Ok(()) }) }
        extern "C" fn private_callback() {}
        #[export_name = "hipB"]
        pub extern "C" fn b_impl() -> hipError_t { hipSuccess }
        // #[no_mangle] pub extern "C" fn hipCommented() {}
        type Cb = extern "C" fn(i32);
        #[no_mangle]
        pub extern "C" fn hipC() {}
    "#;
    assert_eq!(symbols::exports_in(src), ["hipA", "hipB", "hipC"]);
}
