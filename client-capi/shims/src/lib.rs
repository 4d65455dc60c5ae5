//! hip-remote's stand-ins for the ROCm libraries clients link besides HIP itself: rocFFT,
//! hipFFT, hipSPARSE, hipRAND, rocSOLVER, rocBLAS, RCCL, roctracer and roctx.
//!
//! A real client (CuPy for ROCm, for one) records these libraries as `NEEDED`, so without them
//! it does not even start, although most programs never call them. Each shim loads, exports
//! every function of its list `client-capi/symbols/<list>_functions.txt` (under the symbol
//! version clients' references carry), and answers each call with that library's own status for
//! "not supported" (see [`SHIMS`]), with one line on stderr under `HIP_REMOTE_DEBUG=1`; the
//! tracer calls (roctracer, roctx) are no-ops. `docs/API_COVERAGE.md` lists them.
//!
//! The build script builds the libraries into the profile directory beside `libamdhip64.so`
//! (`target/<profile>/<soname>`, with the link `lib<name>.so`); `hip-remote install` copies
//! them into `DIR/lib`. This crate only describes them.

include!("libraries.rs");

/// The shim whose soname or development link name is `file_name`.
pub fn by_file_name(file_name: &str) -> Option<&'static ShimLibrary> {
    SHIMS.iter().find(|s| s.soname == file_name || s.link_name() == file_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_names_drop_the_version() {
        let names: Vec<&str> = SHIMS.iter().map(ShimLibrary::link_name).collect();
        assert_eq!(
            names,
            [
                "librocfft.so",
                "libhipfft.so",
                "libhipsparse.so",
                "libhiprand.so",
                "librocsolver.so",
                "librocblas.so",
                "librccl.so",
                "libroctracer64.so",
                "libroctx64.so"
            ]
        );
        assert_eq!(by_file_name("libhipsparse.so.4").map(|s| s.display), Some("hipSPARSE"));
        assert_eq!(by_file_name("librccl.so").map(|s| s.display), Some("RCCL"));
        assert_eq!(by_file_name("libamdhip64.so"), None);
    }

    #[test]
    fn lists_parse_names_and_return_types() {
        let parsed = parse_function_list("# comment\n\nroctxMarkA -> void\n  hipfftCreate  \n");
        assert_eq!(
            parsed,
            [
                ListedFunction { name: "roctxMarkA".into(), c_return: Some("void".into()) },
                ListedFunction { name: "hipfftCreate".into(), c_return: None },
            ]
        );
    }
}
