//! The HIP runtime's C entry points, resolved once from `libamdhip64.so` (and `libhiprtc.so`)
//! into tables of function pointers: a missing symbol is found at start, named in one error,
//! never at the first call that needs it.

use super::props::HipDeviceProp;
use libloading::Library;
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::path::{Path, PathBuf};

/// `hipError_t`.
pub type HipError = c_int;
/// `hipStream_t`, `hipEvent_t`, `hipModule_t`, `hipFunction_t`: opaque pointers.
pub type Stream = *mut c_void;
pub type Event = *mut c_void;
pub type Module = *mut c_void;
pub type Function = *mut c_void;
pub use super::vmm::{MemAccessDesc, MemAllocationProp};
/// `hipLibrary_t`.
pub type HipLibrary = *mut c_void;
/// `hipKernel_t`.
pub type Kernel = *mut c_void;
/// `hipLinkState_t`.
pub type LinkState = *mut c_void;
/// `hiprtcProgram`.
pub type Program = *mut c_void;
/// `hipGraph_t`.
pub type Graph = *mut c_void;
/// `hipGraphNode_t`.
pub type GraphNode = *mut c_void;
/// `hipGraphExec_t`.
pub type GraphExec = *mut c_void;

/// Looks `name` up in `library`, recording it in `missing` when absent.
fn symbol<T: Copy>(library: &Library, name: &'static str, missing: &mut Vec<&'static str>) -> Option<T> {
    // SAFETY: every `T` this is called with is the C signature the HIP headers declare for
    // `name` (the tables below); the pointer is only called while `library` stays loaded
    // (the tables own it).
    match unsafe { library.get::<T>(name.as_bytes()) } {
        Ok(found) => Some(*found),
        Err(_) => {
            missing.push(name);
            None
        }
    }
}

/// Declares a table of required and optional entry points and its resolver.
macro_rules! entry_points {
    ($(#[$doc:meta])* $table:ident {
        $( $sym:ident : fn($($arg:ty),* $(,)?) -> $ret:ty; )*
    } optional {
        $( $osym:ident : fn($($oarg:ty),* $(,)?) -> $oret:ty; )*
    }) => {
        $(#[$doc])*
        #[allow(non_snake_case)]
        pub struct $table {
            $( pub $sym: unsafe extern "C" fn($($arg),*) -> $ret, )*
            $( pub $osym: Option<unsafe extern "C" fn($($oarg),*) -> $oret>, )*
            /// Keeps the entry points above mapped.
            _library: Library,
        }

        impl $table {
            /// Resolves every entry point of `library` (loaded from `path`); the error names
            /// all required ones that are missing.
            #[allow(non_snake_case)]
            fn resolve(library: Library, path: &Path) -> Result<Self, String> {
                let mut missing = Vec::new();
                $( let $sym = symbol::<unsafe extern "C" fn($($arg),*) -> $ret>(&library, stringify!($sym), &mut missing); )*
                $( let $osym = symbol::<unsafe extern "C" fn($($oarg),*) -> $oret>(&library, stringify!($osym), &mut Vec::new()); )*
                if let ($(Some($sym),)*) = ($($sym,)*) {
                    Ok(Self { $($sym,)* $($osym,)* _library: library })
                } else {
                    Err(format!("{} lacks {} of the symbols the hip backend uses: {}", path.display(), missing.len(), missing.join(", ")))
                }
            }
        }
    };
}

entry_points! {
    /// `libamdhip64.so`: every HIP runtime call the backend makes.
    HipApi {
        hipGetDeviceCount: fn(*mut c_int) -> HipError;
        hipGetDevicePropertiesR0600: fn(*mut HipDeviceProp, c_int) -> HipError;
        hipSetDevice: fn(c_int) -> HipError;
        hipDeviceSynchronize: fn() -> HipError;
        hipDeviceGetLimit: fn(*mut usize, c_int) -> HipError;
        hipDeviceSetLimit: fn(c_int, usize) -> HipError;
        hipDeviceCanAccessPeer: fn(*mut c_int, c_int, c_int) -> HipError;
        hipDeviceEnablePeerAccess: fn(c_int, u32) -> HipError;
        hipDeviceGetAttribute: fn(*mut c_int, c_int, c_int) -> HipError;
        hipDeviceGetUuid: fn(*mut [u8; 16], c_int) -> HipError;
        hipDeviceGetP2PAttribute: fn(*mut c_int, c_int, c_int, c_int) -> HipError;
        hipExtGetLinkTypeAndHopCount: fn(c_int, c_int, *mut u32, *mut u32) -> HipError;
        hipMemGetInfo: fn(*mut usize, *mut usize) -> HipError;
        hipMalloc: fn(*mut *mut c_void, usize) -> HipError;
        hipFree: fn(*mut c_void) -> HipError;
        hipMallocAsync: fn(*mut *mut c_void, usize, Stream) -> HipError;
        hipFreeAsync: fn(*mut c_void, Stream) -> HipError;
        hipMemcpyAsync: fn(*mut c_void, *const c_void, usize, c_int, Stream) -> HipError;
        hipMemcpy2DAsync: fn(*mut c_void, usize, *const c_void, usize, usize, usize, c_int, Stream) -> HipError;
        hipMemcpyPeerAsync: fn(*mut c_void, c_int, *const c_void, c_int, usize, Stream) -> HipError;
        hipMemsetAsync: fn(*mut c_void, c_int, usize, Stream) -> HipError;
        hipMemsetD16Async: fn(*mut c_void, u16, usize, Stream) -> HipError;
        hipMemsetD32Async: fn(*mut c_void, c_int, usize, Stream) -> HipError;
        hipMemset2DAsync: fn(*mut c_void, usize, c_int, usize, usize, Stream) -> HipError;
        hipStreamCreateWithPriority: fn(*mut Stream, c_uint, c_int) -> HipError;
        hipStreamDestroy: fn(Stream) -> HipError;
        hipStreamSynchronize: fn(Stream) -> HipError;
        hipStreamQuery: fn(Stream) -> HipError;
        hipStreamWaitEvent: fn(Stream, Event, c_uint) -> HipError;
        hipStreamGetFlags: fn(Stream, *mut c_uint) -> HipError;
        hipStreamGetPriority: fn(Stream, *mut c_int) -> HipError;
        hipDeviceGetStreamPriorityRange: fn(*mut c_int, *mut c_int) -> HipError;
        hipEventCreateWithFlags: fn(*mut Event, c_uint) -> HipError;
        hipEventDestroy: fn(Event) -> HipError;
        hipEventRecord: fn(Event, Stream) -> HipError;
        hipEventSynchronize: fn(Event) -> HipError;
        hipEventQuery: fn(Event) -> HipError;
        hipEventElapsedTime: fn(*mut f32, Event, Event) -> HipError;
        hipModuleLoadData: fn(*mut Module, *const c_void) -> HipError;
        hipModuleUnload: fn(Module) -> HipError;
        hipModuleGetFunction: fn(*mut Function, Module, *const c_char) -> HipError;
        hipModuleGetGlobal: fn(*mut *mut c_void, *mut usize, Module, *const c_char) -> HipError;
        hipFuncGetAttribute: fn(*mut c_int, c_int, Function) -> HipError;
        hipFuncSetAttribute: fn(*const c_void, c_int, c_int) -> HipError;
        hipModuleLaunchKernel: fn(Function, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Stream, *mut *mut c_void, *mut *mut c_void) -> HipError;
        hipModuleOccupancyMaxActiveBlocksPerMultiprocessor: fn(*mut c_int, Function, c_int, usize) -> HipError;
        hipModuleOccupancyMaxPotentialBlockSize: fn(*mut c_int, *mut c_int, Function, usize, c_int) -> HipError;
    } optional {
        // Shared host memory of same-host sessions (registered for one-DMA copies).
        hipHostRegister: fn(*mut c_void, usize, c_uint) -> HipError;
        hipHostUnregister: fn(*mut c_void) -> HipError;
        // Managed memory (the chained test's own library has it; some builds may not).
        hipMallocManaged: fn(*mut *mut c_void, usize, c_uint) -> HipError;
        // Stream-ordered pools: peer access to `hipMallocAsync` memory.
        hipDeviceGetMemPool: fn(*mut *mut c_void, c_int) -> HipError;
        hipMemPoolSetAccess: fn(*mut c_void, *const MemAccessDesc, usize) -> HipError;
        hipMemPoolGetAccess: fn(*mut u32, *mut c_void, *mut super::vmm::MemLocation) -> HipError;
        // dma-buf export for GPUDirect RDMA (ROCm 6+ on kernels with dma-buf support).
        hipMemGetHandleForAddressRange: fn(*mut c_void, *mut c_void, usize, c_int, u64) -> HipError;
        // hip-remote's own library: the parameter layout its worker reported (chained workers).
        hipRemoteFunctionParamLayout: fn(Function, *mut u32, *mut u32, *mut u32, u32) -> HipError;
        // hip-remote's own library: what kernels print, held for this worker's client.
        hipRemoteCaptureKernelOutput: fn(c_int) -> HipError;
        hipRemoteTakeKernelOutput: fn(Option<unsafe extern "C" fn(*mut c_void, *const c_char, usize)>, *mut c_void) -> HipError;
        // 2D fills of 16- and 32-bit elements (ROCm 7.1+); older runtimes fill row by row.
        hipMemsetD2D16Async: fn(*mut c_void, usize, u16, usize, usize, Stream) -> HipError;
        hipMemsetD2D32Async: fn(*mut c_void, usize, c_uint, usize, usize, Stream) -> HipError;
        // Arrays (without them the backend keeps arrays as linear allocations).
        hipArray3DCreate: fn(*mut *mut c_void, *const super::array::Array3DDescriptor) -> HipError;
        hipArrayDestroy: fn(*mut c_void) -> HipError;
        hipDrvMemcpy3DAsync: fn(*const super::array::Memcpy3D, Stream) -> HipError;
        hipMipmappedArrayCreate: fn(*mut *mut c_void, *const super::array::Array3DDescriptor, c_uint) -> HipError;
        hipMipmappedArrayGetLevel: fn(*mut *mut c_void, *mut c_void, c_uint) -> HipError;
        hipMipmappedArrayDestroy: fn(*mut c_void) -> HipError;
        // Texture objects (driver form).
        hipTexObjectCreate: fn(*mut *mut c_void, *const crate::backend::ResourceDesc, *const crate::backend::TextureDesc, *const crate::backend::ResourceViewDesc) -> HipError;
        hipTexObjectDestroy: fn(*mut c_void) -> HipError;
        // Virtual memory management (absent from runtimes without VMM support).
        hipMemGetAllocationGranularity: fn(*mut usize, *const MemAllocationProp, c_int) -> HipError;
        hipMemAddressReserve: fn(*mut *mut c_void, usize, usize, *mut c_void, u64) -> HipError;
        hipMemAddressFree: fn(*mut c_void, usize) -> HipError;
        hipMemCreate: fn(*mut *mut c_void, usize, *const MemAllocationProp, u64) -> HipError;
        hipMemRelease: fn(*mut c_void) -> HipError;
        hipMemGetAllocationPropertiesFromHandle: fn(*mut MemAllocationProp, *mut c_void) -> HipError;
        hipMemMap: fn(*mut c_void, usize, usize, *mut c_void, u64) -> HipError;
        hipMemUnmap: fn(*mut c_void, usize) -> HipError;
        hipMemSetAccess: fn(*mut c_void, usize, *const MemAccessDesc, usize) -> HipError;
        // IPC between session processes (`--isolation process`): legacy handles and shareable
        // handles of virtual-memory mappings.
        hipIpcGetMemHandle: fn(*mut super::ipc::IpcHandle, *mut c_void) -> HipError;
        hipIpcOpenMemHandle: fn(*mut *mut c_void, super::ipc::IpcHandle, c_uint) -> HipError;
        hipIpcCloseMemHandle: fn(*mut c_void) -> HipError;
        hipMemRetainAllocationHandle: fn(*mut *mut c_void, *mut c_void) -> HipError;
        hipMemExportToShareableHandle: fn(*mut c_void, *mut c_void, c_int, u64) -> HipError;
        hipMemImportFromShareableHandle: fn(*mut *mut c_void, *mut c_void, c_int) -> HipError;
        hipHostGetDevicePointer: fn(*mut *mut c_void, *mut c_void, c_uint) -> HipError;
        // Stream memory operations and blocking host functions (stream callbacks).
        hipStreamWaitValue32: fn(Stream, *mut c_void, u32, c_uint, u32) -> HipError;
        hipStreamWaitValue64: fn(Stream, *mut c_void, u64, c_uint, u64) -> HipError;
        hipStreamWriteValue32: fn(Stream, *mut c_void, u32, c_uint) -> HipError;
        hipStreamWriteValue64: fn(Stream, *mut c_void, u64, c_uint) -> HipError;
        hipLaunchHostFunc: fn(Stream, Option<unsafe extern "C" fn(*mut c_void)>, *mut c_void) -> HipError;
        // Cooperative launches and kernel enumeration (libraries: ROCm 7).
        hipModuleLaunchCooperativeKernel: fn(Function, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Stream, *mut *mut c_void) -> HipError;
        hipLibraryLoadData: fn(*mut HipLibrary, *const c_void, *mut c_int, *mut *mut c_void, c_uint, *mut c_int, *mut *mut c_void, c_uint) -> HipError;
        hipLibraryUnload: fn(HipLibrary) -> HipError;
        hipLibraryGetKernelCount: fn(*mut c_uint, HipLibrary) -> HipError;
        hipLibraryEnumerateKernels: fn(*mut Kernel, c_uint, HipLibrary) -> HipError;
        hipKernelGetName: fn(*mut *const c_char, Kernel) -> HipError;
        // The linker (hipLink*).
        hipLinkCreate: fn(c_uint, *mut c_int, *mut *mut c_void, *mut LinkState) -> HipError;
        hipLinkAddData: fn(LinkState, c_int, *mut c_void, usize, *const c_char, c_uint, *mut c_int, *mut *mut c_void) -> HipError;
        hipLinkComplete: fn(LinkState, *mut *mut c_void, *mut usize) -> HipError;
        hipLinkDestroy: fn(LinkState) -> HipError;
        // Graphs (without them the backend replays the recorded node list).
        hipGraphCreate: fn(*mut Graph, c_uint) -> HipError;
        hipGraphDestroy: fn(Graph) -> HipError;
        hipGraphAddKernelNode: fn(*mut GraphNode, Graph, *const GraphNode, usize, *const super::graph::KernelNodeParams) -> HipError;
        hipGraphAddMemsetNode: fn(*mut GraphNode, Graph, *const GraphNode, usize, *const super::graph::MemsetParams) -> HipError;
        hipGraphAddMemcpyNode1D: fn(*mut GraphNode, Graph, *const GraphNode, usize, *mut c_void, *const c_void, usize, c_int) -> HipError;
        hipGraphAddEmptyNode: fn(*mut GraphNode, Graph, *const GraphNode, usize) -> HipError;
        hipGraphInstantiateWithFlags: fn(*mut GraphExec, Graph, u64) -> HipError;
        hipGraphLaunch: fn(GraphExec, Stream) -> HipError;
        hipGraphExecDestroy: fn(GraphExec) -> HipError;
        hipGraphUpload: fn(GraphExec, Stream) -> HipError;
        hipGraphExecUpdate: fn(GraphExec, Graph, *mut GraphNode, *mut c_uint) -> HipError;
    }
}

entry_points! {
    /// `libhiprtc.so`: runtime compilation.
    RtcApi {
        hiprtcCreateProgram: fn(*mut Program, *const c_char, *const c_char, c_int, *const *const c_char, *const *const c_char) -> c_int;
        hiprtcDestroyProgram: fn(*mut Program) -> c_int;
        hiprtcAddNameExpression: fn(Program, *const c_char) -> c_int;
        hiprtcCompileProgram: fn(Program, c_int, *const *const c_char) -> c_int;
        hiprtcGetProgramLogSize: fn(Program, *mut usize) -> c_int;
        hiprtcGetProgramLog: fn(Program, *mut c_char) -> c_int;
        hiprtcGetCodeSize: fn(Program, *mut usize) -> c_int;
        hiprtcGetCode: fn(Program, *mut c_char) -> c_int;
        hiprtcGetLoweredName: fn(Program, *const c_char, *mut *const c_char) -> c_int;
    } optional {}
}

/// Where the HIP runtime is looked for: `explicit` (`--hip-library`), else
/// `$ROCM_PATH/lib/libamdhip64.so` when that file exists, else the bare name for the dynamic
/// loader's search path.
pub fn hip_library_path(explicit: Option<&Path>) -> PathBuf {
    if let Some(path) = explicit {
        return path.to_path_buf();
    }
    if let Some(root) = std::env::var_os("ROCM_PATH") {
        let path = Path::new(&root).join("lib/libamdhip64.so");
        if path.exists() {
            return path;
        }
    }
    PathBuf::from("libamdhip64.so")
}

/// `libhiprtc.so` beside the HIP library (ROCm installs both in `lib/`), or by bare name when
/// the HIP library was found through the loader's search path.
pub fn rtc_library_path(hip_library: &Path) -> PathBuf {
    match hip_library.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join("libhiprtc.so"),
        _ => PathBuf::from("libhiprtc.so"),
    }
}

fn open(path: &Path) -> Result<Library, String> {
    // SAFETY: loading the HIP runtime runs its initialisers, which is what using it means; the
    // path is the operator's choice (`--hip-library`, `ROCM_PATH`) or the loader's default.
    unsafe { Library::new(path) }.map_err(|e| format!("cannot load {}: {e}", path.display()))
}

impl HipApi {
    /// Loads and resolves the HIP runtime at `path`.
    pub fn load(path: &Path) -> Result<Self, String> {
        Self::resolve(open(path)?, path)
    }
}

impl RtcApi {
    /// Loads and resolves hiprtc at `path`.
    pub fn load(path: &Path) -> Result<Self, String> {
        Self::resolve(open(path)?, path)
    }
}
