//! The exported HIP API, one module per family. Every function that is implemented lives
//! here; `unsupported` exports the rest of ROCm 7's `hipError_t` functions as
//! `hipErrorNotSupported` (generated from `symbols/hip_functions.txt` minus these).

pub mod api_names;
pub mod array;
pub mod capture;
pub mod context;
pub mod copy_streams;
pub mod device;
pub mod device_extra;
pub mod event;
pub mod graph;
pub mod graph_nodes;
pub mod ipc;
pub mod managed;
pub mod memory;
pub mod memset;
pub mod module;
pub mod pointer;
pub mod pool;
mod shareable_fd;
pub mod stream;
pub mod stream_extra;
pub mod texture;
pub mod unsupported;
pub mod vmm;

/// Registration of compiler-generated fat binaries belongs to the module family (it loads
/// through the same tables); kept reachable under its old path.
pub use module::register;
