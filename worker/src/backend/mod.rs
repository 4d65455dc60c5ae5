//! Backends: what actually executes HIP work on the worker.
//!
//! A [`Backend`] is shared by every session of the worker (`Send + Sync + 'static`, all methods
//! `&self`). The session validates client handles and pointers against its own tables first,
//! then calls the backend with typed arguments; the backend still checks everything it
//! dereferences, so a session bug becomes an error, never a stray write.
//!
//! The traits are shaped after real GPU runtimes (CUDA driver API, HIP):
//!
//! * **Streams** are the GPU's in-order queues. Work on one stream runs in submission order;
//!   work on different streams may overlap. `None` as a stream is the *null (legacy) stream* of
//!   the device the operation touches; what it synchronizes with is backend-defined and
//!   documented per backend (the host backend runs null-stream work synchronously after the
//!   device's blocking streams drain, see [`host`]).
//! * **Copies may be asynchronous.** [`MemoryBackend::memcpy_htod`] takes ownership of the source
//!   bytes ([`HostData`]) so it can queue them; [`MemoryBackend::memcpy_dtoh`] reports its bytes
//!   through a callback run when the stream reaches the copy. The `_sync` variants and the
//!   `with_device_bytes*` pair wait for the stream and work on caller-provided memory.
//! * **Errors of queued work** are latched on their stream and reported by the next
//!   [`StreamBackend::stream_synchronize`] / [`StreamBackend::stream_query`], as a GPU reports a fault.
//! * **Events** are GPU events: recorded into a stream, timestamped when the stream reaches
//!   them.
//! * **Modules and kernels.** [`ModuleBackend::module_load`] takes an image in one of the
//!   [`ModuleFormat`]s (a GPU backend: code objects, PTX, cubin; the host backend: host
//!   modules, see `docs/HOST_MODULES.md`) and hands out opaque module and function handles.
//!   [`ModuleBackend::module_function`] reports each kernel's exact parameter layout, so the client
//!   packs arguments into one blob; [`ModuleBackend::launch_kernel`] takes that blob by value and
//!   queues the launch on the stream like any other operation: its failure is latched on the
//!   stream like a GPU fault.
//! * **Runtime compilation** ([`RtcBackend::rtc_compile`]) runs on the worker, for the device
//!   the client named; its output is an image [`ModuleBackend::module_load`] accepts.
//! * **Several devices.** Module loads and compiles name their device (the client's current
//!   one); a module's kernels run on its device. Devices are the backend's ordinals after
//!   `--devices` / `HIP_VISIBLE_DEVICES` selection (see `crate::devices`); peer copies and
//!   [`DeviceBackend::enable_peer_access`] work between any two of them.
//!
//! The methods are split by protocol family, as the session's handlers are: one file per
//! family (`device.rs`, `memory.rs`, ...) holds that family's vocabulary and its trait
//! ([`DeviceBackend`], [`MemoryBackend`], [`StreamBackend`], [`EventBackend`],
//! [`ModuleBackend`], [`RtcBackend`]), plus [`TransportHooks`] for zero-copy transports. A
//! backend implements each in its own block; [`Backend`] is all of them together.

mod array;
pub mod blas;
#[cfg(feature = "cuda")]
pub mod cuda;
mod device;
mod device_attr;
pub mod device_log;
pub mod error;
mod event;
#[cfg(any(feature = "cuda", feature = "hip"))]
pub(crate) mod gpu;
mod graph;
mod handles;
#[cfg(feature = "hip")]
pub mod hip;
pub mod host;
pub mod host_region;
mod ipc;
pub mod launch_watch;
mod managed;
mod memory;
mod memset;
mod module;
mod rtc;
mod stream;
mod stream_ops;
mod texture;
mod transport;
pub mod vmm;

pub use array::{format_channel_size, linear as linear_arrays, ArrayBackend, ArrayDesc, ArrayHandle, Extent, MipmapHandle, Place};
pub use blas::BlasBackend;
pub use device::{DeviceBackend, DeviceLimit, DeviceProperties};
pub use device_attr::{link_type, DeviceAttributeBackend, PeerAttribute};
pub use error::{hip_code, BackendError};
pub use event::{event_flags, validate_event_flags, EventBackend};
pub use graph::{replace_exec_graph, replay_graph, ExecGraph, GraphBackend, GraphOp, GraphPlan, HostStep};
pub use handles::{DeviceIndex, DevicePtr, EventHandle, FunctionHandle, HandleHasher, HandleMap, ModuleHandle, StreamHandle};
pub use host::{HostBackend, HostConfig, TEST_STICKY_FAULT_ENV};
pub use ipc::{DriverIpcHandle, IpcBackend, IpcEventShare, IpcReach, IpcShare, SharedEventPage, DRIVER_IPC_HANDLE_BYTES, EVENT_PAGE_BYTES};
pub use managed::ManagedBackend;
#[cfg(any(feature = "cuda", feature = "hip"))]
pub(crate) use memory::zeroed_buffer;
pub use memory::{DtohDone, HostData, MemInfo, MemoryBackend, MemsetPattern, Pitched, PoolAccess, RegisteredDone, Rows};
pub use memset::{MemsetBackend, PitchedFill};
pub use module::{args_len, FunctionAttribute, FunctionAttributes, KernelFunction, LaunchConfig, ModuleBackend, ModuleFormat, ParamLayout};
pub use rtc::{jit_input, LinkInput, RtcBackend, RtcOutput, RtcRequest, FALLBACK_HEADERS};
pub use stream::{stream_flags, HostFn, StreamBackend};
pub use stream_ops::{CheckedHostFn, MemOp, StreamOpsBackend, WaitCondition, Width};
pub use texture::{ResourceDesc, ResourceViewDesc, TextureDesc, TextureResource, TextureSpec};
pub use transport::TransportHooks;
pub use vmm::{PhysicalHandle, VmmBackend};

/// Executes HIP work for every session of the worker: one trait per protocol family plus the
/// transport hooks, implemented family by family (see the module documentation for the
/// stream, copy and error model; each backend documents its own null-stream semantics).
/// Implemented for every type that implements all of them, so `Arc<dyn Backend>` is what
/// sessions and the server share.
pub trait Backend:
    DeviceBackend
    + DeviceAttributeBackend
    + MemoryBackend
    + MemsetBackend
    + ArrayBackend
    + BlasBackend
    + StreamBackend
    + StreamOpsBackend
    + EventBackend
    + ModuleBackend
    + RtcBackend
    + VmmBackend
    + IpcBackend
    + ManagedBackend
    + GraphBackend
    + TransportHooks
    + Send
    + Sync
    + 'static
{
}

impl<T> Backend for T where
    T: DeviceBackend
        + DeviceAttributeBackend
        + MemoryBackend
        + MemsetBackend
        + ArrayBackend
        + BlasBackend
        + StreamBackend
        + StreamOpsBackend
        + EventBackend
        + ModuleBackend
        + RtcBackend
        + VmmBackend
        + IpcBackend
        + ManagedBackend
        + GraphBackend
        + TransportHooks
        + Send
        + Sync
        + 'static
{
}
