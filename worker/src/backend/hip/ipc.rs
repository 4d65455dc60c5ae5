//! IPC of the hip backend: every session runs in the worker's one process, so an exported
//! allocation or event is shared as the exporter's own pointer or event (the trait's
//! defaults); the loaded runtime's `hipIpcOpenMemHandle` refuses a handle of its own process
//! (`hipErrorInvalidContext`). The session keeps the exporter's memory and event alive until
//! the last importer closes them.

use super::HipBackend;
use crate::backend::IpcBackend;

impl IpcBackend for HipBackend {}
