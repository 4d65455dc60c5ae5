//! The client's record of memory: the device ranges it allocated or looked up (so
//! `hipMemcpyDefault` and pointer queries can tell device from host addresses, as unified
//! addressing does on a local GPU), each in the book of its worker's session
//! (`client_core::memory_book`, read without the connection's lock: the copy path asks), and
//! the pinned host allocations of this process (`hipHostMalloc`; no worker sees them, and
//! they are made before any connection opens, so they stay the process's).

use client_core::CallError;
use std::alloc::Layout;
use std::collections::BTreeMap;
use std::ffi::c_uint;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

pub use client_core::memory_book::{DeviceRange, RangeKind};

/// A `hipHostMalloc` allocation of this process.
#[derive(Debug, Clone, Copy)]
pub struct HostAllocation {
    pub layout: Layout,
    pub flags: c_uint,
    /// The device current when it was allocated (what HIP reports for it).
    pub device: u32,
    pub id: u32,
}

fn host_allocs() -> &'static Mutex<BTreeMap<usize, HostAllocation>> {
    static ALLOCS: OnceLock<Mutex<BTreeMap<usize, HostAllocation>>> = OnceLock::new();
    ALLOCS.get_or_init(Default::default)
}

/// A fresh buffer id (ROCm numbers its memory objects from 1, once per process: two workers'
/// allocations never share one).
fn next_buffer_id() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The device range containing `ptr`: its base and record.
pub fn find_device_range(ptr: u64) -> Option<(u64, DeviceRange)> {
    // An address belongs to one worker's memory (`collides_with_other_worker`).
    crate::remote::every_published().find_map(|p| p.memory().find(ptr))
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
    let Ok(own) = crate::remote::published_for_device(device) else {
        return false;
    };
    crate::remote::every_published().filter(|p| !std::ptr::eq(*p, own)).any(|p| p.memory().overlaps(ptr, size))
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
    if ptr == 0 {
        return;
    }
    // The device was checked by the call that made the range (so its worker is known).
    if let Ok(published) = crate::remote::published_for_device(device) {
        published.memory().record(ptr, DeviceRange { size, device, flags, id: next_buffer_id(), kind });
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
    crate::remote::published_for_device(device)?.memory().forget_device(device);
    Ok(())
}

/// Drops the record of the device allocation at `ptr` (after it was freed).
pub fn forget_device_range(ptr: u64) {
    let _ = crate::remote::every_published().any(|p| p.memory().forget(ptr));
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

/// Records `size` bytes at `ptr` made by an allocation node of `graph` on `device` (graph
/// memory, which `hipDeviceGraphMemTrim` releases: `client_core::memory_book`).
pub fn record_graph_memory(ptr: u64, size: u64, device: u32, graph: u64) {
    record_device_range(ptr, size, device, 0);
    if let Ok(published) = crate::remote::published_for_device(device) {
        published.memory().record_graph_memory(ptr, device, graph);
    }
}

/// Whether `ptr` is graph memory no free node frees yet.
pub fn is_unfreed_graph_memory(ptr: u64) -> bool {
    crate::remote::every_published().any(|p| p.memory().is_unfreed_graph_memory(ptr))
}

/// A free node now frees the graph memory at `ptr`.
pub fn graph_memory_freed(ptr: u64) {
    crate::remote::every_published().for_each(|p| p.memory().graph_memory_freed(ptr));
}

/// `graph` was destroyed: the allocation nodes it held are gone.
pub fn graph_memory_graph_destroyed(graph: u64) {
    crate::remote::every_published().for_each(|p| p.memory().graph_destroyed(graph));
}

/// `hipDeviceGraphMemTrim(device)` succeeded: the memory it released is no longer HIP's.
pub fn graph_memory_trimmed(device: u32) {
    if let Ok(published) = crate::remote::published_for_device(device) {
        published.memory().graph_memory_trimmed(device);
    }
}

/// `hipFree` of graph memory: the application's to release, no longer the graph pool's.
pub fn graph_memory_released(ptr: u64) {
    crate::remote::every_published().for_each(|p| p.memory().graph_memory_released(ptr));
}
