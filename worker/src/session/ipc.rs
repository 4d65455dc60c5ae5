//! Ipc family handlers (see `proto_core::opcode`, family `Ipc`).

use super::Session;
use proto_core::opcode::IpcHandler;

impl IpcHandler for Session {}
