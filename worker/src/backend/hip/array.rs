//! Arrays: the provided linear implementation (see [`crate::backend::ArrayBackend`]).

use super::HipBackend;
use crate::backend::ArrayBackend;

impl ArrayBackend for HipBackend {}
