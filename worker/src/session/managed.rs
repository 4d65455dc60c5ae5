//! Managed family handlers (see `proto_core::opcode`, family `Managed`).

use super::Session;
use proto_core::opcode::ManagedHandler;

impl ManagedHandler for Session {}
