//! Field codecs: how each kind of message field goes on the wire.
//!
//! A message (see [`message!`]) is a list of fields; each field type implements
//! [`WireField`], so a message's `decode` reads as its field list and `encode` is the same
//! list in the same order. Scalars are little-endian via zerocopy's byteorder types;
//! variable-length fields carry a length prefix that is checked against its limit and
//! against what is left before anything is borrowed.

use crate::codec::{Reader, Writer};
use crate::error::{DecodeError, EncodeError};
use crate::limits;
use core::fmt;
use zerocopy::byteorder::little_endian::{F32, I32, I64, U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// Decoding state of one message: its control part and the frame's bulk section.
#[derive(Debug)]
pub struct DecodeCx<'a> {
    /// The control part.
    pub r: Reader<'a>,
    bulk: Option<&'a [u8]>,
}

impl<'a> DecodeCx<'a> {
    /// Context over a message's control part and bulk section.
    pub fn new(control: &'a [u8], bulk: &'a [u8]) -> Self {
        Self { r: Reader::new(control), bulk: Some(bulk) }
    }

    /// Checks that the control part was consumed and that bulk data was expected.
    pub fn finish(&self) -> Result<(), DecodeError> {
        self.r.expect_empty("message (trailing bytes)")?;
        match self.bulk {
            Some(b) if !b.is_empty() => Err(DecodeError::LengthMismatch { what: "unexpected bulk data" }),
            _ => Ok(()),
        }
    }
}

/// Encoding state of one message: the control part's writer and the bulk data to send after it.
#[derive(Debug)]
pub struct EncodeCx<'w, 'a> {
    /// The control part's writer.
    pub w: Writer<'w>,
    /// Bulk data registered by a [`Bulk`] field.
    pub bulk: Option<&'a [u8]>,
}

impl<'w, 'a> EncodeCx<'w, 'a> {
    /// Context writing the control part into `buf`.
    pub fn new(buf: &'w mut [u8]) -> Self {
        Self { w: Writer::new(buf), bulk: None }
    }
}

/// One field's wire form.
pub trait WireField<'a>: Sized {
    /// Most bytes this field occupies in a control part.
    const MAX_LEN: usize;
    /// Whether the field is the frame's bulk section.
    const IS_BULK: bool = false;
    /// Reads the field; `what` names it in errors.
    fn decode(cx: &mut DecodeCx<'a>, what: &'static str) -> Result<Self, DecodeError>;
    /// Writes the field.
    fn encode(&self, cx: &mut EncodeCx<'_, 'a>, what: &'static str) -> Result<(), EncodeError>;
}

/// The larger of two lengths, in a `const` (a tagged union's widest variant).
pub const fn max_len(a: usize, b: usize) -> usize {
    if a > b {
        a
    } else {
        b
    }
}

macro_rules! le_scalar {
    ($($native:ty => $le:ty),* $(,)?) => {$(
        impl<'a> WireField<'a> for $native {
            const MAX_LEN: usize = core::mem::size_of::<$le>();
            fn decode(cx: &mut DecodeCx<'a>, what: &'static str) -> Result<Self, DecodeError> {
                Ok(cx.r.read_ref::<$le>(what)?.get())
            }
            fn encode(&self, cx: &mut EncodeCx<'_, 'a>, _: &'static str) -> Result<(), EncodeError> {
                cx.w.put_value(&<$le>::new(*self));
                Ok(())
            }
        }
    )*};
}

le_scalar!(u16 => U16, u32 => U32, u64 => U64, i32 => I32, i64 => I64, f32 => F32);

impl<'a> WireField<'a> for u8 {
    const MAX_LEN: usize = 1;
    fn decode(cx: &mut DecodeCx<'a>, what: &'static str) -> Result<Self, DecodeError> {
        Ok(cx.r.take(1, what)?[0])
    }
    fn encode(&self, cx: &mut EncodeCx<'_, 'a>, _: &'static str) -> Result<(), EncodeError> {
        cx.w.put(&[*self]);
        Ok(())
    }
}

/// Booleans are one byte, 0 or 1; anything else is [`DecodeError::InvalidValue`].
impl<'a> WireField<'a> for bool {
    const MAX_LEN: usize = 1;
    fn decode(cx: &mut DecodeCx<'a>, what: &'static str) -> Result<Self, DecodeError> {
        match cx.r.take(1, what)?[0] {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(DecodeError::InvalidValue { what }),
        }
    }
    fn encode(&self, cx: &mut EncodeCx<'_, 'a>, _: &'static str) -> Result<(), EncodeError> {
        cx.w.put(&[u8::from(*self)]);
        Ok(())
    }
}

/// Fixed arrays of scalars (grid/block dimensions, UUIDs) are their items back to back.
impl<'a, T: WireField<'a> + Copy + Default, const N: usize> WireField<'a> for [T; N] {
    const MAX_LEN: usize = T::MAX_LEN * N;
    fn decode(cx: &mut DecodeCx<'a>, what: &'static str) -> Result<Self, DecodeError> {
        let mut out = [T::default(); N];
        for item in &mut out {
            *item = T::decode(cx, what)?;
        }
        Ok(out)
    }
    fn encode(&self, cx: &mut EncodeCx<'_, 'a>, what: &'static str) -> Result<(), EncodeError> {
        self.iter().try_for_each(|item| item.encode(cx, what))
    }
}

fn read_len(cx: &mut DecodeCx<'_>, max: usize, what: &'static str) -> Result<usize, DecodeError> {
    let len = cx.r.read_ref::<U32>(what)?.get();
    if len as usize > max {
        return Err(DecodeError::TooLarge { what, len: len.into(), max: max as u64 });
    }
    Ok(len as usize)
}

fn write_len(cx: &mut EncodeCx<'_, '_>, len: usize, max: usize, what: &'static str) -> Result<(), EncodeError> {
    if len > max {
        return Err(EncodeError::InvalidValue { what });
    }
    cx.w.put_value(&U32::new(len as u32));
    Ok(())
}

/// Checks the string rules shared by every text field: UTF-8 and no NUL (C callers get these
/// strings NUL-terminated, so an interior NUL would silently truncate them).
fn check_text<'a>(bytes: &'a [u8], what: &'static str) -> Result<&'a str, DecodeError> {
    let s = core::str::from_utf8(bytes).map_err(|_| DecodeError::InvalidValue { what })?;
    if s.contains('\0') {
        return Err(DecodeError::InvalidValue { what });
    }
    Ok(s)
}

/// A length-prefixed (u32) byte string of at most `MAX` bytes, borrowed from the input.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Bytes<'a, const MAX: usize>(pub &'a [u8]);

/// An opaque blob (ping payloads, authentication tokens).
pub type Blob<'a> = Bytes<'a, { limits::MAX_BLOB_LEN }>;
/// A packed kernel-argument buffer.
pub type ArgBlob<'a> = Bytes<'a, { limits::MAX_KERNEL_ARGS_LEN }>;

impl<'a, const MAX: usize> From<&'a [u8]> for Bytes<'a, MAX> {
    fn from(b: &'a [u8]) -> Self {
        Self(b)
    }
}

impl<const MAX: usize> fmt::Debug for Bytes<'_, MAX> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bytes", self.0.len())?;
        if self.0.len() <= 16 {
            write!(f, " {:02x?}", self.0)?;
        }
        Ok(())
    }
}

impl<'a, const MAX: usize> WireField<'a> for Bytes<'a, MAX> {
    const MAX_LEN: usize = 4 + MAX;
    fn decode(cx: &mut DecodeCx<'a>, what: &'static str) -> Result<Self, DecodeError> {
        let len = read_len(cx, MAX, what)?;
        Ok(Self(cx.r.take(len, what)?))
    }
    fn encode(&self, cx: &mut EncodeCx<'_, 'a>, what: &'static str) -> Result<(), EncodeError> {
        write_len(cx, self.0.len(), MAX, what)?;
        cx.w.put(self.0);
        Ok(())
    }
}

/// A length-prefixed (u32) UTF-8 string without NUL, of at most `MAX` bytes.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Str<'a, const MAX: usize>(pub &'a str);

/// A symbol, file or client name.
pub type Name<'a> = Str<'a, { limits::MAX_NAME_LEN }>;
/// Source text or a compile log.
pub type Text<'a> = Str<'a, { limits::MAX_TEXT_LEN }>;

impl<'a, const MAX: usize> Str<'a, MAX> {
    /// The string.
    pub fn as_str(&self) -> &'a str {
        self.0
    }
}

impl<'a, const MAX: usize> From<&'a str> for Str<'a, MAX> {
    fn from(s: &'a str) -> Self {
        Self(s)
    }
}

impl<const MAX: usize> fmt::Debug for Str<'_, MAX> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.0, f)
    }
}

impl<'a, const MAX: usize> WireField<'a> for Str<'a, MAX> {
    const MAX_LEN: usize = 4 + MAX;
    fn decode(cx: &mut DecodeCx<'a>, what: &'static str) -> Result<Self, DecodeError> {
        let len = read_len(cx, MAX, what)?;
        Ok(Self(check_text(cx.r.take(len, what)?, what)?))
    }
    fn encode(&self, cx: &mut EncodeCx<'_, 'a>, what: &'static str) -> Result<(), EncodeError> {
        if self.0.contains('\0') {
            return Err(EncodeError::InvalidValue { what });
        }
        write_len(cx, self.0.len(), MAX, what)?;
        cx.w.put(self.0.as_bytes());
        Ok(())
    }
}

/// A fixed-capacity string (device and architecture names): u16 length, then bytes.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct FixedStr<const N: usize>(pub heapless::String<N>);

impl<const N: usize> FixedStr<N> {
    /// Copies `s`, truncated at a character boundary to the capacity (as C's `strncpy` into
    /// `hipDeviceProp_t::name` would); NULs end the string early.
    pub fn truncated(s: &str) -> Self {
        let mut out = heapless::String::new();
        for c in s.chars().take_while(|&c| c != '\0') {
            if out.push(c).is_err() {
                break;
            }
        }
        Self(out)
    }

    /// The string.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl<const N: usize> fmt::Debug for FixedStr<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.0.as_str(), f)
    }
}

impl<'a, const N: usize> WireField<'a> for FixedStr<N> {
    const MAX_LEN: usize = 2 + N;
    fn decode(cx: &mut DecodeCx<'a>, what: &'static str) -> Result<Self, DecodeError> {
        let len = cx.r.read_ref::<U16>(what)?.get() as usize;
        if len > N {
            return Err(DecodeError::TooLarge { what, len: len as u64, max: N as u64 });
        }
        let s = check_text(cx.r.take(len, what)?, what)?;
        let mut out = heapless::String::new();
        out.push_str(s).map_err(|_| DecodeError::TooLarge { what, len: len as u64, max: N as u64 })?;
        Ok(Self(out))
    }
    fn encode(&self, cx: &mut EncodeCx<'_, 'a>, what: &'static str) -> Result<(), EncodeError> {
        let s = self.0.as_str();
        if s.contains('\0') || s.len() > N || s.len() > usize::from(u16::MAX) {
            return Err(EncodeError::InvalidValue { what });
        }
        cx.w.put_value(&U16::new(s.len() as u16));
        cx.w.put(s.as_bytes());
        Ok(())
    }
}

/// A counted list (u32 count) of fixed-layout little-endian items, borrowed in place.
pub struct List<'a, T, const MAX: usize>(pub &'a [T]);

impl<T, const MAX: usize> Clone for List<'_, T, MAX> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, const MAX: usize> Copy for List<'_, T, MAX> {}

impl<T: IntoBytes + Immutable, const MAX: usize> PartialEq for List<'_, T, MAX> {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_bytes() == other.0.as_bytes()
    }
}

impl<T: fmt::Debug, const MAX: usize> fmt::Debug for List<'_, T, MAX> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.iter()).finish()
    }
}

impl<T, const MAX: usize> Default for List<'_, T, MAX> {
    fn default() -> Self {
        Self(&[])
    }
}

impl<'a, T, const MAX: usize> WireField<'a> for List<'a, T, MAX>
where
    T: FromBytes + IntoBytes + KnownLayout + Immutable + Unaligned,
{
    const MAX_LEN: usize = 4 + MAX * core::mem::size_of::<T>();
    fn decode(cx: &mut DecodeCx<'a>, what: &'static str) -> Result<Self, DecodeError> {
        let count = read_len(cx, MAX, what)?;
        Ok(Self(cx.r.read_slice::<T>(count, what)?))
    }
    fn encode(&self, cx: &mut EncodeCx<'_, 'a>, what: &'static str) -> Result<(), EncodeError> {
        write_len(cx, self.0.len(), MAX, what)?;
        cx.w.put(self.0.as_bytes());
        Ok(())
    }
}

/// A list of strings packed as NUL-terminated items ("a\0bb\0"), u32 byte length first.
/// Borrowed whole; validated (UTF-8, item count, terminator) before it is handed out.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct StrList<'a>(&'a str);

impl<'a> StrList<'a> {
    /// Wraps an already packed list; `None` unless every item is NUL-terminated and within
    /// [`limits::MAX_LIST_ITEMS`].
    pub fn from_packed(packed: &'a str) -> Option<Self> {
        (packed.is_empty() || packed.ends_with('\0'))
            .then_some(Self(packed))
            .filter(|l| l.len() <= limits::MAX_LIST_ITEMS && packed.len() <= limits::MAX_TEXT_LEN)
    }

    /// The packed form.
    pub fn packed(&self) -> &'a str {
        self.0
    }

    /// The items.
    pub fn iter(&self) -> impl Iterator<Item = &'a str> + 'a {
        self.0.split_terminator('\0')
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.0.bytes().filter(|&b| b == 0).count()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for StrList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> WireField<'a> for StrList<'a> {
    const MAX_LEN: usize = 4 + limits::MAX_TEXT_LEN;
    fn decode(cx: &mut DecodeCx<'a>, what: &'static str) -> Result<Self, DecodeError> {
        let len = read_len(cx, limits::MAX_TEXT_LEN, what)?;
        let bytes = cx.r.take(len, what)?;
        let s = core::str::from_utf8(bytes).map_err(|_| DecodeError::InvalidValue { what })?;
        if !(s.is_empty() || s.ends_with('\0')) {
            return Err(DecodeError::InvalidValue { what });
        }
        let list = Self(s);
        let count = list.len();
        if count > limits::MAX_LIST_ITEMS {
            return Err(DecodeError::TooLarge { what, len: count as u64, max: limits::MAX_LIST_ITEMS as u64 });
        }
        Ok(list)
    }
    fn encode(&self, cx: &mut EncodeCx<'_, 'a>, what: &'static str) -> Result<(), EncodeError> {
        if Self::from_packed(self.0).is_none() {
            return Err(EncodeError::InvalidValue { what });
        }
        write_len(cx, self.0.len(), limits::MAX_TEXT_LEN, what)?;
        cx.w.put(self.0.as_bytes());
        Ok(())
    }
}

/// The frame's bulk section (copy data, code objects): not part of the control payload; its
/// length is the header's `bulk_len`, so a transport can place it without parsing the message.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Bulk<'a>(pub &'a [u8]);

impl fmt::Debug for Bulk<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bulk({} bytes)", self.0.len())
    }
}

impl<'a> WireField<'a> for Bulk<'a> {
    const MAX_LEN: usize = 0;
    const IS_BULK: bool = true;
    fn decode(cx: &mut DecodeCx<'a>, what: &'static str) -> Result<Self, DecodeError> {
        let bulk = cx.bulk.take().ok_or(DecodeError::InvalidValue { what })?;
        if bulk.len() > limits::MAX_BULK_LEN {
            return Err(DecodeError::TooLarge { what, len: bulk.len() as u64, max: limits::MAX_BULK_LEN as u64 });
        }
        Ok(Self(bulk))
    }
    fn encode(&self, cx: &mut EncodeCx<'_, 'a>, what: &'static str) -> Result<(), EncodeError> {
        if cx.bulk.is_some() || self.0.len() > limits::MAX_BULK_LEN {
            return Err(EncodeError::InvalidValue { what });
        }
        cx.bulk = Some(self.0);
        Ok(())
    }
}

#[cfg(feature = "defmt")]
mod defmt_impls {
    //! `defmt::Format` for the field types, printing what their `Debug` impls print.
    use super::*;
    use defmt::{write, Format, Formatter};

    impl<const MAX: usize> Format for Bytes<'_, MAX> {
        fn format(&self, f: Formatter<'_>) {
            if self.0.len() <= 16 {
                write!(f, "{=usize} bytes {=[u8]:02x}", self.0.len(), self.0);
            } else {
                write!(f, "{=usize} bytes", self.0.len());
            }
        }
    }

    impl<const MAX: usize> Format for Str<'_, MAX> {
        fn format(&self, f: Formatter<'_>) {
            write!(f, "{=str:?}", self.0);
        }
    }

    impl<const N: usize> Format for FixedStr<N> {
        fn format(&self, f: Formatter<'_>) {
            write!(f, "{=str:?}", self.0.as_str());
        }
    }

    impl<T: Format, const MAX: usize> Format for List<'_, T, MAX> {
        fn format(&self, f: Formatter<'_>) {
            write!(f, "{=[?]}", self.0);
        }
    }

    impl Format for StrList<'_> {
        fn format(&self, f: Formatter<'_>) {
            write!(f, "[");
            for (i, item) in self.iter().enumerate() {
                if i > 0 {
                    write!(f, ", ");
                }
                write!(f, "{=str:?}", item);
            }
            write!(f, "]");
        }
    }

    impl Format for Bulk<'_> {
        fn format(&self, f: Formatter<'_>) {
            write!(f, "bulk({=usize} bytes)", self.0.len());
        }
    }
}

#[cfg(feature = "arbitrary")]
mod arbitrary_impls {
    //! Generators for property tests and fuzzing: they make values the encoder accepts.
    use super::*;
    use arbitrary::{Arbitrary, Result, Unstructured};

    fn text_prefix(s: &str, max: usize) -> &str {
        let s = &s[..s.find('\0').unwrap_or(s.len())];
        let mut end = s.len().min(max);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        &s[..end]
    }

    impl<'a, const MAX: usize> Arbitrary<'a> for Bytes<'a, MAX> {
        fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
            let len = u.int_in_range(0..=MAX.min(256))?;
            Ok(Self(u.bytes(len.min(u.len()))?))
        }
    }

    impl<'a, const MAX: usize> Arbitrary<'a> for Str<'a, MAX> {
        fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
            Ok(Self(text_prefix(<&str>::arbitrary(u)?, MAX)))
        }
    }

    impl<'a, const N: usize> Arbitrary<'a> for FixedStr<N> {
        fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
            Ok(Self::truncated(<&str>::arbitrary(u)?))
        }
    }

    impl<'a, T, const MAX: usize> Arbitrary<'a> for List<'a, T, MAX>
    where
        T: FromBytes + Immutable + Unaligned,
    {
        fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
            let size = core::mem::size_of::<T>().max(1);
            let count = u.int_in_range(0..=MAX.min(64))?.min(u.len() / size);
            let bytes = u.bytes(count * size)?;
            Ok(Self(<[T]>::ref_from_bytes(bytes).map_err(|_| arbitrary::Error::IncorrectFormat)?))
        }
    }

    impl<'a> Arbitrary<'a> for StrList<'a> {
        fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
            let s = <&str>::arbitrary(u)?;
            let s = &s[..s.rfind('\0').map_or(0, |i| i + 1)];
            Ok(Self::from_packed(s).unwrap_or_default())
        }
    }

    impl<'a> Arbitrary<'a> for Bulk<'a> {
        fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
            let len = u.arbitrary_len::<u8>()?;
            Ok(Self(u.bytes(len)?))
        }
    }
}
