//! Cursor reader and writer over caller-owned bytes (rustls `msgs/codec.rs` style).
//!
//! [`Reader`] never panics: every read is bounds-checked and names what was missing.
//! [`Writer`] writes into a `&mut [u8]`; when the buffer is too small it keeps counting so
//! the error can say how many bytes the whole encoding would need.

use crate::error::{DecodeError, EncodeError};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// A bounds-checked cursor over borrowed input.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    used: usize,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`, positioned at its start.
    pub const fn new(buf: &'a [u8]) -> Self {
        Self { buf, used: 0 }
    }

    /// Takes the next `n` bytes.
    pub fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        let end = self.used.checked_add(n).ok_or(DecodeError::Truncated { what })?;
        let bytes = self.buf.get(self.used..end).ok_or(DecodeError::Truncated { what })?;
        self.used = end;
        Ok(bytes)
    }

    /// Reads a fixed-layout little-endian value in place (zero copy).
    pub fn read_ref<T>(&mut self, what: &'static str) -> Result<&'a T, DecodeError>
    where
        T: FromBytes + KnownLayout + Immutable + Unaligned,
    {
        let bytes = self.take(core::mem::size_of::<T>(), what)?;
        T::ref_from_bytes(bytes).map_err(|_| DecodeError::Truncated { what })
    }

    /// Reads `count` fixed-size items as one borrowed slice, checking `count × size` against
    /// what is left without overflow.
    pub fn read_slice<T>(&mut self, count: usize, what: &'static str) -> Result<&'a [T], DecodeError>
    where
        T: FromBytes + Immutable + Unaligned,
    {
        let len = count.checked_mul(core::mem::size_of::<T>()).ok_or(DecodeError::Truncated { what })?;
        let bytes = self.take(len, what)?;
        <[T]>::ref_from_bytes(bytes).map_err(|_| DecodeError::Truncated { what })
    }

    /// Everything not read yet, consuming it.
    pub fn rest(&mut self) -> &'a [u8] {
        let rest = self.buf.get(self.used..).unwrap_or_default();
        self.used = self.buf.len();
        rest
    }

    /// Bytes not read yet.
    pub fn left(&self) -> usize {
        self.buf.len() - self.used
    }

    /// Bytes read so far.
    pub fn used(&self) -> usize {
        self.used
    }

    /// Fails with [`DecodeError::LengthMismatch`] unless everything was read.
    pub fn expect_empty(&self, what: &'static str) -> Result<(), DecodeError> {
        if self.left() == 0 {
            Ok(())
        } else {
            Err(DecodeError::LengthMismatch { what })
        }
    }
}

/// A cursor writing into a caller's buffer.
#[derive(Debug)]
pub struct Writer<'w> {
    buf: &'w mut [u8],
    /// Bytes the encoding needs so far; may exceed `buf.len()` (then nothing more is written).
    needed: usize,
}

impl<'w> Writer<'w> {
    /// A writer at the start of `buf`.
    pub fn new(buf: &'w mut [u8]) -> Self {
        Self { buf, needed: 0 }
    }

    /// Appends `bytes`, or only counts them once the buffer has overflowed.
    pub fn put(&mut self, bytes: &[u8]) {
        let start = self.needed;
        self.needed = self.needed.saturating_add(bytes.len());
        if let Some(dst) = self.buf.get_mut(start..self.needed) {
            dst.copy_from_slice(bytes);
        }
    }

    /// Appends a fixed-layout value.
    pub fn put_value<T: IntoBytes + Immutable>(&mut self, value: &T) {
        self.put(value.as_bytes());
    }

    /// Bytes written (or needed) so far.
    pub fn len(&self) -> usize {
        self.needed
    }

    /// Whether nothing was written yet.
    pub fn is_empty(&self) -> bool {
        self.needed == 0
    }

    /// Mutable access to already written bytes, for patching a length placeholder.
    pub fn written_mut(&mut self, range: core::ops::Range<usize>) -> Option<&mut [u8]> {
        self.buf.get_mut(range)
    }

    /// The number of bytes written, or [`EncodeError::BufferTooSmall`] with what was needed.
    pub fn finish(self) -> Result<usize, EncodeError> {
        if self.needed <= self.buf.len() {
            Ok(self.needed)
        } else {
            Err(EncodeError::BufferTooSmall { required: self.needed })
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use zerocopy::byteorder::little_endian::U32;

    #[test]
    fn reader_names_what_was_missing() {
        let mut r = Reader::new(&[1, 2, 3]);
        assert_eq!(r.take(2, "a").unwrap(), &[1, 2]);
        assert_eq!(r.take(2, "b"), Err(DecodeError::Truncated { what: "b" }));
        assert_eq!(r.left(), 1);
        assert!(r.expect_empty("x").is_err());
    }

    #[test]
    fn reader_slice_count_overflow_is_an_error() {
        let mut r = Reader::new(&[0; 8]);
        assert!(r.read_slice::<U32>(usize::MAX, "items").is_err());
        assert_eq!(r.read_slice::<U32>(2, "items").unwrap().len(), 2);
    }

    #[test]
    fn writer_reports_required_size() {
        let mut buf = [0xa5u8; 3];
        let mut w = Writer::new(&mut buf);
        w.put(&[1, 2]);
        w.put(&[3, 4, 5]);
        assert_eq!(w.finish(), Err(EncodeError::BufferTooSmall { required: 5 }));
        assert_eq!(buf, [1, 2, 0xa5]);
    }
}
