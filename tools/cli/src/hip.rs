//! The client library's entry points used by the CLI, resolved with dlopen as an application
//! linked against libamdhip64 would resolve them.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::path::PathBuf;

/// The HIP entry points the demo and the bench call, resolved from the real library.
pub struct Hip {
    _lib: libloading::Library,
    pub get_device_count: unsafe extern "C" fn(*mut c_int) -> c_int,
    pub device_get_name: unsafe extern "C" fn(*mut c_char, c_int, c_int) -> c_int,
    pub malloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> c_int,
    pub free: unsafe extern "C" fn(*mut c_void) -> c_int,
    pub memcpy: unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int) -> c_int,
    pub memset: unsafe extern "C" fn(*mut c_void, c_int, usize) -> c_int,
    pub device_synchronize: unsafe extern "C" fn() -> c_int,
    pub mem_get_info: unsafe extern "C" fn(*mut usize, *mut usize) -> c_int,
    pub get_error_name: unsafe extern "C" fn(c_int) -> *const c_char,
    pub host_malloc: unsafe extern "C" fn(*mut *mut c_void, usize, u32) -> c_int,
    pub host_free: unsafe extern "C" fn(*mut c_void) -> c_int,
    pub stream_create: unsafe extern "C" fn(*mut *mut c_void) -> c_int,
    pub stream_destroy: unsafe extern "C" fn(*mut c_void) -> c_int,
    pub stream_synchronize: unsafe extern "C" fn(*mut c_void) -> c_int,
    pub memset_async: unsafe extern "C" fn(*mut c_void, c_int, usize, *mut c_void) -> c_int,
    pub memcpy_async: unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int, *mut c_void) -> c_int,
    pub module_load_data: unsafe extern "C" fn(*mut *mut c_void, *const c_void) -> c_int,
    pub module_unload: unsafe extern "C" fn(*mut c_void) -> c_int,
    pub module_get_function: unsafe extern "C" fn(*mut *mut c_void, *mut c_void, *const c_char) -> c_int,
    #[allow(clippy::type_complexity)]
    pub module_launch_kernel: unsafe extern "C" fn(
        *mut c_void,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        *mut c_void,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> c_int,
    pub graph_create: unsafe extern "C" fn(*mut *mut c_void, c_uint) -> c_int,
    pub graph_destroy: unsafe extern "C" fn(*mut c_void) -> c_int,
    pub graph_add_kernel_node: unsafe extern "C" fn(*mut *mut c_void, *mut c_void, *const *mut c_void, usize, *const KernelNodeParams) -> c_int,
    pub graph_instantiate: unsafe extern "C" fn(*mut *mut c_void, *mut c_void, *mut *mut c_void, *mut c_char, usize) -> c_int,
    pub graph_launch: unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int,
    pub graph_exec_destroy: unsafe extern "C" fn(*mut c_void) -> c_int,
    /// hip-remote's own entry point for libhiprtc (`client-capi/src/api/module/rtc.rs`):
    /// compiles a hiprtc program on the worker over this library's connection.
    pub rtc_compile: Option<RtcCompileFn>,
}

/// HIP's `dim3`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct Dim3 {
    pub x: c_uint,
    pub y: c_uint,
    pub z: c_uint,
}

/// HIP's `hipKernelNodeParams` (ROCm 7 hip_runtime_api.h, same field order).
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct KernelNodeParams {
    pub block_dim: Dim3,
    pub extra: *mut *mut c_void,
    pub func: *mut c_void,
    pub grid_dim: Dim3,
    pub kernel_params: *mut *mut c_void,
    pub shared_mem_bytes: c_uint,
}

/// The private libhiprtc <-> libamdhip64 ABI, declared once in proto-core.
pub use proto_core::rtc_entry::RtcCompileFn;

impl Hip {
    pub fn load(path: &PathBuf) -> Result<Self, String> {
        // SAFETY: loading our own client library, whose initialisers only set up statics.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| format!("cannot load {}: {e}", path.display()))?;
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the symbol's C signature is the one declared in the field's type
                // (ROCm 7 hip_runtime_api.h).
                *unsafe { lib.get(concat!($name, "\0").as_bytes()) }.map_err(|e| format!("{}: {e}", $name))?
            };
        }
        Ok(Self {
            get_device_count: sym!("hipGetDeviceCount"),
            device_get_name: sym!("hipDeviceGetName"),
            malloc: sym!("hipMalloc"),
            free: sym!("hipFree"),
            memcpy: sym!("hipMemcpy"),
            memset: sym!("hipMemset"),
            device_synchronize: sym!("hipDeviceSynchronize"),
            mem_get_info: sym!("hipMemGetInfo"),
            get_error_name: sym!("hipGetErrorName"),
            host_malloc: sym!("hipHostMalloc"),
            host_free: sym!("hipHostFree"),
            stream_create: sym!("hipStreamCreate"),
            stream_destroy: sym!("hipStreamDestroy"),
            stream_synchronize: sym!("hipStreamSynchronize"),
            memset_async: sym!("hipMemsetAsync"),
            memcpy_async: sym!("hipMemcpyAsync"),
            module_load_data: sym!("hipModuleLoadData"),
            module_unload: sym!("hipModuleUnload"),
            module_get_function: sym!("hipModuleGetFunction"),
            module_launch_kernel: sym!("hipModuleLaunchKernel"),
            graph_create: sym!("hipGraphCreate"),
            graph_destroy: sym!("hipGraphDestroy"),
            graph_add_kernel_node: sym!("hipGraphAddKernelNode"),
            graph_instantiate: sym!("hipGraphInstantiate"),
            graph_launch: sym!("hipGraphLaunch"),
            graph_exec_destroy: sym!("hipGraphExecDestroy"),
            // SAFETY: the signature is `__hipRemoteRtcCompile`'s (proto_core::rtc_entry::RtcCompileFn).
            rtc_compile: unsafe { lib.get::<RtcCompileFn>(proto_core::rtc_entry::ENTRY_POINT) }.ok().map(|s| *s),
            _lib: lib,
        })
    }

    pub fn check(&self, what: &str, code: c_int) -> Result<(), String> {
        if code == 0 {
            return Ok(());
        }
        // SAFETY: hipGetErrorName returns a static NUL-terminated string.
        let name = unsafe { CStr::from_ptr((self.get_error_name)(code)) }.to_string_lossy();
        Err(format!("{what} failed: {name} ({code})"))
    }
}
