//! Pitched memsets (`hipMemset2D`, `hipMemset3D`, `hipMemsetD2D*`): one backend operation per
//! request, whatever the number of rows.

use super::{BackendError, DevicePtr, MemsetPattern, StreamHandle};

/// A pitched block to fill: `depth` slices of `height` rows of `width` elements; row `y` of
/// slice `z` starts at `ptr + z * slice_pitch + y * pitch`. The session checked that rows do
/// not overlap and that the whole extent lies inside one allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PitchedFill {
    /// First byte of the first row of the first slice.
    pub ptr: DevicePtr,
    /// Bytes between row starts.
    pub pitch: u64,
    /// Bytes between slice starts.
    pub slice_pitch: u64,
    /// Elements per row.
    pub width: u64,
    /// Rows per slice.
    pub height: u64,
    /// Slices.
    pub depth: u64,
}

impl PitchedFill {
    /// Bytes from the first row's start to the last row's end (0 when any dimension is 0);
    /// `None` on overflow.
    pub fn span(&self, elem_size: u64) -> Option<u64> {
        if self.width == 0 || self.height == 0 || self.depth == 0 {
            return Some(0);
        }
        let last_slice = self.slice_pitch.checked_mul(self.depth - 1)?;
        let last_row = self.pitch.checked_mul(self.height - 1)?;
        last_slice.checked_add(last_row)?.checked_add(self.width.checked_mul(elem_size)?)
    }

    /// Offsets from `ptr` of every row start, slice by slice.
    pub fn row_offsets(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.depth).flat_map(move |z| (0..self.height).map(move |y| z * self.slice_pitch + y * self.pitch))
    }

    /// Offsets from `ptr` of every slice start.
    pub fn slice_offsets(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.depth).map(move |z| z * self.slice_pitch)
    }
}

/// The pitched memset family.
pub trait MemsetBackend {
    /// Queues filling every row of `fill` with `pattern`, leaving the bytes between rows and
    /// slices untouched.
    fn memset_pitched(&self, stream: Option<StreamHandle>, fill: PitchedFill, pattern: MemsetPattern) -> Result<(), BackendError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn span_and_rows() {
        let fill = PitchedFill { ptr: DevicePtr(0x1000), pitch: 16, slice_pitch: 64, width: 3, height: 2, depth: 2 };
        assert_eq!(fill.span(4), Some(64 + 16 + 12));
        assert_eq!(fill.row_offsets().collect::<Vec<_>>(), [0, 16, 64, 80]);
        assert_eq!(fill.slice_offsets().collect::<Vec<_>>(), [0, 64]);
        assert_eq!(PitchedFill { depth: 0, ..fill }.span(4), Some(0));
        assert_eq!(PitchedFill { slice_pitch: u64::MAX, ..fill }.span(1), None);
    }
}
