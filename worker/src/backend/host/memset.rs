//! Pitched memsets on host memory: the whole extent is resolved once, then filled row by row
//! as one stream operation.

use super::stream::StreamOp;
use super::HostBackend;
use crate::backend::{BackendError, MemsetBackend, MemsetPattern, PitchedFill, StreamHandle};

impl MemsetBackend for HostBackend {
    fn memset_pitched(&self, stream: Option<StreamHandle>, fill: PitchedFill, pattern: MemsetPattern) -> Result<(), BackendError> {
        let elem = pattern.elem_size();
        let span = fill.span(elem).ok_or_else(|| BackendError::InvalidValue("pitched memset extent overflows".into()))?;
        if span == 0 {
            return Ok(());
        }
        let region = self.resolve(fill.ptr, span)?;
        let row_bytes = (fill.width * elem) as usize;
        let devices = [region.device()];
        let op = StreamOp::HostFunc(Box::new(move || {
            region.with_bytes_mut(|bytes| {
                for offset in fill.row_offsets() {
                    let start = offset as usize;
                    pattern.fill(&mut bytes[start..start + row_bytes]);
                }
            })
        }));
        self.enqueue(stream, &devices, op)
    }
}
