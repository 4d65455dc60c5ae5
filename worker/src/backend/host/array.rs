//! Arrays: the provided linear implementation (see [`crate::backend::ArrayBackend`]).

use super::HostBackend;
use crate::backend::ArrayBackend;

impl ArrayBackend for HostBackend {}
