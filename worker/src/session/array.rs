//! Array family handlers (see `proto_core::opcode`, family `Array`).

use super::Session;
use proto_core::opcode::ArrayHandler;

impl ArrayHandler for Session {}
