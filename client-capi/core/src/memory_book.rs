//! The device memory of a session's worker that the client knows: the ranges it allocated or
//! looked up (so `hipMemcpyDefault` and pointer queries tell device from host addresses, as
//! unified addressing does on a local GPU, and a pointer names its worker), and the memory of
//! graph allocation nodes, mirroring the worker's graph memory model.

use std::collections::BTreeMap;

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceRange {
    /// Bytes (0 for a pool's placeholder; a lookup treats it as 1).
    pub size: u64,
    /// The client's ordinal of its device.
    pub device: u32,
    /// `hipExtMallocWithFlags` kind (0 otherwise).
    pub flags: u32,
    /// Unique id in the process (`HIP_POINTER_ATTRIBUTE_BUFFER_ID`).
    pub id: u32,
    /// What kind of memory it is.
    pub kind: RangeKind,
}

/// Memory of a graph memory allocation node (`hipGraphAddMemAllocNode`, or `hipMallocAsync`
/// captured into a graph): it stays allocated until `hipDeviceGraphMemTrim` releases it to the
/// device, which it does once a free node frees it and the graph holding its allocation node
/// is gone.
#[derive(Debug, Clone, Copy)]
struct GraphMemory {
    graph: u64,
    device: u32,
    freed: bool,
    alloc_node_gone: bool,
}

/// A session's known device ranges (by base address) and graph memory.
#[derive(Debug, Default)]
pub struct MemoryBook {
    ranges: BTreeMap<u64, DeviceRange>,
    graph: BTreeMap<u64, GraphMemory>,
}

impl MemoryBook {
    /// The range containing `ptr`: its base and record.
    pub fn find(&self, ptr: u64) -> Option<(u64, DeviceRange)> {
        self.ranges.range(..=ptr).next_back().filter(|(base, r)| ptr - **base < r.size.max(1)).map(|(b, r)| (*b, *r))
    }

    /// Whether a recorded range overlaps `[ptr, ptr + size)`.
    pub fn overlaps(&self, ptr: u64, size: u64) -> bool {
        let end = ptr.saturating_add(size.max(1));
        let before = self.ranges.range(..ptr).next_back().filter(|(base, r)| base.saturating_add(r.size.max(1)) > ptr);
        before.is_some() || self.ranges.range(ptr..end).next().is_some()
    }

    /// Records `range` at `ptr` (nothing at address 0).
    pub fn record(&mut self, ptr: u64, range: DeviceRange) {
        if ptr != 0 {
            self.ranges.insert(ptr, range);
        }
    }

    /// Drops the record of the range at `ptr`; whether there was one.
    pub fn forget(&mut self, ptr: u64) -> bool {
        self.ranges.remove(&ptr).is_some()
    }

    /// Drops every range of `device` (after `hipDeviceReset`).
    pub fn forget_device(&mut self, device: u32) {
        self.ranges.retain(|_, r| r.device != device);
    }

    /// Records the memory at `ptr` made by an allocation node of `graph` on `device` (its
    /// range is recorded with [`MemoryBook::record`]).
    pub fn record_graph_memory(&mut self, ptr: u64, device: u32, graph: u64) {
        self.graph.insert(ptr, GraphMemory { graph, device, freed: false, alloc_node_gone: false });
    }

    /// Whether `ptr` is graph memory no free node frees yet.
    pub fn is_unfreed_graph_memory(&self, ptr: u64) -> bool {
        self.graph.get(&ptr).is_some_and(|m| !m.freed)
    }

    /// A free node now frees the graph memory at `ptr`.
    pub fn graph_memory_freed(&mut self, ptr: u64) {
        if let Some(m) = self.graph.get_mut(&ptr) {
            m.freed = true;
        }
    }

    /// `graph` was destroyed: the allocation nodes it held are gone.
    pub fn graph_destroyed(&mut self, graph: u64) {
        for m in self.graph.values_mut().filter(|m| m.graph == graph) {
            m.alloc_node_gone = true;
        }
    }

    /// `hipDeviceGraphMemTrim(device)` succeeded: the graph memory it released (freed by a
    /// free node, its allocation node's graph gone) is no longer HIP's; its ranges go too.
    pub fn graph_memory_trimmed(&mut self, device: u32) {
        let released: Vec<u64> = self.graph.iter().filter(|(_, m)| m.device == device && m.freed && m.alloc_node_gone).map(|(&p, _)| p).collect();
        for ptr in released {
            self.graph.remove(&ptr);
            self.ranges.remove(&ptr);
        }
    }

    /// `hipFree` of graph memory: the application's to release, no longer the graph pool's.
    pub fn graph_memory_released(&mut self, ptr: u64) {
        self.graph.remove(&ptr);
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn range(size: u64, device: u32) -> DeviceRange {
        DeviceRange { size, device, flags: 0, id: 1, kind: RangeKind::Device }
    }

    #[test]
    fn lookups_find_the_range_holding_an_address_and_nothing_past_it() {
        let mut book = MemoryBook::default();
        book.record(0x1000, range(0x100, 0));
        book.record(0x3000, range(0, 1)); // a pool's placeholder: one byte to lookups
        book.record(0, range(0x100, 0)); // never recorded
        assert_eq!(book.find(0x1000).map(|(b, _)| b), Some(0x1000));
        assert_eq!(book.find(0x10ff).map(|(b, _)| b), Some(0x1000));
        assert_eq!(book.find(0x1100), None);
        assert_eq!(book.find(0xfff), None);
        assert_eq!(book.find(0x3000).map(|(_, r)| r.device), Some(1));
        assert_eq!(book.find(0x3001), None);
        assert_eq!(book.find(0), None);
        assert!(book.overlaps(0x10f0, 0x100), "overlaps the end of the first range");
        assert!(book.overlaps(0xf00, 0x101), "reaches into its start");
        assert!(!book.overlaps(0xf00, 0x100), "ends where it begins");
        assert!(!book.overlaps(0x1100, 0x1000));
        assert!(book.forget(0x1000));
        assert!(!book.forget(0x1000));
        assert_eq!(book.find(0x1000), None);
        book.forget_device(1);
        assert_eq!(book.find(0x3000), None);
    }

    #[test]
    fn a_trim_releases_only_graph_memory_freed_whose_graph_is_gone() {
        let mut book = MemoryBook::default();
        for (ptr, graph) in [(0x1000, 7), (0x2000, 7), (0x3000, 8)] {
            book.record(ptr, range(0x100, 0));
            book.record_graph_memory(ptr, 0, graph);
        }
        book.graph_memory_freed(0x1000);
        book.graph_memory_freed(0x3000);
        assert!(!book.is_unfreed_graph_memory(0x1000));
        assert!(book.is_unfreed_graph_memory(0x2000));
        book.graph_destroyed(7);
        book.graph_memory_trimmed(1); // another device: nothing
        assert!(book.find(0x1000).is_some());
        book.graph_memory_trimmed(0);
        assert!(book.find(0x1000).is_none(), "freed, graph gone: released");
        assert!(book.find(0x2000).is_some(), "not freed by a free node");
        assert!(book.find(0x3000).is_some(), "its graph still holds the allocation node");
        book.graph_memory_released(0x2000);
        assert!(!book.is_unfreed_graph_memory(0x2000));
    }
}
