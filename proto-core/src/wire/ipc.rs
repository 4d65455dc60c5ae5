//! Inter-process sharing between sessions of one worker: memory and event handles.
//!
//! A handle is named by a 128-bit token the worker draws at random when the memory or event is
//! exported (`token0`, `token1`); only sessions of the exporter's tenant can open it.

message! {
    /// `hipIpcGetMemHandle`: export the allocation containing `ptr`.
    pub struct IpcGetMemHandle {
        /// Any address inside one of the session's allocations.
        pub ptr: u64,
    }
}

message! {
    /// The exported allocation: what the client packs into its 64-byte handle.
    pub struct IpcMemExported {
        /// First half of the token.
        pub token0: u64,
        /// Second half of the token.
        pub token1: u64,
        /// Bytes of the whole allocation.
        pub size: u64,
        /// Offset of `ptr` in the allocation (the importer's pointer lands there).
        pub offset: u64,
        /// Device the allocation lives on.
        pub device: u32,
    }
}

message! {
    /// `hipIpcOpenMemHandle`: map another session's exported allocation into this one.
    pub struct IpcOpenMemHandle {
        /// First half of the token.
        pub token0: u64,
        /// Second half of the token.
        pub token1: u64,
        /// Offset into the allocation of the pointer to answer (from the handle).
        pub offset: u64,
        /// The client's current device.
        pub device: u32,
    }
}

message! {
    /// The opened allocation in this session.
    pub struct IpcMemOpened {
        /// Base address of the mapping (what `hipIpcCloseMemHandle` names).
        pub base: u64,
        /// Bytes of the allocation.
        pub size: u64,
        /// Device the memory is attributed to.
        pub device: u32,
    }
}

message! {
    /// `hipIpcCloseMemHandle`: unmap an opened allocation.
    pub struct IpcMemRef {
        /// The base address `IpcOpenMemHandle` answered.
        pub base: u64,
    }
}

message! {
    /// An exported event: what the client packs into its 64-byte handle.
    pub struct IpcEventExported {
        /// First half of the token.
        pub token0: u64,
        /// Second half of the token.
        pub token1: u64,
    }
}

message! {
    /// `hipIpcOpenEventHandle`: open another session's exported event in this one.
    pub struct IpcOpenEventHandle {
        /// First half of the token.
        pub token0: u64,
        /// Second half of the token.
        pub token1: u64,
    }
}
