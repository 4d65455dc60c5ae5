//! Client state shared by the API families, below them: what the client knows about devices
//! and about the memory it handed out. Families use this and the connection layer
//! ([`crate::remote`]), never each other. The connection's own state (request ids, handles and
//! memory placed without a round trip) is `client_core`'s [`ClientSession`](client_core::ClientSession).

pub mod allocations;
pub mod capture;
pub mod copy;
pub mod devices;
pub mod families;
pub mod graph_host;
pub mod managed;
pub mod streams;
pub mod sync;
