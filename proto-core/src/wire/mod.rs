//! Every message, by family. Each struct is declared with [`message!`], which derives its
//! mirrored `decode`/`encode` from the field list; field order is wire order.
//!
//! Handles (`stream`, `event`, `module`, `function`) are opaque `u64`s chosen by the worker
//! and valid only within the session that created them; `0` as a stream means the null
//! stream. Device pointers are `u64` addresses in the worker's address space.

pub mod array;
pub mod blas;
pub mod capture;
pub mod device;
pub mod device_attr;
pub mod event;
pub mod graph;
pub mod graph_exec;
pub mod graph_nodes;
pub mod ipc;
pub mod managed;
pub mod memory;
pub mod memset;
pub mod module;
pub mod module_ext;
pub mod pool;
pub mod rtc;
pub mod session;
pub mod shared_host;
pub mod stream;
pub mod stream_ops;
pub mod stripes;
pub mod transfer;
pub mod vmm;

pub use array::*;
pub use blas::*;
pub use capture::*;
pub use device::*;
pub use device_attr::*;
pub use event::*;
pub use graph::*;
pub use graph_exec::*;
pub use graph_nodes::*;
pub use ipc::*;
pub use managed::*;
pub use memory::*;
pub use memset::*;
pub use module::*;
pub use module_ext::*;
pub use pool::*;
pub use rtc::*;
pub use session::*;
pub use shared_host::*;
pub use stream::*;
pub use stream_ops::*;
pub use stripes::*;
pub use transfer::*;
pub use vmm::*;
