//! Backends: what actually executes HIP work on the worker.
//!
//! A [`Backend`] is shared by every session of the worker (`Send + Sync + 'static`, all methods
//! `&self`). The session validates client handles and pointers against its own tables first,
//! then calls the backend with typed arguments; the backend still checks everything it
//! dereferences, so a session bug becomes an error, never a stray write.
//!
//! The trait is shaped after real GPU runtimes (CUDA driver API, HIP):
//!
//! * **Streams** are the GPU's in-order queues. Work on one stream runs in submission order;
//!   work on different streams may overlap. `None` as a stream is the *null (legacy) stream* of
//!   the device the operation touches; what it synchronizes with is backend-defined and
//!   documented per backend (the host backend runs null-stream work synchronously after the
//!   device's blocking streams drain, see [`host`]).
//! * **Copies may be asynchronous.** [`Backend::memcpy_htod`] takes ownership of the source
//!   bytes ([`HostData`]) so it can queue them; [`Backend::memcpy_dtoh`] reports its bytes
//!   through a callback run when the stream reaches the copy. The `_sync` variants and the
//!   `with_device_bytes*` pair wait for the stream and work on caller-provided memory.
//! * **Errors of queued work** are latched on their stream and reported by the next
//!   [`Backend::stream_synchronize`] / [`Backend::stream_query`], as a GPU reports a fault.
//! * **Events** are GPU events: recorded into a stream, timestamped when the stream reaches
//!   them.
//! * **Modules and kernels.** [`Backend::module_load`] takes an image in one of the
//!   [`ModuleFormat`]s (a GPU backend: code objects, PTX, cubin; the host backend: host
//!   modules, see `docs/HOST_MODULES.md`) and hands out opaque module and function handles.
//!   [`Backend::module_function`] reports each kernel's exact parameter layout, so the client
//!   packs arguments into one blob; [`Backend::launch_kernel`] takes that blob by value and
//!   queues the launch on the stream like any other operation: its failure is latched on the
//!   stream like a GPU fault.
//! * **Runtime compilation** ([`Backend::rtc_compile`]) runs on the worker, for the worker's
//!   device; its output is an image [`Backend::module_load`] accepts.

pub mod error;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod host;

use std::fmt;
use std::sync::Arc;

pub use error::{hip_code, BackendError};
pub use host::{HostBackend, HostConfig};

/// A device ordinal, `0..device_count()`.
pub type DeviceIndex = u32;

/// A device address as the client sees it. `DevicePtr::NULL` is never a live allocation.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct DevicePtr(pub u64);

impl DevicePtr {
    /// The null device pointer (`hipMalloc(&p, 0)` yields it).
    pub const NULL: Self = Self(0);

    /// Whether this is the null pointer.
    pub fn is_null(self) -> bool {
        self.0 == 0
    }

    /// This address plus `bytes`, or `None` on overflow.
    pub fn checked_add(self, bytes: u64) -> Option<Self> {
        self.0.checked_add(bytes).map(Self)
    }
}

impl fmt::Display for DevicePtr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

/// An opaque stream created by [`Backend::stream_create`]. Handles are never reused.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct StreamHandle(u64);

impl StreamHandle {
    pub(crate) fn from_raw(raw: u64) -> Self {
        Self(raw)
    }

    /// The raw value, for logs and handle tables.
    pub fn as_raw(self) -> u64 {
        self.0
    }
}

/// An opaque event created by [`Backend::event_create`]. Handles are never reused.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct EventHandle(u64);

impl EventHandle {
    pub(crate) fn from_raw(raw: u64) -> Self {
        Self(raw)
    }

    /// The raw value, for logs and handle tables.
    pub fn as_raw(self) -> u64 {
        self.0
    }
}

/// An opaque module created by [`Backend::module_load`]. Handles are never reused.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct ModuleHandle(u64);

impl ModuleHandle {
    pub(crate) fn from_raw(raw: u64) -> Self {
        Self(raw)
    }

    /// The raw value, for logs and handle tables.
    pub fn as_raw(self) -> u64 {
        self.0
    }
}

/// An opaque kernel of a loaded module ([`Backend::module_function`]). It becomes invalid
/// when its module is unloaded. Handles are never reused.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct FunctionHandle(u64);

impl FunctionHandle {
    pub(crate) fn from_raw(raw: u64) -> Self {
        Self(raw)
    }

    /// The raw value, for logs and handle tables.
    pub fn as_raw(self) -> u64 {
        self.0
    }
}

/// What a module image contains (the wire's `ModuleFormat`, without a dependency on it).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ModuleFormat {
    /// Detect from the image's magic.
    Auto,
    /// An AMD code object (ELF for amdgcn).
    CodeObject,
    /// A clang offload bundle / HIP fat binary.
    OffloadBundle,
    /// NVIDIA PTX text.
    Ptx,
    /// NVIDIA cubin.
    Cubin,
    /// NVIDIA fatbin.
    Fatbin,
    /// A hip-remote host module: an ELF shared object for the worker's CPU exporting
    /// `hip_remote_host_module_v1` (`worker/include/hip_remote/host_module.h`).
    HostModule,
}

impl ModuleFormat {
    /// Name for error messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto-detected",
            Self::CodeObject => "AMD code object",
            Self::OffloadBundle => "offload bundle",
            Self::Ptx => "PTX",
            Self::Cubin => "cubin",
            Self::Fatbin => "fatbin",
            Self::HostModule => "host module",
        }
    }
}

/// Where one kernel parameter lives in the packed argument blob.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ParamLayout {
    /// Byte offset in the blob.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
}

/// `hipFuncAttributes`, as a backend knows them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct FunctionAttributes {
    /// `binaryVersion` (major·10 + minor of the target).
    pub binary_version: i32,
    /// `ptxVersion`.
    pub ptx_version: i32,
    /// `cacheModeCA`.
    pub cache_mode_ca: i32,
    /// `constSizeBytes`.
    pub const_size: u64,
    /// `localSizeBytes`, per thread.
    pub local_size: u64,
    /// `maxDynamicSharedSizeBytes`.
    pub max_dynamic_shared_size: i32,
    /// `maxThreadsPerBlock`.
    pub max_threads_per_block: i32,
    /// `numRegs`.
    pub num_regs: i32,
    /// `preferredShmemCarveout` (-1: no preference).
    pub preferred_shmem_carveout: i32,
    /// `sharedSizeBytes` (static shared memory).
    pub shared_size: u64,
}

/// A kernel found by [`Backend::module_function`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelFunction {
    /// Handle for launches and queries.
    pub handle: FunctionHandle,
    /// Parameters in declaration order.
    pub params: Vec<ParamLayout>,
    /// Its attributes.
    pub attributes: FunctionAttributes,
}

impl KernelFunction {
    /// Bytes the packed argument blob must at least have: the end of the last parameter.
    pub fn args_len(&self) -> u64 {
        args_len(&self.params)
    }
}

/// The end of the parameter reaching furthest, i.e. the shortest blob covering them all.
pub fn args_len(params: &[ParamLayout]) -> u64 {
    params
        .iter()
        .map(|p| u64::from(p.offset) + u64::from(p.size))
        .max()
        .unwrap_or(0)
}

/// Grid and block shape of a launch (`hipModuleLaunchKernel`'s numbers).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks in x, y, z.
    pub grid: [u32; 3],
    /// Threads per block in x, y, z.
    pub block: [u32; 3],
    /// Dynamic shared memory per block, bytes.
    pub shared_mem: u32,
}

impl LaunchConfig {
    /// Threads per block, or `None` on overflow.
    pub fn threads_per_block(&self) -> Option<u64> {
        self.block
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(u64::from(d)))
    }

    /// Blocks in the grid (at most 2⁹⁶, so saturating into `u128` is exact).
    pub fn blocks(&self) -> u128 {
        self.grid.iter().map(|&d| u128::from(d)).product()
    }
}

/// A `hiprtcCompileProgram` request: everything `hiprtcCreateProgram` and the options carry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RtcRequest<'a> {
    /// Program name, as in diagnostics.
    pub name: &'a str,
    /// Kernel source.
    pub source: &'a str,
    /// Embedded headers: `(include name, contents)`.
    pub headers: Vec<(&'a str, &'a str)>,
    /// Compiler options.
    pub options: Vec<&'a str>,
    /// `hiprtcAddNameExpression` strings, in order.
    pub name_expressions: Vec<&'a str>,
}

/// What a compile produced. A failed compile is `Ok` with `success == false` and the
/// compiler's log, as `hiprtcCompileProgram` reports it; `Err` is reserved for the worker
/// failing to run the compile at all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RtcOutput {
    /// Whether `code` holds a loadable image.
    pub success: bool,
    /// Compiler log, verbatim (plus the worker's own notes).
    pub log: String,
    /// The image, for [`Backend::module_load`] (the host backend: a host module).
    pub code: Vec<u8>,
    /// Lowered (mangled) name per name expression, same order.
    pub lowered_names: Vec<String>,
}

/// A `hipDeviceGetLimit` / `hipDeviceSetLimit` limit (`hipLimit_t`); the others are
/// `hipErrorUnsupportedLimit` before a backend sees them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DeviceLimit {
    /// `hipLimitStackSize`: stack bytes per GPU thread.
    StackSize,
    /// `hipLimitPrintfFifoSize`: bytes of device `printf` output buffered per launch.
    PrintfFifoSize,
    /// `hipLimitMallocHeapSize`: bytes of the device-side `malloc` heap.
    MallocHeapSize,
}

impl DeviceLimit {
    /// The limit for a `hipLimit_t` number, `None` for the unsupported ones.
    pub fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(Self::StackSize),
            1 => Some(Self::PrintfFifoSize),
            2 => Some(Self::MallocHeapSize),
            _ => None,
        }
    }
}

/// A `hipFuncSetAttribute` attribute (`hipFuncAttribute`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum FunctionAttribute {
    /// `hipFuncAttributeMaxDynamicSharedMemorySize`: the most dynamic shared memory a launch
    /// may ask for, bytes.
    MaxDynamicSharedSize,
    /// `hipFuncAttributePreferredSharedMemoryCarveout`: percent of L1 preferred as shared
    /// memory, -1 for no preference.
    PreferredSharedCarveout,
}

impl FunctionAttribute {
    /// The attribute for a `hipFuncAttribute` number, `None` for the others.
    pub fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            8 => Some(Self::MaxDynamicSharedSize),
            9 => Some(Self::PreferredSharedCarveout),
            _ => None,
        }
    }
}

/// `hipStreamCreateWithFlags` flags.
pub mod stream_flags {
    /// `hipStreamDefault`: a blocking stream, implicitly synchronized with the null stream.
    pub const DEFAULT: u32 = 0x0;
    /// `hipStreamNonBlocking`: no implicit synchronization with the null stream.
    pub const NON_BLOCKING: u32 = 0x1;
    /// Every flag a backend accepts.
    pub const SUPPORTED: u32 = NON_BLOCKING;
}

/// `hipEventCreateWithFlags` flags.
pub mod event_flags {
    /// `hipEventDefault`.
    pub const DEFAULT: u32 = 0x0;
    /// `hipEventBlockingSync`: waiters sleep instead of spinning.
    pub const BLOCKING_SYNC: u32 = 0x1;
    /// `hipEventDisableTiming`: no timestamp; `hipEventElapsedTime` refuses the event.
    pub const DISABLE_TIMING: u32 = 0x2;
    /// `hipEventInterprocess`: requires [`DISABLE_TIMING`].
    pub const INTERPROCESS: u32 = 0x4;
    /// `hipEventDisableSystemFence`.
    pub const DISABLE_SYSTEM_FENCE: u32 = 0x2000_0000;
    /// `hipEventReleaseToDevice`.
    pub const RELEASE_TO_DEVICE: u32 = 0x4000_0000;
    /// `hipEventReleaseToSystem`.
    pub const RELEASE_TO_SYSTEM: u32 = 0x8000_0000;
    /// The release-scope flags, of which at most one may be set.
    pub const RELEASE_SCOPES: u32 = DISABLE_SYSTEM_FENCE | RELEASE_TO_DEVICE | RELEASE_TO_SYSTEM;
    /// Every flag a backend accepts.
    pub const SUPPORTED: u32 = BLOCKING_SYNC | DISABLE_TIMING | INTERPROCESS | RELEASE_SCOPES;
}

/// Checks `hipEventCreateWithFlags` flags the way ROCm does: no unknown bits, at most one
/// release scope, and `INTERPROCESS` only together with `DISABLE_TIMING`.
pub fn validate_event_flags(flags: u32) -> Result<(), BackendError> {
    use event_flags::*;
    if flags & !SUPPORTED != 0 {
        return Err(BackendError::InvalidValue(format!(
            "unknown event flags {:#x}",
            flags & !SUPPORTED
        )));
    }
    if (flags & RELEASE_SCOPES).count_ones() > 1 {
        return Err(BackendError::InvalidValue(format!(
            "event flags {flags:#x} name more than one release scope"
        )));
    }
    if flags & INTERPROCESS != 0 && flags & DISABLE_TIMING == 0 {
        return Err(BackendError::InvalidValue(
            "hipEventInterprocess requires hipEventDisableTiming".into(),
        ));
    }
    Ok(())
}

/// Bytes handed to an asynchronous host-to-device copy. The backend owns them until the
/// stream reaches the copy, then drops them (returning a pooled buffer to its pool, say).
pub struct HostData(HostBytes);

enum HostBytes {
    Vec(Vec<u8>),
    Shared(Arc<[u8]>),
    Lent(Box<dyn AsRef<[u8]> + Send>),
}

impl HostData {
    /// Wraps any owned byte container, e.g. a transport's pooled receive buffer.
    pub fn from_buffer(buffer: impl AsRef<[u8]> + Send + 'static) -> Self {
        Self(HostBytes::Lent(Box::new(buffer)))
    }

    /// The bytes to copy.
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            HostBytes::Vec(bytes) => bytes,
            HostBytes::Shared(bytes) => bytes,
            HostBytes::Lent(buffer) => (**buffer).as_ref(),
        }
    }

    /// Number of bytes to copy.
    pub fn len(&self) -> usize {
        self.as_bytes().len()
    }

    /// Whether there is nothing to copy.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl From<Vec<u8>> for HostData {
    fn from(bytes: Vec<u8>) -> Self {
        Self(HostBytes::Vec(bytes))
    }
}

impl From<Box<[u8]>> for HostData {
    fn from(bytes: Box<[u8]>) -> Self {
        Self(HostBytes::Vec(bytes.into_vec()))
    }
}

impl From<Arc<[u8]>> for HostData {
    fn from(bytes: Arc<[u8]>) -> Self {
        Self(HostBytes::Shared(bytes))
    }
}

impl fmt::Debug for HostData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostData")
            .field("len", &self.len())
            .finish()
    }
}

/// Receives the bytes of an asynchronous device-to-host copy, on the stream's executor.
pub type DtohDone = Box<dyn FnOnce(Result<Vec<u8>, BackendError>) + Send + 'static>;

/// A host function queued on a stream (`hipLaunchHostFunc`). It runs on the stream's
/// executor once all earlier work on the stream is done and must not call back into the
/// backend for that stream (CUDA and HIP forbid runtime calls from host functions too).
pub type HostFn = Box<dyn FnOnce() + Send + 'static>;

/// The element a memset repeats: `hipMemset` (bytes), `hipMemsetD16`, `hipMemsetD32`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MemsetPattern {
    /// `hipMemset`/`hipMemsetD8`.
    U8(u8),
    /// `hipMemsetD16`, stored little-endian.
    U16(u16),
    /// `hipMemsetD32`, stored little-endian.
    U32(u32),
}

impl MemsetPattern {
    /// From a wire-level `(value, element size)`: size 1, 2 or 4, value truncated to it as HIP
    /// truncates `int value` in `hipMemset`.
    pub fn from_raw(value: u32, elem_size: u32) -> Result<Self, BackendError> {
        match elem_size {
            1 => Ok(Self::U8(value as u8)),
            2 => Ok(Self::U16(value as u16)),
            4 => Ok(Self::U32(value)),
            other => Err(BackendError::InvalidValue(format!(
                "memset element size {other} is not 1, 2 or 4"
            ))),
        }
    }

    /// Size of one element in bytes.
    pub fn elem_size(self) -> u64 {
        match self {
            Self::U8(_) => 1,
            Self::U16(_) => 2,
            Self::U32(_) => 4,
        }
    }

    /// Bytes covered by `count` elements, or `None` on overflow.
    pub fn byte_len(self, count: u64) -> Option<u64> {
        count.checked_mul(self.elem_size())
    }

    /// Fills `dst` with the pattern; `dst.len()` is a multiple of [`Self::elem_size`].
    pub fn fill(self, dst: &mut [u8]) {
        match self {
            Self::U8(value) => dst.fill(value),
            Self::U16(value) => fill_repeating(dst, &value.to_le_bytes()),
            Self::U32(value) => fill_repeating(dst, &value.to_le_bytes()),
        }
    }
}

fn fill_repeating<const N: usize>(dst: &mut [u8], element: &[u8; N]) {
    for chunk in dst.chunks_exact_mut(N) {
        chunk.copy_from_slice(element);
    }
}

/// Device memory figures (`hipMemGetInfo`), in bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MemInfo {
    /// Bytes still allocatable, counting every session's allocations.
    pub free: u64,
    /// Device capacity.
    pub total: u64,
}

/// What a client needs to fill `hipDeviceProp_t`; the session maps field by field.
/// Sizes are bytes, clocks kHz; `int` fields of `hipDeviceProp_t` are `i32` here and its
/// 0/1 flags `bool`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceProperties {
    /// Marketing name, at most 255 bytes (the C field is `char[256]`).
    pub name: String,
    /// `gcnArchName`, e.g. `gfx90a:sramecc+:xnack-`; `host` for the host backend.
    pub gcn_arch_name: String,
    pub total_global_mem: u64,
    pub shared_mem_per_block: u64,
    /// Most shared memory a block can opt into (`hipFuncAttributeMaxDynamicSharedMemorySize`).
    pub shared_mem_per_block_optin: u64,
    pub regs_per_block: i32,
    pub warp_size: i32,
    pub max_threads_per_block: i32,
    pub max_threads_dim: [i32; 3],
    pub max_grid_size: [i32; 3],
    pub clock_rate_khz: i32,
    pub memory_clock_rate_khz: i32,
    /// In bits.
    pub memory_bus_width: i32,
    pub total_const_mem: u64,
    pub major: i32,
    pub minor: i32,
    pub multi_processor_count: i32,
    pub l2_cache_size: i32,
    pub max_threads_per_multiprocessor: i32,
    /// `hipComputeMode`; 0 is `hipComputeModeDefault`.
    pub compute_mode: i32,
    pub concurrent_kernels: bool,
    pub pci_domain_id: i32,
    pub pci_bus_id: i32,
    pub pci_device_id: i32,
    pub max_shared_memory_per_multiprocessor: u64,
    pub is_multi_gpu_board: bool,
    pub can_map_host_memory: bool,
    pub integrated: bool,
    pub ecc_enabled: bool,
    pub unified_addressing: bool,
    pub managed_memory: bool,
    pub concurrent_managed_access: bool,
    pub pageable_memory_access: bool,
    pub cooperative_launch: bool,
    pub kernel_exec_timeout_enabled: bool,
    pub async_engine_count: i32,
    pub mem_pitch: u64,
    pub texture_alignment: u64,
}

/// A pitched area of device memory: rows start `pitch` bytes apart from `ptr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pitched {
    /// First byte of the first row.
    pub ptr: DevicePtr,
    /// Bytes between the starts of two rows.
    pub pitch: u64,
}

/// The shape of a 2D copy: `height` rows of `width` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rows {
    /// Bytes per row.
    pub width: u64,
    /// Number of rows.
    pub height: u64,
}

impl Rows {
    /// Bytes from the first row's start to the last row's end at `pitch` (0 for an empty
    /// copy); `None` on overflow.
    pub fn span(self, pitch: u64) -> Option<u64> {
        if self.width == 0 || self.height == 0 {
            return Some(0);
        }
        pitch.checked_mul(self.height - 1)?.checked_add(self.width)
    }

    /// Bytes of the rows packed back to back; `None` on overflow.
    pub fn packed_len(self) -> Option<u64> {
        self.width.checked_mul(self.height)
    }
}

/// Executes HIP work for every session of the worker. See the module documentation for the
/// stream, copy and error model; each backend documents its own null-stream semantics.
///
/// Methods that take `stream: Option<StreamHandle>` are ordered after earlier work on that
/// stream; `None` is the null stream of the device(s) the operation touches.
pub trait Backend: Send + Sync + 'static {
    /// `"host"`, `"cuda"` or `"hip"`.
    fn name(&self) -> &'static str;

    /// Whether device pointers are ordinary host addresses of this process (the host
    /// backend): a transport may then register device allocations with the NIC directly.
    fn device_memory_is_host_memory(&self) -> bool {
        false
    }

    /// Host buffers, (address, length), that the backend stages copies through and keeps
    /// until it is dropped (pinned staging): a transport may register them with its NIC once
    /// instead of for every copy. Default: none.
    fn staging_buffers(&self) -> Vec<(usize, usize)> {
        Vec::new()
    }

    /// Exports the allocation `[ptr, ptr + len)` as a dma-buf a NIC can register (GPUDirect
    /// RDMA): the fd and the offset of `ptr` inside it. Default: not supported.
    fn export_dmabuf_fd(&self, ptr: DevicePtr, len: u64) -> Result<(std::os::fd::OwnedFd, u64), BackendError> {
        let _ = (ptr, len);
        Err(BackendError::NotSupported(format!("the {} backend cannot export device memory as a dma-buf", self.name())))
    }

    // ---- devices ------------------------------------------------------------------------

    /// Number of devices this backend exposes.
    fn device_count(&self) -> Result<u32, BackendError>;

    /// Static properties of `dev` (`hipGetDeviceProperties`).
    fn device_properties(&self, dev: DeviceIndex) -> Result<DeviceProperties, BackendError>;

    /// Waits until all work queued on `dev`, on every stream of every session, is done.
    /// Errors latched on individual streams stay there, reported by that stream's
    /// synchronize/query (the session, which knows its streams, collects them).
    fn device_synchronize(&self, dev: DeviceIndex) -> Result<(), BackendError>;

    /// The current value of `limit` on `dev` (`hipDeviceGetLimit`).
    fn device_limit(&self, dev: DeviceIndex, limit: DeviceLimit) -> Result<u64, BackendError>;

    /// Sets `limit` on `dev` (`hipDeviceSetLimit`) and returns the value now in effect (a
    /// backend may round up); a value the backend cannot honour is `InvalidValue`.
    fn set_device_limit(
        &self,
        dev: DeviceIndex,
        limit: DeviceLimit,
        value: u64,
    ) -> Result<u64, BackendError>;

    /// Whether kernels on `dev` can access memory of `peer` (`hipDeviceCanAccessPeer`; the
    /// session answers `false` for `dev == peer` itself).
    fn can_access_peer(&self, dev: DeviceIndex, peer: DeviceIndex) -> Result<bool, BackendError>;

    // ---- memory -------------------------------------------------------------------------

    /// Free and total memory of `dev`, counting every session's allocations.
    fn mem_get_info(&self, dev: DeviceIndex) -> Result<MemInfo, BackendError>;

    /// Allocates `size` bytes on `dev`. `size == 0` yields [`DevicePtr::NULL`] (HIP returns
    /// `hipSuccess` with a null pointer). A request beyond the free capacity fails with
    /// `OutOfMemory` without being attempted.
    fn malloc(&self, dev: DeviceIndex, size: u64) -> Result<DevicePtr, BackendError>;

    /// Frees the allocation starting at `ptr`; null is a no-op. Work already queued that uses
    /// the allocation still completes safely (backend-specific how; see each backend).
    fn free(&self, ptr: DevicePtr) -> Result<(), BackendError>;

    // ---- copies and memset --------------------------------------------------------------

    /// Queues a copy of `data` to `dst`; `data` is dropped once copied.
    fn memcpy_htod(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        data: HostData,
    ) -> Result<(), BackendError>;

    /// Waits for `stream`, then copies `data` to `dst`; returns once the copy is done.
    fn memcpy_htod_sync(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        data: &[u8],
    ) -> Result<(), BackendError>;

    /// Lets `fill` write the `len` bytes at `dst` (e.g. straight from a socket), in `stream`
    /// order. Backends with host-resident memory hand out the device bytes themselves (the
    /// write is complete on return); GPU backends fill a pinned staging buffer and may
    /// return while the DMA still runs, so the next chunk is received meanwhile: call
    /// [`Backend::finish_device_writes`] before reporting completion to the client. The
    /// default stages through a buffer and [`Backend::memcpy_htod_sync`].
    fn with_device_bytes_mut(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        len: u64,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> Result<(), BackendError> {
        let mut staging = zeroed_buffer(len)?;
        fill(&mut staging);
        self.memcpy_htod_sync(stream, dst, &staging)
    }

    /// Waits until every write started by [`Backend::with_device_bytes_mut`] on `stream`
    /// (the null stream of `near`'s device when `None`) has reached the device.
    fn finish_device_writes(&self, stream: Option<StreamHandle>, near: DevicePtr) -> Result<(), BackendError> {
        let _ = (stream, near);
        Ok(())
    }

    /// Queues a copy of `len` bytes at `src` to the host; `done` receives them on the
    /// stream's executor when the stream reaches the copy (inline for a synchronous null
    /// stream). An `Err` return means nothing was queued and `done` is dropped uncalled.
    fn memcpy_dtoh(
        &self,
        stream: Option<StreamHandle>,
        src: DevicePtr,
        len: u64,
        done: DtohDone,
    ) -> Result<(), BackendError>;

    /// Waits for `stream`, then copies `out.len()` bytes at `src` into `out`.
    fn memcpy_dtoh_sync(
        &self,
        stream: Option<StreamHandle>,
        src: DevicePtr,
        out: &mut [u8],
    ) -> Result<(), BackendError>;

    /// Waits for `stream`, then lets `read` see the `len` bytes at `src` (e.g. to write them
    /// to a socket). The default stages through a buffer and [`Backend::memcpy_dtoh_sync`].
    fn with_device_bytes(
        &self,
        stream: Option<StreamHandle>,
        src: DevicePtr,
        len: u64,
        read: &mut dyn FnMut(&[u8]),
    ) -> Result<(), BackendError> {
        let mut staging = zeroed_buffer(len)?;
        self.memcpy_dtoh_sync(stream, src, &mut staging)?;
        read(&staging);
        Ok(())
    }

    /// Queues a device-to-device copy with `memmove` semantics (overlap allowed).
    fn memcpy_dtod(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        src: DevicePtr,
        len: u64,
    ) -> Result<(), BackendError>;

    /// Queues filling `count` elements at `dst` with `pattern`.
    fn memset(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        pattern: MemsetPattern,
        count: u64,
    ) -> Result<(), BackendError>;

    /// Queues a 2D copy of `data` (packed rows of `width` bytes) to the rows of `dst`.
    fn memcpy_htod_2d(
        &self,
        stream: Option<StreamHandle>,
        dst: Pitched,
        width: u64,
        data: HostData,
    ) -> Result<(), BackendError>;

    /// Queues a 2D copy of the rows of `src` to the host; `done` receives them packed, as
    /// [`Backend::memcpy_dtoh`] does.
    fn memcpy_dtoh_2d(
        &self,
        stream: Option<StreamHandle>,
        src: Pitched,
        rows: Rows,
        done: DtohDone,
    ) -> Result<(), BackendError>;

    /// Queues a device-to-device 2D copy (rows of distinct areas; overlapping areas copy
    /// row by row in order).
    fn memcpy_dtod_2d(
        &self,
        stream: Option<StreamHandle>,
        dst: Pitched,
        src: Pitched,
        rows: Rows,
    ) -> Result<(), BackendError>;

    /// Queues a copy from `src` on `src_dev` to `dst` on `dst_dev` (`hipMemcpyPeer`).
    fn memcpy_peer(
        &self,
        stream: Option<StreamHandle>,
        dst: DevicePtr,
        dst_dev: DeviceIndex,
        src: DevicePtr,
        src_dev: DeviceIndex,
        len: u64,
    ) -> Result<(), BackendError>;

    /// Allocates `size` bytes on `dev` in `stream` order (`hipMallocAsync`): the memory may
    /// be used by work queued on the stream from now on. `size == 0` yields null.
    fn malloc_async(&self, stream: Option<StreamHandle>, dev: DeviceIndex, size: u64) -> Result<DevicePtr, BackendError>;

    /// Frees the allocation starting at `ptr` once `stream` has finished its earlier work
    /// (`hipFreeAsync`); the address is invalid for new work from the call on.
    fn free_async(&self, stream: Option<StreamHandle>, ptr: DevicePtr) -> Result<(), BackendError>;

    // ---- streams ------------------------------------------------------------------------

    /// Creates a stream on `dev`. `flags` are [`stream_flags`]; `priority` is clamped into
    /// [`Backend::stream_priority_range`] as HIP does.
    fn stream_create(
        &self,
        dev: DeviceIndex,
        flags: u32,
        priority: i32,
    ) -> Result<StreamHandle, BackendError>;

    /// Drains the stream's queued work, then destroys it.
    fn stream_destroy(&self, stream: StreamHandle) -> Result<(), BackendError>;

    /// Waits for all work queued so far; returns the first error any queued operation of
    /// this stream hit (latched until the stream is destroyed).
    fn stream_synchronize(&self, stream: StreamHandle) -> Result<(), BackendError>;

    /// Whether all queued work is done (the session maps `false` to `hipErrorNotReady`); a
    /// latched error is returned as `Err`.
    fn stream_query(&self, stream: StreamHandle) -> Result<bool, BackendError>;

    /// Makes later work on `stream` wait until `event`'s latest record is reached. An event
    /// never recorded imposes no wait. `None` blocks the null stream, i.e. the caller.
    fn stream_wait_event(
        &self,
        stream: Option<StreamHandle>,
        event: EventHandle,
    ) -> Result<(), BackendError>;

    /// `(least, greatest)` priority as `hipDeviceGetStreamPriorityRange` reports it; a lower
    /// number is a higher priority. `(0, 0)` means priorities are not supported.
    fn stream_priority_range(&self, dev: DeviceIndex) -> Result<(i32, i32), BackendError>;

    /// `(flags, priority)` of a created stream: the flags it was created with and its
    /// priority after clamping (`hipStreamGetFlags`, `hipStreamGetPriority`).
    fn stream_info(&self, stream: StreamHandle) -> Result<(u32, i32), BackendError>;

    /// Queues `f` to run on the stream's executor after earlier work (`hipLaunchHostFunc`).
    fn launch_host_func(&self, stream: StreamHandle, f: HostFn) -> Result<(), BackendError>;

    // ---- events -------------------------------------------------------------------------

    /// Creates an event on `dev` (events belong to a device, as in HIP and CUDA) with
    /// [`event_flags`], checked by [`validate_event_flags`].
    fn event_create(&self, dev: DeviceIndex, flags: u32) -> Result<EventHandle, BackendError>;

    /// Destroys `event`; records still queued complete harmlessly.
    fn event_destroy(&self, event: EventHandle) -> Result<(), BackendError>;

    /// Records `event` into `stream` (`None`: the null stream of the event's device). The
    /// event completes, and takes its timestamp, when the stream reaches the record.
    /// A stream of another device is `InvalidHandle`, as in HIP.
    fn event_record(
        &self,
        event: EventHandle,
        stream: Option<StreamHandle>,
    ) -> Result<(), BackendError>;

    /// Waits until the latest record of `event` is reached; immediate if never recorded.
    fn event_synchronize(&self, event: EventHandle) -> Result<(), BackendError>;

    /// Whether the latest record of `event` has been reached (`true` if never recorded, as
    /// in HIP; the session maps `false` to `hipErrorNotReady`).
    fn event_query(&self, event: EventHandle) -> Result<bool, BackendError>;

    /// Milliseconds between the timestamps of `start` and `end`, negative if `end` came first.
    /// Either never recorded, or created with `DISABLE_TIMING`: `InvalidHandle`; either not
    /// yet reached: `NotReady` (ROCm's order of checks).
    fn event_elapsed_ms(&self, start: EventHandle, end: EventHandle) -> Result<f32, BackendError>;

    // ---- modules and kernels ------------------------------------------------------------

    /// Loads a module image onto `dev`. An image for another architecture is
    /// `NoBinaryForGpu`, one that is not an image of its format `InvalidImage`; both name
    /// the format and this backend's architecture.
    fn module_load(
        &self,
        dev: DeviceIndex,
        format: ModuleFormat,
        image: &[u8],
    ) -> Result<ModuleHandle, BackendError>;

    /// Unloads `module`: its functions become invalid and its globals unmapped at once;
    /// launches already queued still run, with the module kept alive until they are done.
    fn module_unload(&self, module: ModuleHandle) -> Result<(), BackendError>;

    /// The kernel `name` of `module`, with its parameter layout and attributes; the same
    /// handle every time for the same kernel. Unknown names are `NotFound`.
    fn module_function(
        &self,
        module: ModuleHandle,
        name: &str,
    ) -> Result<KernelFunction, BackendError>;

    /// Address and size of the global `name` of `module` (`hipModuleGetGlobal`). The range
    /// is device memory for copies until the module is unloaded, but never freeable.
    fn module_global(
        &self,
        module: ModuleHandle,
        name: &str,
    ) -> Result<(DevicePtr, u64), BackendError>;

    /// `hipFuncGetAttributes`.
    fn function_attributes(
        &self,
        function: FunctionHandle,
    ) -> Result<FunctionAttributes, BackendError>;

    /// `hipFuncSetAttribute`: a value out of the attribute's range is `InvalidValue`; later
    /// [`Backend::function_attributes`] report it, and launches honour it.
    fn function_set_attribute(
        &self,
        function: FunctionHandle,
        attribute: FunctionAttribute,
        value: i32,
    ) -> Result<(), BackendError>;

    /// Queues a launch of `function` on `stream` (`None`: the null stream of the module's
    /// device, run before the call returns). `args` is the packed blob laid out by
    /// [`KernelFunction::params`]; it must cover every parameter. Shape and argument errors
    /// are returned at once; failures while running are latched on the stream.
    fn launch_kernel(
        &self,
        stream: Option<StreamHandle>,
        function: FunctionHandle,
        config: LaunchConfig,
        args: Vec<u8>,
    ) -> Result<(), BackendError>;

    /// `hipModuleOccupancyMaxActiveBlocksPerMultiprocessor`: blocks of `block_size` threads
    /// and `dynamic_shared` bytes that fit on one multiprocessor at once.
    fn occupancy_max_active_blocks(
        &self,
        function: FunctionHandle,
        block_size: u32,
        dynamic_shared: u64,
    ) -> Result<u32, BackendError>;

    /// `hipModuleOccupancyMaxPotentialBlockSize`: `(min_grid_size, block_size)` reaching the
    /// highest occupancy; `block_size_limit` 0 means no limit.
    fn occupancy_max_potential_block_size(
        &self,
        function: FunctionHandle,
        dynamic_shared: u64,
        block_size_limit: u32,
    ) -> Result<(u32, u32), BackendError>;

    // ---- runtime compilation ------------------------------------------------------------

    /// `hiprtcCompileProgram` for `dev`, run on the worker. The output's `code` is an image
    /// [`Backend::module_load`] accepts.
    fn rtc_compile(
        &self,
        dev: DeviceIndex,
        request: &RtcRequest<'_>,
    ) -> Result<RtcOutput, BackendError>;
}

/// A zero-filled staging buffer of `len` bytes, refusing sizes the host cannot hold instead of
/// aborting.
pub(crate) fn zeroed_buffer(len: u64) -> Result<Vec<u8>, BackendError> {
    let len = usize::try_from(len)
        .map_err(|_| BackendError::OutOfMemory(format!("{len} bytes exceed the address space")))?;
    let mut buffer = Vec::new();
    buffer
        .try_reserve_exact(len)
        .map_err(|e| BackendError::OutOfMemory(format!("staging buffer of {len} bytes: {e}")))?;
    buffer.resize(len, 0);
    Ok(buffer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memset_pattern_from_raw() {
        assert_eq!(
            MemsetPattern::from_raw(0x1ff, 1),
            Ok(MemsetPattern::U8(0xff))
        );
        assert_eq!(
            MemsetPattern::from_raw(0x1_2345, 2),
            Ok(MemsetPattern::U16(0x2345))
        );
        assert_eq!(MemsetPattern::from_raw(7, 4), Ok(MemsetPattern::U32(7)));
        assert_eq!(
            MemsetPattern::from_raw(7, 3).unwrap_err().hip_code(),
            hip_code::INVALID_VALUE
        );
        assert_eq!(MemsetPattern::U32(0).byte_len(u64::MAX), None);
    }

    #[test]
    fn memset_pattern_fills_little_endian() {
        let mut bytes = [0xa5u8; 8];
        MemsetPattern::U16(0x0102).fill(&mut bytes);
        assert_eq!(bytes, [2, 1, 2, 1, 2, 1, 2, 1]);
        MemsetPattern::U32(0x0102_0304).fill(&mut bytes);
        assert_eq!(bytes, [4, 3, 2, 1, 4, 3, 2, 1]);
    }

    #[test]
    fn event_flags_follow_rocm() {
        use event_flags::*;
        assert!(validate_event_flags(DEFAULT).is_ok());
        assert!(validate_event_flags(BLOCKING_SYNC | DISABLE_TIMING).is_ok());
        assert!(validate_event_flags(INTERPROCESS | DISABLE_TIMING).is_ok());
        assert!(validate_event_flags(INTERPROCESS).is_err());
        assert!(validate_event_flags(RELEASE_TO_DEVICE | RELEASE_TO_SYSTEM).is_err());
        assert!(validate_event_flags(0x8).is_err());
    }

    #[test]
    fn host_data_sources() {
        assert_eq!(HostData::from(vec![1, 2, 3]).as_bytes(), &[1, 2, 3]);
        assert_eq!(
            HostData::from(vec![4u8].into_boxed_slice()).as_bytes(),
            &[4]
        );
        assert_eq!(HostData::from(Arc::<[u8]>::from(&[5u8, 6][..])).len(), 2);
        assert_eq!(HostData::from_buffer([7u8; 4]).as_bytes(), &[7; 4]);
    }
}
