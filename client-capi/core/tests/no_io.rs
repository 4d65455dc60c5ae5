//! The session core stays I/O-free: no sockets, threads, clock reads or `unsafe` outside its
//! tests (time comes in as `now`; the driver in `client-capi` does the rest).

use std::path::Path;

/// What the core's non-test code must not name.
const FORBIDDEN: &[&str] = &["Instant::now", "SystemTime", "std::net", "std::thread", "std::fs", "std::process", "unsafe "];

#[test]
fn the_core_names_no_socket_thread_or_clock() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut checked = 0;
    for entry in std::fs::read_dir(&src).expect("src") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("source");
        // Unit tests may take a clock reading as their origin of virtual time.
        let product = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (n, line) in product.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            for word in FORBIDDEN {
                assert!(!code.contains(word), "{}:{}: `{word}` in the I/O-free core: {line}", path.display(), n + 1);
            }
        }
        checked += 1;
    }
    assert!(checked >= 5, "read only {checked} files of {}", src.display());
}
