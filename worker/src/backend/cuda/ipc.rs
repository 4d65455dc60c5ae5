//! IPC of the CUDA backend: every session runs in the worker's one process and CUDA context,
//! so an exported allocation or event is shared as the exporter's own pointer or event (the
//! trait's defaults); `cuIpcOpenMemHandle` cannot open a handle of its own process, and there
//! is no other process to open it in. The session keeps the exporter's memory and event
//! alive until the last importer closes them.

use super::CudaBackend;
use crate::backend::IpcBackend;

impl IpcBackend for CudaBackend {}
