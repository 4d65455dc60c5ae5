//! The tables API families keep in each worker's session (`client_core::published`'s
//! [`FamilyTable`](client_core::published::FamilyTable)s): one slot each, numbered here so no
//! two families share one. A family reaches its table through the session of the worker its
//! key belongs to (a handle's issuer, a device's worker), without the connection's lock.

/// The slot of each family's table.
#[derive(Debug, Clone, Copy)]
pub enum Family {
    /// `api::texture`: texture objects by handle.
    Textures,
    /// `api::graph`: kernel nodes' `func` and argument storage, by node.
    KernelNodes,
    /// `api::graph_nodes`: batch memory operation nodes' parameter arrays, by node.
    BatchNodeArrays,
    /// `api::context`: each device's primary context reference count.
    Contexts,
    /// `api::pointer`: `HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS` by buffer id.
    SyncMemops,
    /// `api::ipc`: opened memory whose recorded range starts inside its mapping.
    IpcOpenedInside,
    /// `api::array`: arrays by handle, mipmapped arrays by the address handed out.
    Arrays,
    /// `callbacks`: the application's callbacks the worker may ask for, by token.
    Callbacks,
    /// `api::module`: modules (and libraries) and functions (and kernels), by this library's
    /// handle, which names the worker.
    Modules,
    /// `api::module::register`: where each registered fat binary is loaded on the worker's
    /// devices, and its kernels' and variables' resolutions there.
    FatBinaryLoads,
    /// `api::module::link`: link states (`hipLinkCreate`), by handle.
    LinkStates,
}

impl Family {
    /// Its slot in a session's tables.
    pub const fn slot(self) -> usize {
        self as usize
    }
}
