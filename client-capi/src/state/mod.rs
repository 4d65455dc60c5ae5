//! Client state shared by the API families, below them: what the client knows about devices
//! and about the memory it handed out. Families use this and the connection layer
//! ([`crate::remote`]), never each other.

pub mod allocations;
pub mod client_handles;
pub mod client_memory;
pub mod copy;
pub mod devices;
pub mod managed;
