//! Graphs: the recorded node list, replayed on the launch stream (the trait's defaults).

use super::HostBackend;
use crate::backend::GraphBackend;

impl GraphBackend for HostBackend {}
