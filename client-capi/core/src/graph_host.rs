//! Graph memcpy nodes that read or write the application's host memory: each is a
//! device-to-device copy through a staging buffer of its own, bound to its graph, and to every
//! executable graph instantiated from it, whose launches move the host bytes (the driver's
//! owner does the moving; `client-capi`'s `state::graph_host`).

use std::collections::HashMap;
use std::sync::Arc;

/// One node's host binding: `len` bytes between `host` and the staging buffer `staging`.
#[derive(Debug, PartialEq, Eq)]
pub struct HostCopy {
    /// The application's memory the node reads or fills (an address this crate never
    /// touches).
    pub host: usize,
    /// The device buffer the node's device-to-device copy uses in its place.
    pub staging: u64,
    /// Bytes.
    pub len: usize,
    /// Host to device (moved before each launch), else device to host (after it).
    pub to_device: bool,
}

/// The host bindings of a session's graphs and executable graphs. A binding is shared by
/// every graph and executable graph that holds it; its staging buffer is freed when the last
/// one goes (the [`Arc`] the caller gets back with [`Arc::into_inner`]).
#[derive(Debug, Default)]
pub struct HostCopies {
    graphs: HashMap<u64, Vec<Arc<HostCopy>>>,
    execs: HashMap<u64, Vec<Arc<HostCopy>>>,
}

impl HostCopies {
    /// How many bindings `graph` holds.
    pub fn count(&self, graph: u64) -> usize {
        self.graphs.get(&graph).map_or(0, Vec::len)
    }

    /// Binds `copy` to `graph`.
    pub fn bind(&mut self, graph: u64, copy: HostCopy) {
        self.graphs.entry(graph).or_default().push(Arc::new(copy));
    }

    /// `graph` was cloned into `clone`: the clone's nodes copy through the same buffers.
    pub fn graph_cloned(&mut self, graph: u64, clone: u64) {
        if let Some(copies) = self.graphs.get(&graph).cloned() {
            self.graphs.insert(clone, copies);
        }
    }

    /// `exec` was instantiated from `graph`: its launches move the graph's host bytes.
    pub fn exec_instantiated(&mut self, graph: u64, exec: u64) {
        if let Some(copies) = self.graphs.get(&graph).cloned() {
            self.execs.insert(exec, copies);
        }
    }

    /// `graph` is gone: its bindings (those no one else holds come out of their `Arc`).
    pub fn graph_destroyed(&mut self, graph: u64) -> Vec<Arc<HostCopy>> {
        self.graphs.remove(&graph).unwrap_or_default()
    }

    /// `exec` is gone: its bindings.
    pub fn exec_destroyed(&mut self, exec: u64) -> Vec<Arc<HostCopy>> {
        self.execs.remove(&exec).unwrap_or_default()
    }

    /// The bindings of `exec`.
    pub fn exec_copies(&self, exec: u64) -> Vec<Arc<HostCopy>> {
        self.execs.get(&exec).cloned().unwrap_or_default()
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn a_binding_is_released_by_the_last_graph_or_exec_holding_it() {
        let mut copies = HostCopies::default();
        copies.bind(1, HostCopy { host: 0x10, staging: 0x1000, len: 8, to_device: true });
        copies.graph_cloned(1, 2);
        copies.exec_instantiated(2, 9);
        copies.graph_cloned(5, 6); // no such graph: nothing
        assert_eq!((copies.count(1), copies.count(2), copies.count(6)), (1, 1, 0));
        assert_eq!(copies.exec_copies(9).len(), 1);
        let released = |v: Vec<Arc<HostCopy>>| v.into_iter().filter_map(Arc::into_inner).map(|c| c.staging).collect::<Vec<_>>();
        assert!(released(copies.graph_destroyed(1)).is_empty(), "the clone and the exec hold it");
        assert!(released(copies.graph_destroyed(2)).is_empty(), "the exec holds it");
        assert_eq!(released(copies.exec_destroyed(9)), vec![0x1000]);
        assert!(copies.exec_destroyed(9).is_empty());
    }
}
