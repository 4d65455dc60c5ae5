//! Vmm family handlers (see `proto_core::opcode`, family `Vmm`).

use super::Session;
use proto_core::opcode::VmmHandler;

impl VmmHandler for Session {}
