//! Pitched memsets on CUDA: `cuMemsetD2D{8,16,32}Async`, one call for the whole extent when
//! its slices are contiguous rows, else one per slice.

use super::{result, CudaBackend};
use crate::backend::{BackendError, MemsetBackend, MemsetPattern, PitchedFill, StreamHandle};

fn size(v: u64) -> Result<usize, BackendError> {
    usize::try_from(v).map_err(|_| BackendError::InvalidValue(format!("{v} exceeds the address space")))
}

impl MemsetBackend for CudaBackend {
    fn memset_pitched(&self, stream: Option<StreamHandle>, fill: PitchedFill, pattern: MemsetPattern) -> Result<(), BackendError> {
        if fill.span(pattern.elem_size()) == Some(0) {
            return Ok(());
        }
        let dev = self.device_of(fill.ptr)?;
        let s = self.work_stream(stream, dev)?;
        // Slices laid end to end are one 2D fill of all their rows.
        let (height, slices) = if fill.depth == 1 || fill.slice_pitch == fill.pitch * fill.height {
            (fill.height * fill.depth, vec![0])
        } else {
            (fill.height, fill.slice_offsets().collect())
        };
        let (pitch, width, height) = (size(fill.pitch)?, size(fill.width)?, size(height)?);
        for offset in slices {
            // The session checked that every row lies inside one live allocation and that rows
            // do not overlap; `s` is a stream of the allocation's context.
            result::mem::set_2d_async(fill.ptr.0 + offset, pitch, pattern, width, height, s)?;
        }
        Ok(())
    }
}
