//! The client's record of memory: the device ranges it allocated or looked up (so
//! `hipMemcpyDefault` and pointer queries can tell device from host addresses, as unified
//! addressing does on a local GPU) and the pinned host allocations of this process
//! (`hipHostMalloc`; the worker never sees them).

use client_core::CallError;
use std::alloc::Layout;
use std::collections::BTreeMap;
use std::ffi::c_uint;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

/// What kind of memory a recorded range is (pointer attributes and `hipMemcpyDefault`
/// answer from it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RangeKind {
    /// `hipMalloc` and friends, module globals.
    #[default]
    Device,
    /// Stream-ordered allocation from a memory pool (`hipMallocAsync`, `hipMallocFromPoolAsync`).
    Pool,
    /// A mapped range of a virtual memory reservation (`hipMemMap`).
    Vmm,
    /// Memory of another session opened through an IPC handle.
    Ipc,
    /// `hipMallocManaged`.
    Managed,
    /// Host memory the device can address (`hipHostRegister`, `hipHostMallocMapped`).
    HostMapped,
}

/// A device range this client knows: its allocations and the module globals it looked up.
#[derive(Debug, Clone, Copy)]
pub struct DeviceRange {
    pub size: u64,
    pub device: u32,
    /// `hipExtMallocWithFlags` kind (0 otherwise).
    pub flags: u32,
    /// Unique id (`HIP_POINTER_ATTRIBUTE_BUFFER_ID`).
    pub id: u32,
    pub kind: RangeKind,
}

/// A `hipHostMalloc` allocation of this process.
#[derive(Debug, Clone, Copy)]
pub struct HostAllocation {
    pub layout: Layout,
    pub flags: c_uint,
    /// The device current when it was allocated (what HIP reports for it).
    pub device: u32,
    pub id: u32,
}

fn device_allocs() -> &'static Mutex<BTreeMap<u64, DeviceRange>> {
    static ALLOCS: OnceLock<Mutex<BTreeMap<u64, DeviceRange>>> = OnceLock::new();
    ALLOCS.get_or_init(Default::default)
}

fn host_allocs() -> &'static Mutex<BTreeMap<usize, HostAllocation>> {
    static ALLOCS: OnceLock<Mutex<BTreeMap<usize, HostAllocation>>> = OnceLock::new();
    ALLOCS.get_or_init(Default::default)
}

/// A fresh buffer id (ROCm numbers its memory objects from 1).
fn next_buffer_id() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The device range containing `ptr`: its base and record.
pub fn find_device_range(ptr: u64) -> Option<(u64, DeviceRange)> {
    let allocs = device_allocs().lock().unwrap_or_else(|p| p.into_inner());
    allocs.range(..=ptr).next_back().filter(|(base, r)| ptr - **base < r.size.max(1)).map(|(b, r)| (*b, *r))
}

/// The `hipHostMalloc` allocation containing `ptr`: its base and record.
pub fn find_host_allocation(ptr: usize) -> Option<(usize, HostAllocation)> {
    let allocs = host_allocs().lock().unwrap_or_else(|p| p.into_inner());
    allocs.range(..=ptr).next_back().filter(|(base, h)| ptr - **base < h.layout.size()).map(|(b, h)| (*b, *h))
}

/// The device of the recorded range holding `ptr` (device memory of any kind).
pub fn device_of_pointer(ptr: u64) -> Option<u32> {
    find_device_range(ptr).filter(|(_, r)| r.kind != RangeKind::HostMapped).map(|(_, r)| r.device)
}

/// Runs `f` with its calls going to the worker of the device memory at `ptr` (several
/// workers: a pointer names its worker, whatever the current device); as is otherwise.
pub fn on_pointer<R>(ptr: u64, f: impl FnOnce() -> R) -> R {
    // The worker count first: with one worker (the usual case) no lookup, no lock.
    if crate::remote::worker_count() == 1 {
        return f();
    }
    match device_of_pointer(ptr) {
        Some(device) => crate::remote::on_device(device, f),
        None => f(),
    }
}

/// Whether `[ptr, ptr + size)`, just allocated on `device`, overlaps memory recorded for a
/// device of another worker. Workers place memory independently (the host backend's device
/// addresses are its process's), so two may hand out the same address; the client keeps
/// every device address unique to one worker so that a pointer names its worker.
pub fn collides_with_other_worker(ptr: u64, size: u64, device: u32) -> bool {
    if crate::remote::worker_count() == 1 {
        return false;
    }
    let end = ptr.saturating_add(size.max(1));
    let allocs = device_allocs().lock().unwrap_or_else(|p| p.into_inner());
    let before = allocs.range(..ptr).next_back().filter(|(base, r)| base.saturating_add(r.size.max(1)) > ptr);
    before.into_iter().chain(allocs.range(ptr..end)).any(|(_, r)| !crate::remote::same_worker(r.device, device).unwrap_or(false))
}

/// Whether `ptr` lies inside one of this process's device allocations. Device-visible host
/// memory (registered, mapped) is host memory to copies: its bytes live here.
pub fn is_device_pointer(ptr: u64) -> bool {
    find_device_range(ptr).is_some_and(|(_, r)| r.kind != RangeKind::HostMapped)
}

pub fn record_device_range(ptr: u64, size: u64, device: u32, flags: u32) {
    record_range_of_kind(ptr, size, device, flags, RangeKind::Device);
}

/// Records a range of a given [`RangeKind`] (pools, VMM mappings, IPC, managed, mapped host).
pub fn record_range_of_kind(ptr: u64, size: u64, device: u32, flags: u32, kind: RangeKind) {
    if ptr != 0 {
        let range = DeviceRange { size, device, flags, id: next_buffer_id(), kind };
        device_allocs().lock().unwrap_or_else(|p| p.into_inner()).insert(ptr, range);
    }
}

/// Records a device range the client did not allocate itself (a module global), so that
/// `hipMemcpyDefault` classifies it; it stays until the device is reset.
pub fn note_device_range(ptr: u64, size: u64, device: u32) {
    record_device_range(ptr, size, device, 0);
}

/// Drops the client-side record of a device's allocations (after `hipDeviceReset`).
pub fn forget_device_allocations(device: u32) -> Result<(), CallError> {
    super::managed::forget_device(device)?;
    device_allocs().lock().unwrap_or_else(|p| p.into_inner()).retain(|_, r| r.device != device);
    Ok(())
}

/// Drops the record of the device allocation at `ptr` (after it was freed).
pub fn forget_device_range(ptr: u64) {
    device_allocs().lock().unwrap_or_else(|p| p.into_inner()).remove(&ptr);
}

/// Records a `hipHostMalloc` allocation made with `layout`.
pub fn record_host_allocation(ptr: usize, layout: Layout, flags: c_uint, device: u32) {
    let record = HostAllocation { layout, flags, device, id: next_buffer_id() };
    host_allocs().lock().unwrap_or_else(|p| p.into_inner()).insert(ptr, record);
}

/// Removes the record of the host allocation at `ptr`, returning its layout for freeing.
pub fn take_host_allocation(ptr: usize) -> Option<Layout> {
    host_allocs().lock().unwrap_or_else(|p| p.into_inner()).remove(&ptr).map(|h| h.layout)
}

/// Memory of a graph memory allocation node (`hipGraphAddMemAllocNode`, or `hipMallocAsync`
/// captured into a graph), mirroring the worker's graph memory model: it stays allocated
/// until `hipDeviceGraphMemTrim` releases it to the device, which it does once a free node
/// frees it and the graph holding its allocation node is gone.
#[derive(Debug, Clone, Copy)]
struct GraphMemory {
    graph: u64,
    device: u32,
    freed: bool,
    alloc_node_gone: bool,
}

fn graph_memory() -> std::sync::MutexGuard<'static, BTreeMap<u64, GraphMemory>> {
    static MEMORY: OnceLock<Mutex<BTreeMap<u64, GraphMemory>>> = OnceLock::new();
    MEMORY.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner())
}

/// Records `size` bytes at `ptr` made by an allocation node of `graph` on `device`.
pub fn record_graph_memory(ptr: u64, size: u64, device: u32, graph: u64) {
    record_device_range(ptr, size, device, 0);
    graph_memory().insert(ptr, GraphMemory { graph, device, freed: false, alloc_node_gone: false });
}

/// Whether `ptr` is graph memory no free node frees yet.
pub fn is_unfreed_graph_memory(ptr: u64) -> bool {
    graph_memory().get(&ptr).is_some_and(|m| !m.freed)
}

/// A free node now frees the graph memory at `ptr`.
pub fn graph_memory_freed(ptr: u64) {
    if let Some(m) = graph_memory().get_mut(&ptr) {
        m.freed = true;
    }
}

/// `graph` was destroyed: the allocation nodes it held are gone.
pub fn graph_memory_graph_destroyed(graph: u64) {
    for m in graph_memory().values_mut().filter(|m| m.graph == graph) {
        m.alloc_node_gone = true;
    }
}

/// `hipDeviceGraphMemTrim(device)` succeeded: the memory it released is no longer HIP's.
pub fn graph_memory_trimmed(device: u32) {
    let released: Vec<u64> = graph_memory().iter().filter(|(_, m)| m.device == device && m.freed && m.alloc_node_gone).map(|(&p, _)| p).collect();
    for ptr in released {
        graph_memory().remove(&ptr);
        forget_device_range(ptr);
    }
}

/// `hipFree` of graph memory: the application's to release, no longer the graph pool's.
pub fn graph_memory_released(ptr: u64) {
    graph_memory().remove(&ptr);
}
