//! The built `libhiprtc.so` and `libamdhip64.so`, loaded into one process as a program linked
//! with both would have them: hiprtc's compilation travels over libamdhip64's connection, so
//! the worker sees one session. (Whether the worker compiles depends on its backend: either
//! the code comes back, or the program log carries the worker's refusal, never a failure to
//! reach libamdhip64.)
#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]
#![cfg(target_os = "linux")]

#[path = "../../tests/support/mod.rs"]
mod support;

use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr::{null, null_mut};

type CreateFn = unsafe extern "C" fn(*mut *mut c_void, *const c_char, *const c_char, c_int, *const *const c_char, *const *const c_char) -> c_int;
type CompileFn = unsafe extern "C" fn(*mut c_void, c_int, *const *const c_char) -> c_int;
type SizeFn = unsafe extern "C" fn(*mut c_void, *mut usize) -> c_int;
type GetFn = unsafe extern "C" fn(*mut c_void, *mut c_char) -> c_int;
type CountFn = unsafe extern "C" fn(*mut c_int) -> c_int;

const HIPRTC_SUCCESS: c_int = 0;
const HIPRTC_ERROR_COMPILATION: c_int = 6;
const HIPRTC_ERROR_INTERNAL_ERROR: c_int = 11;

#[test]
fn hiprtc_compiles_over_the_libamdhip64_connection() {
    let dir = support::temp_dir("hiprtc-one-connection");
    let worker = support::Worker::start(&dir);
    std::env::set_var("HIP_REMOTE_WORKER", &worker.addr);
    std::env::remove_var("HIP_REMOTE_DEBUG");
    // SAFETY: hip-remote's own libraries; their initialisers have no side effects.
    let (amd, rtc) = unsafe {
        (
            Library::open(Some(support::artifact("libamdhip64.so")), RTLD_NOW | RTLD_GLOBAL).expect("load libamdhip64"),
            Library::open(Some(support::artifact("libhiprtc.so")), RTLD_NOW).expect("load libhiprtc"),
        )
    };
    // SAFETY: the symbols have these C signatures (hip_runtime_api.h, hiprtc.h).
    unsafe {
        let count: libloading::os::unix::Symbol<CountFn> = amd.get(b"hipGetDeviceCount\0").unwrap();
        let mut n = 0;
        assert_eq!(count(&mut n), 0, "hipGetDeviceCount through libamdhip64");
        assert!(n >= 1);

        let create: libloading::os::unix::Symbol<CreateFn> = rtc.get(b"hiprtcCreateProgram\0").unwrap();
        let compile: libloading::os::unix::Symbol<CompileFn> = rtc.get(b"hiprtcCompileProgram\0").unwrap();
        let log_size: libloading::os::unix::Symbol<SizeFn> = rtc.get(b"hiprtcGetProgramLogSize\0").unwrap();
        let get_log: libloading::os::unix::Symbol<GetFn> = rtc.get(b"hiprtcGetProgramLog\0").unwrap();
        let code_size: libloading::os::unix::Symbol<SizeFn> = rtc.get(b"hiprtcGetCodeSize\0").unwrap();

        let src = c"extern \"C\" __global__ void scale(float *x, float a) { x[threadIdx.x] *= a; }";
        let mut prog = null_mut();
        assert_eq!(create(&mut prog, src.as_ptr(), c"scale.hip".as_ptr(), 0, null(), null()), HIPRTC_SUCCESS);
        let r = compile(prog, 0, null());
        let mut size = 0;
        assert_eq!(log_size(prog, &mut size), HIPRTC_SUCCESS);
        let mut log = vec![0 as c_char; size];
        assert_eq!(get_log(prog, log.as_mut_ptr()), HIPRTC_SUCCESS);
        let log = CStr::from_ptr(log.as_ptr()).to_string_lossy().into_owned();
        match r {
            HIPRTC_SUCCESS => {
                let mut code = 0;
                assert_eq!(code_size(prog, &mut code), HIPRTC_SUCCESS);
                assert!(code > 0, "compiled but no code; log:\n{log}");
            }
            HIPRTC_ERROR_COMPILATION => panic!("the worker's compiler rejected a valid kernel; log:\n{log}"),
            other => {
                assert_eq!(other, HIPRTC_ERROR_INTERNAL_ERROR, "log:\n{log}");
                // The request reached the worker (over libamdhip64) and the worker said no.
                assert!(log.contains("compilation on the worker did not happen"), "log:\n{log}");
                assert!(!log.contains("cannot be loaded") && !log.contains("has no __hipRemoteRtcCompile"), "log:\n{log}");
            }
        }
        assert_eq!(count(&mut n), 0, "libamdhip64 still connected after hiprtc");
    }
    let sessions = worker.log_text().matches("session opened").count();
    assert_eq!(sessions, 1, "worker log:\n{}", worker.log_text());
    // The libraries stay loaded: their threads and statics live for the process.
    std::mem::forget((amd, rtc));
    drop(worker);
    let _ = std::fs::remove_dir_all(&dir);
}
