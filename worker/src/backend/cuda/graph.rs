//! Graphs: the recorded node list, replayed on the launch stream (the trait's defaults).

use super::CudaBackend;
use crate::backend::GraphBackend;

impl GraphBackend for CudaBackend {}
