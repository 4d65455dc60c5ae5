//! Pitched memsets: `hipMemset2D*`, `hipMemset3D*` and `hipMemsetD2D{8,16,32}*`, one request
//! per call however many rows it covers.

use super::memory::MemsetWidth;

message! {
    /// Fills `depth` slices of `height` rows of `width` elements: row `y` of slice `z` starts
    /// at `dst + z * slice_pitch + y * pitch`. The bytes between a row's end and the next
    /// row's start are left as they are.
    pub struct MemsetPitched {
        /// Device address of the first row of the first slice.
        pub dst: u64,
        /// Bytes between the starts of two rows (at least a row's bytes).
        pub pitch: u64,
        /// Bytes between the starts of two slices (at least `pitch * height` when `depth > 1`).
        pub slice_pitch: u64,
        /// Value (low `elem` bytes used).
        pub value: u32,
        /// Element width.
        pub elem: MemsetWidth,
        /// Elements per row.
        pub width: u64,
        /// Rows per slice.
        pub height: u64,
        /// Slices.
        pub depth: u64,
        /// Stream (0 = null stream).
        pub stream: u64,
        /// Complete before responding.
        pub sync: bool,
    }
}
