//! Pitched memsets (`MemsetPitched`): the extent is checked against the session's allocation
//! table as a whole, then handed to the backend as one operation.

use super::{Failure, Session};
use crate::backend::{MemsetPattern, PitchedFill};
use proto_core::wire::{self, MemsetWidth};
use proto_core::Status;

impl Session {
    pub(super) fn memset_pitched_request(&mut self, req: wire::MemsetPitched) -> Result<wire::Empty, Failure> {
        let pattern = match req.elem {
            MemsetWidth::Byte => MemsetPattern::U8(req.value as u8),
            MemsetWidth::Half => MemsetPattern::U16(req.value as u16),
            MemsetWidth::Word => MemsetPattern::U32(req.value),
        };
        let fill = PitchedFill {
            ptr: crate::backend::DevicePtr(req.dst),
            pitch: req.pitch,
            slice_pitch: req.slice_pitch,
            width: req.width,
            height: req.height,
            depth: req.depth,
        };
        let invalid = |why: String| Failure::new(Status::INVALID_VALUE, why);
        let span = fill.span(pattern.elem_size()).ok_or_else(|| invalid("pitched memset extent overflows".into()))?;
        if span == 0 {
            return Ok(wire::Empty {});
        }
        let row_bytes = req.width * pattern.elem_size();
        // ROCm refuses a row wider than the pitch even for a single row (and so a zero pitch).
        if row_bytes > req.pitch {
            return Err(invalid(format!("rows of {row_bytes} bytes are wider than the pitch {}", req.pitch)));
        }
        if req.depth > 1 && req.pitch.checked_mul(req.height).is_none_or(|slice| slice > req.slice_pitch) {
            return Err(invalid(format!("slices of {} rows at pitch {} overlap at slice pitch {}", req.height, req.pitch, req.slice_pitch)));
        }
        self.allocations.resolve(req.dst, span, "hipMemset2D/3D destination")?;
        if !req.sync && self.capture_memset(req.stream, fill, pattern)? {
            return Ok(wire::Empty {});
        }
        let stream = self.stream(req.stream, self.device_of(req.dst))?;
        self.backend.memset_pitched(stream, fill, pattern)?;
        if req.sync {
            self.sync_stream(stream)?;
        }
        Ok(wire::Empty {})
    }
}
