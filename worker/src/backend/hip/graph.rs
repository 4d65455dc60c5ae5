//! Graphs: the recorded node list, replayed on the launch stream (the trait's defaults).

use super::HipBackend;
use crate::backend::GraphBackend;

impl GraphBackend for HipBackend {}
