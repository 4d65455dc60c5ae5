//! Pitched memsets on HIP: `hipMemset2DAsync` for bytes, `hipMemsetD2D{16,32}Async` for wider
//! elements (row by row where the runtime predates them), one call per slice.

use super::error::Check;
use super::HipBackend;
use crate::backend::{BackendError, MemsetBackend, MemsetPattern, PitchedFill, StreamHandle};
use std::ffi::{c_int, c_void};

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
        for offset in fill.slice_offsets() {
            let dst = (fill.ptr.0 + offset) as *mut c_void;
            // The session checked that every row lies inside one live allocation and that
            // rows do not overlap; `s` belongs to the entered device.
            let status = match pattern {
                // SAFETY: see above.
                MemsetPattern::U8(v) => unsafe { (self.api.hipMemset2DAsync)(dst, pitch, c_int::from(v), width, height, s) },
                MemsetPattern::U16(v) => match self.api.hipMemsetD2D16Async {
                    // SAFETY: see above.
                    Some(fill_2d) => unsafe { fill_2d(dst, pitch, v, width, height, s) },
                    None => {
                        let fill_row = self.api.hipMemsetD16Async;
                        // SAFETY: each row is `width` elements inside the checked extent.
                        return self.rows_one_by_one(fill, offset, |row| unsafe { fill_row(row, v, width, s) });
                    }
                },
                MemsetPattern::U32(v) => match self.api.hipMemsetD2D32Async {
                    // SAFETY: see above.
                    Some(fill_2d) => unsafe { fill_2d(dst, pitch, v, width, height, s) },
                    None => {
                        let fill_row = self.api.hipMemsetD32Async;
                        // SAFETY: each row is `width` elements inside the checked extent.
                        return self.rows_one_by_one(fill, offset, |row| unsafe { fill_row(row, v as c_int, width, s) });
                    }
                },
            };
            status.check("hipMemset2DAsync")?;
        }
        Ok(())
    }
}

impl HipBackend {
    /// Fills the rows of every slice from `first_slice` on with `fill_row` (a runtime without
    /// the 2D forms for wide elements).
    fn rows_one_by_one(&self, fill: PitchedFill, first_slice: u64, fill_row: impl Fn(*mut c_void) -> c_int) -> Result<(), BackendError> {
        for offset in fill.row_offsets().filter(|&o| o >= first_slice) {
            fill_row((fill.ptr.0 + offset) as *mut c_void).check("hipMemsetD16/D32Async")?;
        }
        Ok(())
    }
}
