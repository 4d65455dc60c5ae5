//! Pool family handlers (see `proto_core::opcode`, family `Pool`).

use super::Session;
use proto_core::opcode::PoolHandler;

impl PoolHandler for Session {}
