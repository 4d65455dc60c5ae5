//! Builds the shim libraries (see `src/libraries.rs`) into the profile directory, beside
//! `libamdhip64.so`: for each, C generated from `client-capi/symbols/<list>_functions.txt`,
//! compiled by the system C compiler (found by the `cc` crate: `CC`, default `cc`) with the library's soname and a
//! version script that exports exactly the listed functions (under the version node clients'
//! references carry, for roctracer and roctx). The real file is named by the soname; the
//! development link `lib<name>.so` points at it.
//!
//! Why C and not one Rust cdylib per library: nine cdylib crates of generated stubs would each
//! link a Rust standard library, and rustc's own export list cannot be combined with a
//! versioned one by GNU ld. The functions do nothing but answer a status, so C is the smaller
//! and more exact tool here: the version script and soname are the whole point.
//!
//! Linux only (ELF sonames and symbol versions); elsewhere, or when cross-compiling without a C
//! compiler for the target (`CC_<target>`, as cargo-zigbuild sets), nothing is built and a
//! warning says so.

include!("src/libraries.rs");
include!("../build_support/target_cc.rs");

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let symbols = manifest_dir.join("../symbols");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/libraries.rs");
    println!("cargo:rerun-if-env-changed=CC");
    for shim in SHIMS {
        println!("cargo:rerun-if-changed=../symbols/{}_functions.txt", shim.list);
    }
    if env::var("CARGO_CFG_TARGET_OS").unwrap_or_default() != "linux" {
        println!("cargo:warning=the ROCm library shims are ELF libraries: not built for this target");
        return;
    }
    if target_cc().is_none() {
        println!("cargo:warning=cross build without a C compiler for the target (CC_<target>): the ROCm library shims are not built");
        return;
    }
    let Some(profile_dir) = out_dir.ancestors().nth(3) else {
        panic!("OUT_DIR {} has no profile directory", out_dir.display());
    };
    // The C compiler as the `cc` crate finds it (CC, CFLAGS, the target's default), run here
    // as the linker of a shared library, which `cc::Build` itself does not make.
    let compiler = cc::Build::new().cargo_metadata(false).get_compiler();
    let cc = compiler.path().display().to_string();
    for shim in SHIMS {
        let list_path = symbols.join(format!("{}_functions.txt", shim.list));
        let list = fs::read_to_string(&list_path).unwrap_or_else(|e| panic!("{}: {e}", list_path.display()));
        let functions = parse_function_list(&list);
        assert!(!functions.is_empty(), "{}: no functions", list_path.display());
        let src = out_dir.join(format!("{}.c", shim.list));
        let script = out_dir.join(format!("{}.ver", shim.list));
        let built = out_dir.join(shim.soname);
        fs::write(&src, c_source(shim, &functions)).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
        fs::write(&script, version_script(shim, &functions)).unwrap_or_else(|e| panic!("{}: {e}", script.display()));
        let status = compiler
            .to_command()
            .args(["-shared", "-fPIC", "-O2", "-std=gnu11", "-fvisibility=hidden"])
            .arg(format!("-Wl,-soname,{}", shim.soname))
            .arg(format!("-Wl,--version-script={}", script.display()))
            .arg("-o")
            .arg(&built)
            .arg(&src)
            .status()
            .unwrap_or_else(|e| panic!("cannot run the C compiler `{cc}` (set CC): {e}"));
        assert!(status.success(), "`{cc}` failed to build {}: {status}", built.display());
        install_into(profile_dir, &built, shim);
    }
}

/// Copies the built file to `<profile dir>/<soname>` (replacing what is there only when it
/// differs) and makes the relative link `lib<name>.so -> <soname>`.
fn install_into(profile_dir: &Path, built: &Path, shim: &ShimLibrary) {
    let bytes = fs::read(built).unwrap_or_else(|e| panic!("{}: {e}", built.display()));
    let dest = profile_dir.join(shim.soname);
    if fs::read(&dest).ok().as_deref() != Some(bytes.as_slice()) {
        // Remove first: a process may have the old file mapped.
        let _ = fs::remove_file(&dest);
        fs::write(&dest, &bytes).unwrap_or_else(|e| panic!("{}: {e}", dest.display()));
    }
    // The mode the linker gave it (shared libraries are conventionally executable).
    let mode = fs::metadata(built).unwrap_or_else(|e| panic!("{}: {e}", built.display())).permissions();
    fs::set_permissions(&dest, mode).unwrap_or_else(|e| panic!("{}: {e}", dest.display()));
    let link = profile_dir.join(shim.link_name());
    if fs::read_link(&link).is_ok_and(|t| t == Path::new(shim.soname)) {
        return;
    }
    if fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink()) {
        let _ = fs::remove_file(&link);
    }
    #[cfg(unix)]
    if let Err(e) = std::os::unix::fs::symlink(shim.soname, &link) {
        println!("cargo:warning=cannot link {} -> {}: {e}", link.display(), shim.soname);
    }
}

/// Hand-written bodies for the functions that return something other than the status.
fn custom_body(name: &str) -> Option<&'static str> {
    Some(match name {
        // roctx: ranges nest per thread; push returns the new range's 0-based level, pop the
        // popped range's level, or a negative value when no range is open.
        "roctxRangePushA" => {
            "int roctxRangePushA(const char *message) {\n    (void)message;\n    \
             shim_note(\"roctxRangePushA\", \"a no-op range (nothing is recorded)\");\n    \
             return roctx_depth++;\n}\n"
        }
        "roctxRangePop" => {
            "int roctxRangePop(void) {\n    shim_note(\"roctxRangePop\", \"closes a no-op range\");\n    \
             if (roctx_depth <= 0) return -1;\n    return --roctx_depth;\n}\n"
        }
        "ncclGetErrorString" => {
            "const char *ncclGetErrorString(int result) {\n    switch (result) {\n    \
             case 0: return \"no error\";\n    \
             case 1: return \"unhandled hip error\";\n    \
             case 2: return \"unhandled system error\";\n    \
             case 3: return \"internal error\";\n    \
             case 4: return \"invalid argument\";\n    \
             case 5: return \"invalid usage (RCCL is not available through hip-remote)\";\n    \
             case 6: return \"remote process exited or there was a network error\";\n    \
             case 7: return \"operation in progress\";\n    \
             default: return \"unknown result code\";\n    }\n}\n"
        }
        _ => return None,
    })
}

fn c_source(shim: &ShimLibrary, functions: &[ListedFunction]) -> String {
    let mut s = format!(
        "/* @generated by client-capi/shims/build.rs from symbols/{}_functions.txt: hip-remote's\n \
         * {} ({}). Do not edit. */\n\
         #include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n\
         #define EXPORT __attribute__((visibility(\"default\")))\n\n\
         {}\
         /* HIP_REMOTE_DEBUG (or TF_DEBUG) set to a true value: one line per call on stderr. */\n\
         static int shim_debug(void) {{\n    \
             static int cached = -1;\n    \
             if (cached < 0) {{\n        \
                 const char *v = getenv(\"HIP_REMOTE_DEBUG\");\n        \
                 if (!v || !*v) v = getenv(\"TF_DEBUG\");\n        \
                 cached = v && *v && strcmp(v, \"0\") && strcmp(v, \"false\") && strcmp(v, \"no\") && strcmp(v, \"off\");\n    \
             }}\n    \
             return cached;\n}}\n\n\
         static void shim_note(const char *function, const char *what) {{\n    \
             if (shim_debug()) fprintf(stderr, \"hip-remote: %s (%s shim): %s\\n\", function, \"{}\", what);\n}}\n\n",
        shim.list,
        shim.soname,
        shim.display,
        if shim.list == "roctx64" { "/* The open roctx ranges of this thread. */\nstatic __thread int roctx_depth;\n\n" } else { "" },
        shim.display
    );
    for f in functions {
        let name = &f.name;
        s.push_str("EXPORT ");
        if let Some(body) = custom_body(name) {
            s.push_str(body);
            s.push('\n');
            continue;
        }
        // Declared without parameters: callers pass theirs, the callee ignores them (caller
        // cleanup on the SysV and AAPCS64 ABIs), and the result is a 32-bit enum or nothing.
        match (f.c_return.as_deref(), shim.status) {
            (Some("void"), _) => {
                let _ = writeln!(s, "void {name}() {{\n    shim_note(\"{name}\", \"a no-op\");\n}}\n");
            }
            (None, Some(st)) => {
                let _ = writeln!(
                    s,
                    "int {name}() {{\n    shim_note(\"{name}\", \"{} is not supported by hip-remote; returning {} ({})\");\n    return {};\n}}\n",
                    shim.display, st.name, st.value, st.value
                );
            }
            (ret, _) => panic!("{name}: no body for return type {ret:?} in {} (add one to custom_body)", shim.list),
        }
    }
    s
}

fn version_script(shim: &ShimLibrary, functions: &[ListedFunction]) -> String {
    // Without a node the script is anonymous: exported, unversioned, like ROCm's own.
    let mut s = format!("{} {{\nglobal:\n", shim.version_node.unwrap_or(""));
    for f in functions {
        let _ = writeln!(s, "    {};", f.name);
    }
    s.push_str("local:\n    *;\n};\n");
    s
}
