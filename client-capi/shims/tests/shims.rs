//! The shim libraries as a client sees them: each loads by its soname from the profile
//! directory, exports every function of its list (under the version node clients' references
//! carry), and answers with its library's documented status.
#![cfg(target_os = "linux")]

use hip_remote_shims::{parse_function_list, ShimLibrary, SHIMS};
use libloading::Library;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};

/// `target/<profile>`: the test binary lives in its `deps/`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent().and_then(Path::parent).expect("target/<profile>").to_path_buf()
}

fn shim(list: &str) -> &'static ShimLibrary {
    SHIMS.iter().find(|s| s.list == list).unwrap_or_else(|| panic!("no shim {list}"))
}

fn open(list: &str) -> Library {
    let path = profile_dir().join(shim(list).soname);
    // SAFETY: the shims have no initialisers; loading runs nothing but the C runtime's.
    unsafe { Library::new(&path) }.unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn functions(shim: &ShimLibrary) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../symbols/{}_functions.txt", shim.list));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parse_function_list(&text).into_iter().map(|f| f.name).collect()
}

#[test]
fn every_listed_function_resolves_with_its_version() {
    for shim in SHIMS {
        let lib = open(shim.list);
        let link = profile_dir().join(shim.link_name());
        assert_eq!(std::fs::read_link(&link).ok().as_deref(), Some(Path::new(shim.soname)), "{}", link.display());
        let handle = libloading::os::unix::Library::from(lib).into_raw();
        for name in functions(shim) {
            let c_name = CString::new(name.as_str()).unwrap();
            let address = match shim.version_node {
                Some(node) => {
                    let c_node = CString::new(node).unwrap();
                    // SAFETY: a live handle and NUL-terminated names.
                    unsafe { libc::dlvsym(handle, c_name.as_ptr(), c_node.as_ptr()) }
                }
                // SAFETY: as above.
                None => unsafe { libc::dlsym(handle, c_name.as_ptr()) },
            };
            assert!(!address.is_null(), "{}: {name}{} does not resolve", shim.soname, shim.version_node.map(|v| format!("@{v}")).unwrap_or_default());
        }
        // A name outside the list is not exported (the version script hides the helpers).
        // SAFETY: as above.
        assert!(unsafe { libc::dlsym(handle, c"shim_note".as_ptr()) }.is_null(), "{} exports its helper", shim.soname);
        // SAFETY: the handle came from into_raw and is closed once.
        unsafe { libc::dlclose(handle) };
    }
}

type CreateFn = unsafe extern "C" fn(*mut *mut c_void) -> c_int;

/// Calls `name(&mut handle)` in `list`'s shim.
fn create(list: &str, name: &str) -> (c_int, *mut c_void) {
    let lib = open(list);
    let mut handle: *mut c_void = std::ptr::null_mut();
    // SAFETY: every one of these takes one out-pointer and returns a 32-bit status.
    let status = unsafe {
        let f = lib.get::<CreateFn>(name.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}"));
        f(&mut handle)
    };
    (status, handle)
}

#[test]
fn calls_answer_the_library_status() {
    assert_eq!(create("hipsparse", "hipsparseCreate"), (10, std::ptr::null_mut()), "HIPSPARSE_STATUS_NOT_SUPPORTED");
    assert_eq!(create("hipfft", "hipfftCreate").0, 16, "HIPFFT_NOT_SUPPORTED");
    assert_eq!(create("rocblas", "rocblas_create_handle").0, 2, "rocblas_status_not_implemented");
    assert_eq!(create("rccl", "ncclGetUniqueId").0, 5, "ncclInvalidUsage");
    assert_eq!(create("hipsparse", "hipsparseGetVersion").0, 10);

    let rand = open("hiprand");
    let mut generator: *mut c_void = std::ptr::null_mut();
    // SAFETY: hiprandCreateGenerator(hiprandGenerator_t*, hiprandRngType_t).
    let status = unsafe {
        let f = rand.get::<unsafe extern "C" fn(*mut *mut c_void, c_int) -> c_int>(b"hiprandCreateGenerator").unwrap();
        f(&mut generator, 400)
    };
    assert_eq!(status, 1000, "HIPRAND_STATUS_NOT_IMPLEMENTED");

    let solver = open("rocsolver");
    // SAFETY: rocsolver_spotrf(handle, fill, n, A, lda, info): the shim reads none of them.
    let status = unsafe {
        let f = solver.get::<unsafe extern "C" fn(*mut c_void, c_int, c_int, *mut f32, c_int, *mut c_int) -> c_int>(b"rocsolver_spotrf").unwrap();
        f(std::ptr::null_mut(), 0, 4, std::ptr::null_mut(), 4, std::ptr::null_mut())
    };
    assert_eq!(status, 2);

    let fft = open("rocfft");
    // SAFETY: rocfft_setup(void) -> rocfft_status.
    let status = unsafe { fft.get::<unsafe extern "C" fn() -> c_int>(b"rocfft_setup").unwrap()() };
    assert_eq!(status, 1, "rocfft_status_failure");

    let rccl = open("rccl");
    // SAFETY: ncclGetErrorString(ncclResult_t) returns a static string.
    let text = unsafe {
        let f = rccl.get::<unsafe extern "C" fn(c_int) -> *const c_char>(b"ncclGetErrorString").unwrap();
        (CStr::from_ptr(f(0)).to_str().unwrap().to_string(), CStr::from_ptr(f(5)).to_str().unwrap().to_string())
    };
    assert_eq!(text.0, "no error");
    assert!(text.1.starts_with("invalid usage"), "{}", text.1);
}

#[test]
fn roctx_ranges_nest_per_thread() {
    let lib = open("roctx64");
    // SAFETY: roctxRangePushA(const char*) -> int, roctxRangePop(void) -> int, roctxMarkA(const char*).
    unsafe {
        let push = *lib.get::<unsafe extern "C" fn(*const c_char) -> c_int>(b"roctxRangePushA").unwrap();
        let pop = *lib.get::<unsafe extern "C" fn() -> c_int>(b"roctxRangePop").unwrap();
        let mark = *lib.get::<unsafe extern "C" fn(*const c_char)>(b"roctxMarkA").unwrap();
        mark(c"mark".as_ptr());
        assert_eq!(pop(), -1, "no open range");
        assert_eq!(push(c"outer".as_ptr()), 0);
        assert_eq!(push(c"inner".as_ptr()), 1);
        // Another thread has its own ranges.
        let other = std::thread::spawn(move || (pop(), push(c"t".as_ptr()))).join().unwrap();
        assert_eq!(other, (-1, 0));
        assert_eq!(pop(), 1);
        assert_eq!(pop(), 0);
        assert_eq!(pop(), -1);
    }
}

/// With HIP_REMOTE_DEBUG=1 each call says what it did on stderr (a child process: the shims
/// read the variable once).
#[test]
fn debug_notes_on_stderr() {
    if std::env::var_os("HIP_REMOTE_SHIM_CHILD").is_some() {
        let tracer = open("roctracer64");
        // SAFETY: roctracer_start(void), roctracer_stop(void).
        unsafe {
            tracer.get::<unsafe extern "C" fn()>(b"roctracer_start").unwrap()();
            tracer.get::<unsafe extern "C" fn()>(b"roctracer_stop").unwrap()();
        }
        assert_eq!(create("hipsparse", "hipsparseCreate").0, 10);
        return;
    }
    let run = |debug: &str| {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "debug_notes_on_stderr", "--nocapture", "--test-threads=1"])
            .env("HIP_REMOTE_SHIM_CHILD", "1")
            .env("HIP_REMOTE_DEBUG", debug)
            .env_remove("TF_DEBUG")
            .output()
            .expect("run the child");
        assert!(out.status.success(), "child failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let noisy = run("1");
    assert!(noisy.contains("hip-remote: roctracer_start (roctracer shim): a no-op"), "{noisy}");
    assert!(noisy.contains("hip-remote: roctracer_stop (roctracer shim): a no-op"), "{noisy}");
    assert!(
        noisy.contains(
            "hip-remote: hipsparseCreate (hipSPARSE shim): hipSPARSE is not supported by hip-remote; returning HIPSPARSE_STATUS_NOT_SUPPORTED (10)"
        ),
        "{noisy}"
    );
    let quiet = run("0");
    assert!(!quiet.contains("hip-remote:"), "{quiet}");
}
