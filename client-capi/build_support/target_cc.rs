// Shared by the build scripts that compile C for the target (`include!`d): the shim libraries
// and the forwarding libraries' `libamdhip64.so.7` stand-in.

/// The C compiler for the target: `CC` (default `cc`) for a native build; for a cross build the
/// target's own, named as the `cc` crate names it (`CC_<target>` with `-` or `_`, or
/// `TARGET_CC`; cargo-zigbuild sets `CC_<target>`), or `None`: the host's would build for the
/// wrong machine.
fn target_cc() -> Option<String> {
    let target = std::env::var("TARGET").unwrap_or_default();
    let named = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    for name in [format!("CC_{target}"), format!("CC_{}", target.replace('-', "_")), "TARGET_CC".into()] {
        println!("cargo:rerun-if-env-changed={name}");
    }
    if std::env::var("HOST").ok().as_deref() == Some(target.as_str()) {
        return Some(named("CC").unwrap_or_else(|| "cc".into()));
    }
    named(&format!("CC_{target}")).or_else(|| named(&format!("CC_{}", target.replace('-', "_")))).or_else(|| named("TARGET_CC"))
}
