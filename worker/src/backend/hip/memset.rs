//! Pitched memsets on HIP: `hipMemset2DAsync` for bytes, `hipMemsetD2D{16,32}Async` for wider
//! elements (row by row where the runtime predates them), one call per slice.

use super::api::Stream;
use super::HipBackend;
use crate::backend::{BackendError, MemsetBackend, MemsetPattern, PitchedFill, StreamHandle};

fn size(v: u64) -> Result<usize, BackendError> {
    usize::try_from(v).map_err(|_| BackendError::InvalidValue(format!("{v} exceeds the address space")))
}

impl MemsetBackend for HipBackend {
    fn memset_pitched(&self, stream: Option<StreamHandle>, fill: PitchedFill, pattern: MemsetPattern) -> Result<(), BackendError> {
        if fill.span(pattern.elem_size()) == Some(0) {
            return Ok(());
        }
        let dev = match stream {
            Some(_) => 0, // the stream's own device is entered
            None => self.device_of(fill.ptr)?,
        };
        let (s, _) = self.work_stream(stream, dev)?;
        let (pitch, width, height) = (size(fill.pitch)?, size(fill.width)?, size(fill.height)?);
        let api = &self.api;
        for offset in fill.slice_offsets() {
            let dst = fill.ptr.0 + offset;
            // The session checked that every row lies inside one live allocation and that
            // rows do not overlap; `s` belongs to the entered device.
            let filled = match pattern {
                MemsetPattern::U8(v) => Some(api.memset_2d_async(dst, pitch, v, width, height, s)),
                MemsetPattern::U16(v) => api.memset_d2d16_async(dst, pitch, v, width, height, s),
                MemsetPattern::U32(v) => api.memset_d2d32_async(dst, pitch, v, width, height, s),
            };
            match filled {
                Some(result) => result?,
                // A runtime without the 2D forms for wide elements: row by row.
                None => return self.rows_one_by_one(fill, offset, pattern, width, s),
            }
        }
        Ok(())
    }
}

impl HipBackend {
    /// Fills the rows of every slice from `first_slice` on, one call a row (a runtime without
    /// the 2D forms for wide elements).
    fn rows_one_by_one(&self, fill: PitchedFill, first_slice: u64, pattern: MemsetPattern, width: usize, s: Stream) -> Result<(), BackendError> {
        for offset in fill.row_offsets().filter(|&o| o >= first_slice) {
            let row = fill.ptr.0 + offset;
            match pattern {
                MemsetPattern::U8(v) => self.api.memset_2d_async(row, width, v, width, 1, s)?,
                MemsetPattern::U16(v) => self.api.memset_d16_async(row, v, width, s)?,
                MemsetPattern::U32(v) => self.api.memset_d32_async(row, v, width, s)?,
            }
        }
        Ok(())
    }
}
