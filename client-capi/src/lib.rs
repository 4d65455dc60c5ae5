//! hip-remote's drop-in `libamdhip64`: the ROCm 7 HIP runtime C ABI, forwarded to a
//! `hip-worker` over the network.
//!
//! A call flows: C entry point in [`api`] (boundary, argument checks, thread state) →
//! [`conn::Conn`], the driver (transport, clock, stripes, shared regions, landing of copy
//! data) → `client_core::ClientSession` (request ids, pending replies and landings, deferred
//! errors, batching, liveness timers; no I/O) → proto-core codec → transport → worker.
//!
//! Layers, each using only those below it: [`api`] families (device, memory, stream, event,
//! module; never each other) → [`state`] (what the client knows: devices, its allocations, the
//! copy path) and [`handle`] (C handles ↔ ids, out-parameters) → [`remote`] / [`conn`] (the
//! connection) → `client_core` → [`abi`] (the C types). Where the code still breaks this
//! order, and the steps that remove those arrows, are listed in `docs/CLIENT.md`.
#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]
#![allow(non_snake_case, non_camel_case_types, clippy::missing_safety_doc)]

#[macro_use]
mod boundary;
#[macro_use]
pub mod handle;
pub mod abi;
pub mod api;
pub mod callbacks;
pub mod config;
pub mod conn;
/// Fat binaries and offload bundles: the `hip-code-object` crate, re-exported under its old path.
pub use hip_code_object::fatbin;
pub mod remote;
pub mod state;
pub mod visible;
