// The shim libraries: `include!`d by `build.rs` (which builds them) and `src/lib.rs` (which
// describes them to `hip-remote install` and the tests). Std only.

/// A library's own status for "this cannot be done here".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    /// The C enum type, e.g. `hipsparseStatus_t`.
    pub c_type: &'static str,
    /// The enumerator, e.g. `HIPSPARSE_STATUS_NOT_SUPPORTED`.
    pub name: &'static str,
    pub value: i32,
}

/// One stand-in library.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShimLibrary {
    /// The library's name as ROCm spells it in messages, e.g. `hipSPARSE`.
    pub display: &'static str,
    /// `client-capi/symbols/<list>_functions.txt` (and `<list>_not_supported_reasons.txt`).
    pub list: &'static str,
    /// The soname clients record (`NEEDED`), also the name of the real file.
    pub soname: &'static str,
    /// What every generated function returns (`None`: the list gives each return type).
    pub status: Option<Status>,
    /// The ELF symbol version clients' references carry, if any (roctracer's and roctx's).
    pub version_node: Option<&'static str>,
}

impl ShimLibrary {
    /// The development link name (`libhipsparse.so` for `libhipsparse.so.4`).
    pub fn link_name(&self) -> &'static str {
        match self.soname.find(".so") {
            Some(end) => &self.soname[..end + 3],
            None => self.soname,
        }
    }
}

const fn status(c_type: &'static str, name: &'static str, value: i32) -> Option<Status> {
    Some(Status { c_type, name, value })
}

/// Every shim, with the soname CuPy for ROCm (`cupy-rocm-7-0` 14.2.0) records. Statuses from
/// the libraries' headers: rocFFT has no "not supported" status, so `rocfft_status_failure`;
/// RCCL's `ncclResult_t` neither, so `ncclInvalidUsage`.
pub const SHIMS: &[ShimLibrary] = &[
    ShimLibrary { display: "rocFFT", list: "rocfft", soname: "librocfft.so.0", status: status("rocfft_status", "rocfft_status_failure", 1), version_node: None },
    ShimLibrary { display: "hipFFT", list: "hipfft", soname: "libhipfft.so.0", status: status("hipfftResult", "HIPFFT_NOT_SUPPORTED", 16), version_node: None },
    ShimLibrary { display: "hipSPARSE", list: "hipsparse", soname: "libhipsparse.so.4", status: status("hipsparseStatus_t", "HIPSPARSE_STATUS_NOT_SUPPORTED", 10), version_node: None },
    ShimLibrary { display: "hipRAND", list: "hiprand", soname: "libhiprand.so.1", status: status("hiprandStatus_t", "HIPRAND_STATUS_NOT_IMPLEMENTED", 1000), version_node: None },
    ShimLibrary { display: "rocSOLVER", list: "rocsolver", soname: "librocsolver.so.0", status: status("rocblas_status", "rocblas_status_not_implemented", 2), version_node: None },
    ShimLibrary { display: "rocBLAS", list: "rocblas", soname: "librocblas.so.5", status: status("rocblas_status", "rocblas_status_not_implemented", 2), version_node: None },
    ShimLibrary { display: "RCCL", list: "rccl", soname: "librccl.so.1", status: status("ncclResult_t", "ncclInvalidUsage", 5), version_node: None },
    ShimLibrary { display: "roctracer", list: "roctracer64", soname: "libroctracer64.so.4", status: None, version_node: Some("ROCTRACER_4.0") },
    ShimLibrary { display: "roctx", list: "roctx64", soname: "libroctx64.so.4", status: None, version_node: Some("ROCTX_4.1") },
];

/// One line of a `<list>_functions.txt`: `name` (returns the library's status) or
/// `name -> C return type`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedFunction {
    pub name: String,
    /// `None`: the library's status type.
    pub c_return: Option<String>,
}

/// Parses a symbol list: `#` comments, blank lines, `name` or `name -> type`.
pub fn parse_function_list(text: &str) -> Vec<ListedFunction> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| match l.split_once("->") {
            Some((name, ret)) => ListedFunction { name: name.trim().to_string(), c_return: Some(ret.trim().to_string()) },
            None => ListedFunction { name: l.to_string(), c_return: None },
        })
        .collect()
}
