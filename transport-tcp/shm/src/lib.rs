//! hip-remote's same-host transport (Linux): `transport-core`'s
//! [`FrameSink`](transport_core::FrameSink) and [`FrameSource`](transport_core::FrameSource)
//! over two single-producer single-consumer byte rings in a sealed memfd that worker and
//! client both map ([`ring`]). A Unix socket bootstraps the connection (the worker passes the
//! memfd with `SCM_RIGHTS`) and then carries only one-byte doorbells for a peer that sleeps,
//! and the end of the connection: a dead peer's socket closes, so it is noticed at once, even
//! by a blocked reader ([`conn`]). Frames are the protocol's own, written into the ring
//! whole; a frame larger than the ring streams through it in pieces.
//!
//! [`sys`] holds the system calls (the crate's only `unsafe`), also used by the worker and
//! client to share further memory (regions passed with [`sys::send_fds`]).
#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]

#[cfg(target_os = "linux")]
pub mod conn;
#[cfg(target_os = "linux")]
pub mod fds;
#[cfg(target_os = "linux")]
pub mod ring;
#[cfg(target_os = "linux")]
pub mod sys;

#[cfg(target_os = "linux")]
pub use conn::{
    connect, connect_with_fds, worker_from_parts, ShmAccepted, ShmConfig, ShmConnector, ShmHangup, ShmListener, ShmParts, ShmSink, ShmSource,
};
#[cfg(target_os = "linux")]
pub use fds::FdChannel;

/// What identifies this machine for [`proto_core::auth::same_host_proof`]: its machine id
/// (`/etc/machine-id`, else `/var/lib/dbus/machine-id`; may be shared by containers of one
/// image) and the running kernel's boot id (shared by every container on the host, new at
/// each boot). `None` where the boot id cannot be read (then nobody moves automatically).
#[cfg(target_os = "linux")]
pub fn machine_identity() -> Option<Vec<u8>> {
    let boot = std::fs::read("/proc/sys/kernel/random/boot_id").ok()?;
    let machine = std::fs::read("/etc/machine-id").or_else(|_| std::fs::read("/var/lib/dbus/machine-id")).unwrap_or_default();
    let mut identity = machine.trim_ascii().to_vec();
    identity.push(b'/');
    identity.extend_from_slice(boot.trim_ascii());
    Some(identity)
}
