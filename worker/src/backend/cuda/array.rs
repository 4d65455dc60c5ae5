//! Arrays: the provided linear implementation (see [`crate::backend::ArrayBackend`]).

use super::CudaBackend;
use crate::backend::ArrayBackend;

impl ArrayBackend for CudaBackend {}
