//! The device log: kernel `printf` and `assert` for backends whose kernels cannot reach the
//! worker's output themselves (the cuda backend: modules compiled by hip-remote's `hipcc` or
//! hiprtc define the global [`SYMBOL`]; see `docs/KERNELS.md`).
//!
//! Layout (all little-endian): a 32-byte header — magic, capacity, head (bytes reserved by
//! writers, may pass capacity), asserts, dropped — then `capacity` bytes of records. The
//! global may start all zero: each writer stores magic and capacity before it reserves. A record
//! is `u32 size, u32 kind, u32 format_len, u32 arg_count`, the format zero-padded to 8 bytes,
//! then the arguments, each `u32 tag, u32 len` and its 8-byte-padded value. A writer stores
//! a record's `size` last, so a size of 0 means "not finished yet".
//!
//! Everything here is backend-independent and free of I/O: [`DeviceLog`] reads through a
//! [`LogMemory`] (device memory for a backend, a byte vector in tests), [`format_record`]
//! turns one record into text with C `printf` semantics (each conversion formatted by libc's
//! `snprintf` with the argument's C type), and [`LogBook`] tracks which streams launched the
//! kernels of which module, so a synchronize reads the logs it may have filled, knows which
//! stream the text belongs to, and resets a log once no kernel that could write it runs.
//! Nothing a device writes can make it panic or allocate without bound.

use super::{BackendError, DeviceIndex};
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_longlong, c_ulonglong, c_void, CString};

/// The global every hip-remote module for NVIDIA defines.
pub const SYMBOL: &str = "__hip_remote_device_log";
/// `b"RHIPLOG1"` read as a little-endian `u64`.
pub const MAGIC: u64 = u64::from_le_bytes(*b"RHIPLOG1");
/// Bytes before the records.
pub const HEADER_BYTES: u64 = 32;
/// The largest capacity accepted: a log claiming more is not used (a bound on what one
/// synchronize reads).
pub const MAX_CAPACITY: u64 = 64 << 20;
/// A record's fixed part: size, kind, format length, argument count.
pub const RECORD_HEADER_BYTES: usize = 16;
/// Record kinds.
pub const KIND_PRINTF: u32 = 1;
/// A failed `assert`: formatted like `printf`, also counted in the header's `asserts`.
pub const KIND_ASSERT: u32 = 2;
/// Argument tags.
pub mod tag {
    /// A signed integer, sign-extended to 64 bits.
    pub const SIGNED: u32 = 1;
    /// An unsigned integer, zero-extended to 64 bits.
    pub const UNSIGNED: u32 = 2;
    /// A `double` (a `float` promoted).
    pub const FLOAT: u32 = 3;
    /// A pointer, for `%p`.
    pub const POINTER: u32 = 4;
    /// The bytes of a `char*` argument, without NUL.
    pub const STRING: u32 = 5;
    /// A null `char*`.
    pub const NULL_STRING: u32 = 6;
}
/// Widths and precisions above this print the conversion as written (a device cannot make
/// the worker format megabytes of padding).
pub const MAX_FIELD: i64 = 4096;
/// Text one record may produce; the rest of the record is cut with a note.
pub const MAX_RECORD_TEXT: usize = 64 << 10;
/// Text one read of a log may produce; later records are consumed but not shown (counted).
pub const MAX_DRAIN_TEXT: usize = super::host::MAX_PENDING_KERNEL_OUTPUT;
/// Longest conversion specification (`%-+ #0*.*lld` and the like) formatted; a longer one
/// (a run of repeated flags) prints as written.
const MAX_SPEC: usize = 24;

fn pad8(n: usize) -> Option<usize> {
    n.checked_add(7).map(|n| n & !7)
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    bytes.get(at..at.checked_add(4)?).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    bytes.get(at..at.checked_add(8)?).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
}

/// One argument of a record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arg<'a> {
    /// Tag 1.
    Signed(i64),
    /// Tag 2.
    Unsigned(u64),
    /// Tag 3.
    Float(f64),
    /// Tag 4.
    Pointer(u64),
    /// Tag 5.
    Str(&'a [u8]),
    /// Tag 6.
    NullStr,
}

/// Why a record could not be formatted (it is skipped and counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Malformed {
    /// Shorter than its fixed part, or its parts run past its size.
    Truncated,
    /// A kind other than printf or assert.
    Kind(u32),
    /// More arguments than the record has room for.
    ArgCount(u32),
    /// An unknown argument tag, or a length its tag does not allow.
    Arg { tag: u32, len: u32 },
}

/// A parsed record, borrowing the log's bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Record<'a> {
    /// [`KIND_PRINTF`] or [`KIND_ASSERT`].
    pub kind: u32,
    /// The format string's bytes.
    pub format: &'a [u8],
    /// The arguments, in order.
    pub args: Vec<Arg<'a>>,
}

impl<'a> Record<'a> {
    /// Parses one whole record (`bytes` is exactly the record, its size word included).
    pub fn parse(bytes: &'a [u8]) -> Result<Self, Malformed> {
        let field = |at| u32_at(bytes, at).ok_or(Malformed::Truncated);
        let (kind, format_len, arg_count) = (field(4)?, field(8)?, field(12)?);
        if kind != KIND_PRINTF && kind != KIND_ASSERT {
            return Err(Malformed::Kind(kind));
        }
        let format_end = RECORD_HEADER_BYTES.checked_add(format_len as usize).ok_or(Malformed::Truncated)?;
        let format = bytes.get(RECORD_HEADER_BYTES..format_end).ok_or(Malformed::Truncated)?;
        let mut at = pad8(format_end).ok_or(Malformed::Truncated)?;
        // Every argument takes at least 8 bytes: a count beyond that is a lie, refused before
        // anything is allocated for it.
        if arg_count as usize > bytes.len().saturating_sub(at) / 8 {
            return Err(Malformed::ArgCount(arg_count));
        }
        let mut args = Vec::with_capacity(arg_count as usize);
        for _ in 0..arg_count {
            let (tag, len) = (field(at)?, field(at + 4)?);
            let value_at = at + 8;
            let arg = match (tag, len) {
                (tag::SIGNED, 8) => Arg::Signed(u64_at(bytes, value_at).ok_or(Malformed::Truncated)? as i64),
                (tag::UNSIGNED, 8) => Arg::Unsigned(u64_at(bytes, value_at).ok_or(Malformed::Truncated)?),
                (tag::FLOAT, 8) => Arg::Float(f64::from_bits(u64_at(bytes, value_at).ok_or(Malformed::Truncated)?)),
                (tag::POINTER, 8) => Arg::Pointer(u64_at(bytes, value_at).ok_or(Malformed::Truncated)?),
                (tag::STRING, _) => {
                    let end = value_at.checked_add(len as usize).ok_or(Malformed::Truncated)?;
                    Arg::Str(bytes.get(value_at..end).ok_or(Malformed::Truncated)?)
                }
                (tag::NULL_STRING, 0) => Arg::NullStr,
                _ => return Err(Malformed::Arg { tag, len }),
            };
            at = pad8(value_at + len as usize).ok_or(Malformed::Truncated)?;
            if at > bytes.len() {
                return Err(Malformed::Truncated);
            }
            args.push(arg);
        }
        Ok(Self { kind, format, args })
    }
}

/// A value as the C type `snprintf` receives.
enum CArg<'a> {
    LongLong(c_longlong),
    ULongLong(c_ulonglong),
    Int(c_int),
    Double(f64),
    Pointer(*const c_void),
    Str(&'a CString),
}

/// Appends `value` formatted by libc's `snprintf` with `spec` (one conversion); false when
/// libc refuses it (nothing appended).
fn c_format(out: &mut Vec<u8>, spec: &CString, value: CArg<'_>) -> bool {
    let call = |buf: *mut c_char, len: usize| -> c_int {
        // SAFETY: `spec` is a NUL-terminated format with exactly one conversion, whose C type
        // the caller chose to match `value`'s variant (see `format_conversion`); `buf` is
        // null with `len` 0, or `len` writable bytes.
        unsafe {
            match value {
                CArg::LongLong(v) => libc::snprintf(buf, len, spec.as_ptr(), v),
                CArg::ULongLong(v) => libc::snprintf(buf, len, spec.as_ptr(), v),
                CArg::Int(v) => libc::snprintf(buf, len, spec.as_ptr(), v),
                CArg::Double(v) => libc::snprintf(buf, len, spec.as_ptr(), v),
                CArg::Pointer(v) => libc::snprintf(buf, len, spec.as_ptr(), v),
                CArg::Str(v) => libc::snprintf(buf, len, spec.as_ptr(), v.as_ptr()),
            }
        }
    };
    let Ok(needed) = usize::try_from(call(std::ptr::null_mut(), 0)) else {
        return false;
    };
    let start = out.len();
    out.resize(start + needed + 1, 0);
    let written = call(out[start..].as_mut_ptr().cast(), needed + 1);
    out.truncate(start + usize::try_from(written).unwrap_or(0).min(needed));
    written >= 0
}

/// One parsed `%...` conversion.
struct Conversion {
    flags: String,
    /// A `*` width or precision takes an argument.
    width: Field,
    precision: Option<Field>,
    length: &'static str,
    conversion: u8,
}

enum Field {
    None,
    Given(i64),
    Star,
}

/// Parses the conversion starting after its `%`; `None` when the format ends inside it or
/// names no conversion C has. Returns it and the bytes it spans.
fn parse_conversion(rest: &[u8]) -> Option<(Conversion, usize)> {
    let mut at = 0;
    let mut flags = String::new();
    while let Some(&c) = rest.get(at).filter(|c| b"-+ #0".contains(c)) {
        flags.push(c as char);
        at += 1;
    }
    let number = |at: &mut usize| {
        let mut value: i64 = 0;
        while let Some(d) = rest.get(*at).filter(|c| c.is_ascii_digit()) {
            value = value.saturating_mul(10).saturating_add(i64::from(d - b'0'));
            *at += 1;
        }
        value
    };
    let width = match rest.get(at) {
        Some(b'*') => {
            at += 1;
            Field::Star
        }
        Some(c) if c.is_ascii_digit() => Field::Given(number(&mut at)),
        _ => Field::None,
    };
    let precision = if rest.get(at) == Some(&b'.') {
        at += 1;
        if rest.get(at) == Some(&b'*') {
            at += 1;
            Some(Field::Star)
        } else {
            Some(Field::Given(number(&mut at)))
        }
    } else {
        None
    };
    let lengths: [(&[u8], &'static str); 9] =
        [(b"hh", "hh"), (b"ll", "ll"), (b"h", "h"), (b"l", "l"), (b"L", "L"), (b"q", "ll"), (b"j", "j"), (b"z", "z"), (b"t", "t")];
    let length = match lengths.iter().find(|(written, _)| rest[at..].starts_with(written)) {
        Some((written, length)) => {
            at += written.len();
            *length
        }
        None => "",
    };
    let conversion = *rest.get(at).filter(|c| b"diuoxXcspfFeEgGaA".contains(c))?;
    Some((Conversion { flags, width, precision, length, conversion }, at + 1))
}

/// The integer a `*` takes (C's `int`).
fn star_value(arg: Option<&Arg<'_>>) -> Option<i64> {
    match arg? {
        Arg::Signed(v) => Some(i64::from(*v as i32)),
        Arg::Unsigned(v) => Some(i64::from(*v as u32 as i32)),
        _ => None,
    }
}

/// Formats one conversion onto `out`, taking its arguments from `args`; false (nothing
/// appended) when an argument is missing (`args` untouched), of the wrong kind, or a field is
/// out of bounds, and the caller prints the conversion as written. Arguments that are there
/// are consumed even then, so the ones after them stay in step.
fn format_conversion(out: &mut Vec<u8>, c: &Conversion, args: &mut std::slice::Iter<'_, Arg<'_>>) -> bool {
    let mut taken = args.clone();
    let mut flags = c.flags.clone();
    let width = match c.width {
        Field::None => None,
        Field::Given(w) => Some(w),
        Field::Star => match star_value(taken.next()) {
            // C: a negative `*` width is the `-` flag and its magnitude.
            Some(w) if w < 0 => {
                flags.push('-');
                Some(-w)
            }
            Some(w) => Some(w),
            None => return false,
        },
    };
    let precision = match c.precision {
        None => None,
        Some(Field::Given(p)) => Some(p),
        Some(Field::Star) => match star_value(taken.next()) {
            // C: a negative `*` precision is as if none were given.
            Some(p) if p < 0 => None,
            Some(p) => Some(p),
            None => return false,
        },
        Some(Field::None) => Some(0),
    };
    let Some(arg) = taken.next() else {
        return false;
    };
    // The argument is there: it is consumed whether or not it fits the conversion.
    *args = taken;
    if width.is_some_and(|w| w > MAX_FIELD) || precision.is_some_and(|p| p > MAX_FIELD) {
        return false;
    }
    let narrow_signed = |v: i64| match c.length {
        "hh" => i64::from(v as i8),
        "h" => i64::from(v as i16),
        "" => i64::from(v as i32),
        _ => v,
    };
    let narrow_unsigned = |v: u64| match c.length {
        "hh" => u64::from(v as u8),
        "h" => u64::from(v as u16),
        "" => u64::from(v as u32),
        _ => v,
    };
    // Integers go to libc as `long long`, narrowed first to the C type the length names.
    // An integer argument's bits, whichever signedness the writer tagged (C reinterprets an
    // `unsigned` passed for `%d`, and `threadIdx.x` is unsigned).
    let bits = match arg {
        Arg::Signed(v) => Some(*v as u64),
        Arg::Unsigned(v) | Arg::Pointer(v) => Some(*v),
        _ => None,
    };
    let string;
    let (length, value) = match (c.conversion, arg) {
        (b'd' | b'i', _) => match bits {
            Some(v) => ("ll", CArg::LongLong(narrow_signed(v as i64))),
            None => return false,
        },
        (b'u' | b'o' | b'x' | b'X', _) => match bits {
            Some(v) => ("ll", CArg::ULongLong(narrow_unsigned(v))),
            None => return false,
        },
        (b'c', _) => match bits {
            Some(v) => ("", CArg::Int(c_int::from(v as u8))),
            None => return false,
        },
        (b'p', _) => match bits {
            Some(v) => ("", CArg::Pointer(v as usize as *const c_void)),
            None => return false,
        },
        (b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A', Arg::Float(v)) => ("", CArg::Double(*v)),
        (b's', Arg::Str(bytes)) => {
            // C stops a string at its NUL.
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            string = CString::new(&bytes[..end]).expect("no NUL before `end`");
            ("", CArg::Str(&string))
        }
        (b's', Arg::NullStr) => {
            string = CString::new("(null)").expect("no NUL");
            ("", CArg::Str(&string))
        }
        _ => return false,
    };
    let mut spec = format!("%{flags}");
    if let Some(w) = width {
        spec.push_str(&w.to_string());
    }
    if let Some(p) = precision {
        spec.push('.');
        spec.push_str(&p.to_string());
    }
    spec.push_str(length);
    spec.push(c.conversion as char);
    let spec = CString::new(spec).expect("built without NUL");
    c_format(out, &spec, value)
}

/// A record's text: its format with C `printf` semantics applied to its arguments. A
/// conversion without a fitting argument prints as written; so do `%n` and anything C does
/// not know. At most [`MAX_RECORD_TEXT`] bytes (then a note).
pub fn format_record(record: &Record<'_>) -> Vec<u8> {
    // C stops at the format's NUL.
    let format = &record.format[..record.format.iter().position(|&b| b == 0).unwrap_or(record.format.len())];
    let mut out = Vec::new();
    let mut args = record.args.iter();
    let mut at = 0;
    while at < format.len() {
        if out.len() > MAX_RECORD_TEXT {
            out.truncate(MAX_RECORD_TEXT);
            out.extend_from_slice(b"[hip-remote: kernel printf record cut]\n");
            return out;
        }
        let Some(percent) = format[at..].iter().position(|&b| b == b'%') else {
            out.extend_from_slice(&format[at..]);
            break;
        };
        out.extend_from_slice(&format[at..at + percent]);
        at += percent + 1;
        if format.get(at) == Some(&b'%') {
            out.push(b'%');
            at += 1;
            continue;
        }
        match parse_conversion(&format[at..]) {
            Some((conversion, spanned)) => {
                if spanned > MAX_SPEC || !format_conversion(&mut out, &conversion, &mut args) {
                    out.push(b'%');
                    out.extend_from_slice(&format[at..at + spanned]);
                }
                at += spanned;
            }
            // Not a conversion: the `%` prints as written, and the rest as text.
            None => out.push(b'%'),
        }
    }
    if out.len() > MAX_RECORD_TEXT {
        out.truncate(MAX_RECORD_TEXT);
        out.extend_from_slice(b"[hip-remote: kernel printf record cut]\n");
    }
    out
}

/// Reads and writes the memory a log lives in (a device's, for a GPU backend).
pub trait LogMemory {
    /// Fills `out` from `address` on `device`.
    fn read(&mut self, device: DeviceIndex, address: u64, out: &mut [u8]) -> Result<(), BackendError>;
    /// Sets `len` bytes at `address` on `device` to zero.
    fn zero(&mut self, device: DeviceIndex, address: u64, len: u64) -> Result<(), BackendError>;
}

/// The header as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Header {
    magic: u64,
    capacity: u64,
    head: u64,
    asserts: u32,
    dropped: u32,
}

impl Header {
    fn read(memory: &mut dyn LogMemory, device: DeviceIndex, address: u64) -> Result<Self, BackendError> {
        let mut bytes = [0u8; HEADER_BYTES as usize];
        memory.read(device, address, &mut bytes)?;
        Ok(Self::parse(&bytes))
    }

    fn parse(bytes: &[u8; HEADER_BYTES as usize]) -> Self {
        let word = |at| u64_at(bytes, at).expect("inside the header");
        Self {
            magic: word(0),
            capacity: word(8),
            head: word(16),
            asserts: u32_at(bytes, 24).expect("inside the header"),
            dropped: u32_at(bytes, 28).expect("inside the header"),
        }
    }
}

/// What one read of a log found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Drained {
    /// The new records' text, with notes for lost or malformed records.
    pub text: Vec<u8>,
    /// Failed asserts since the last read.
    pub asserts: u32,
}

/// Where the walk over newly read bytes stopped.
struct Walk<'a> {
    /// Finished records, in order.
    records: Vec<&'a [u8]>,
    /// Bytes they span (the new `consumed` is the old plus this).
    walked: usize,
    /// Stopped at a size that cannot be (not a multiple of 8, below the fixed part, or past
    /// what was read).
    corrupt: bool,
}

/// Walks records: sizes from `sizes`, contents from `contents` (the same bytes read again
/// later, see [`DeviceLog::drain`]), up to the first unfinished or impossible one.
fn walk<'a>(sizes: &[u8], contents: &'a [u8]) -> Walk<'a> {
    let mut walk = Walk { records: Vec::new(), walked: 0, corrupt: false };
    while let Some(size) = u32_at(sizes, walk.walked) {
        let size = size as usize;
        if size == 0 {
            break;
        }
        let end = walk.walked.saturating_add(size);
        if !size.is_multiple_of(8) || size < RECORD_HEADER_BYTES || end > sizes.len() || u32_at(contents, walk.walked) != Some(size as u32) {
            walk.corrupt = true;
            break;
        }
        walk.records.push(&contents[walk.walked..end]);
        walk.walked = end;
    }
    walk
}

/// One module's log, as its reader keeps track of it.
#[derive(Debug)]
pub struct DeviceLog {
    device: DeviceIndex,
    address: u64,
    capacity: u64,
    /// Bytes of `data` already read and formatted.
    consumed: u64,
    asserts_seen: u32,
    dropped_seen: u32,
    /// A corrupt record was reported (once per log, until a reset).
    corrupt_reported: bool,
}

impl DeviceLog {
    /// The log at `address` (a global of `size` bytes on `device`), or `None` when it is
    /// not one (too small, wrong magic, a capacity that does not fit or exceeds
    /// [`MAX_CAPACITY`]).
    pub fn open(memory: &mut dyn LogMemory, device: DeviceIndex, address: u64, size: u64) -> Result<Option<Self>, BackendError> {
        if size < HEADER_BYTES {
            tracing::debug!(size, "{SYMBOL} is smaller than its header: not a device log");
            return Ok(None);
        }
        let header = Header::read(memory, device, address)?;
        // The global may be zero-initialised, its writers storing magic and capacity before
        // their first record (an initialiser of a megabyte costs megabytes of PTX): all zero
        // is a log nothing was written to yet, whose capacity is the rest of the global.
        let fresh = header == Header { magic: 0, capacity: 0, head: 0, asserts: 0, dropped: 0 };
        let capacity = if fresh { (size - HEADER_BYTES).min(MAX_CAPACITY) & !7 } else { header.capacity };
        let fits = capacity <= size - HEADER_BYTES && capacity <= MAX_CAPACITY && capacity.is_multiple_of(8);
        if !(fresh || header.magic == MAGIC) || !fits {
            tracing::warn!(magic = header.magic, capacity = header.capacity, size, "{SYMBOL} is not a device log this worker reads");
            return Ok(None);
        }
        Ok(Some(Self { device, address, capacity, consumed: 0, asserts_seen: header.asserts, dropped_seen: header.dropped, corrupt_reported: false }))
    }

    /// The device the log lives on.
    pub fn device(&self) -> DeviceIndex {
        self.device
    }

    /// The device address of its header.
    pub fn address(&self) -> u64 {
        self.address
    }

    /// Reads the records written since the last read and formats them.
    ///
    /// `settled`: no kernel that can write this log is running or queued. The new bytes are
    /// then read once, and afterwards the log is reset (records zeroed, head and counters 0)
    /// so later kernels have its whole capacity. Otherwise a writer may be storing a record
    /// while the bytes are copied, and a copy need not read its bytes in order: the bytes
    /// are read twice, the record sizes taken from the first copy and their contents from
    /// the second — a size seen in the first was stored after its record's contents (the
    /// writer's fence), so the second copy, started later, has them.
    ///
    /// `header`: the header's bytes if the caller already copied them, after the kernels it
    /// waited for (a GPU backend queues that copy on the stream it waits for, saving a round
    /// trip when nothing was written).
    pub fn drain(
        &mut self,
        memory: &mut dyn LogMemory,
        settled: bool,
        header: Option<&[u8; HEADER_BYTES as usize]>,
    ) -> Result<Drained, BackendError> {
        let header = match header {
            Some(bytes) => Header::parse(bytes),
            None => Header::read(memory, self.device, self.address)?,
        };
        let mut drained = Drained::default();
        if header.magic == 0 && header.head == 0 && header.asserts == 0 && header.dropped == 0 {
            // Never written (a zero-initialised log).
            return Ok(drained);
        }
        if header.magic != MAGIC {
            // A writer's magic not visible yet while kernels run; otherwise, overwritten.
            if settled {
                self.report_corrupt("its magic was overwritten");
            }
            return Ok(drained);
        }
        // A writer may claim less room than the global has, never more.
        let end = header.head.min(self.capacity).min(header.capacity);
        if end > self.consumed {
            let data = self.address + HEADER_BYTES + self.consumed;
            let len = (end - self.consumed) as usize;
            let mut first = vec![0u8; len];
            memory.read(self.device, data, &mut first)?;
            let second = if settled {
                None
            } else {
                let mut second = vec![0u8; len];
                memory.read(self.device, data, &mut second)?;
                Some(second)
            };
            let walked = walk(&first, second.as_deref().unwrap_or(&first));
            if walked.corrupt {
                self.report_corrupt("a record's size is impossible");
            }
            let (mut malformed, mut unshown) = (0usize, 0usize);
            for record in &walked.records {
                if drained.text.len() >= MAX_DRAIN_TEXT {
                    unshown += 1;
                    continue;
                }
                match Record::parse(record) {
                    Ok(record) => drained.text.extend(format_record(&record)),
                    Err(why) => {
                        tracing::debug!(?why, "malformed device log record");
                        malformed += 1;
                    }
                }
            }
            if malformed > 0 {
                drained.text.extend(format!("[hip-remote: {malformed} malformed kernel printf records skipped]\n").bytes());
            }
            if unshown > 0 {
                drained
                    .text
                    .extend(format!("[hip-remote: {unshown} kernel printf records not shown: over {MAX_DRAIN_TEXT} bytes of text]\n").bytes());
            }
            self.consumed += walked.walked as u64;
        }
        let lost = header.dropped.wrapping_sub(self.dropped_seen);
        if lost > 0 {
            drained.text.extend(format!("[hip-remote: {lost} kernel printf records lost: the device log is full]\n").bytes());
        }
        self.dropped_seen = header.dropped;
        drained.asserts = header.asserts.wrapping_sub(self.asserts_seen);
        self.asserts_seen = header.asserts;
        if settled && (header.head != 0 || header.asserts != 0 || header.dropped != 0) {
            self.reset(memory, end)?;
        }
        Ok(drained)
    }

    /// Zeroes head, asserts, dropped and the first `used` data bytes (a later writer's
    /// unfinished record must read as size 0), which follow them: one write. Only while no
    /// writer runs.
    fn reset(&mut self, memory: &mut dyn LogMemory, used: u64) -> Result<(), BackendError> {
        memory.zero(self.device, self.address + 16, HEADER_BYTES - 16 + used)?;
        self.consumed = 0;
        self.asserts_seen = 0;
        self.dropped_seen = 0;
        self.corrupt_reported = false;
        Ok(())
    }

    fn report_corrupt(&mut self, why: &str) {
        if !self.corrupt_reported {
            self.corrupt_reported = true;
            tracing::warn!(
                address = self.address,
                consumed = self.consumed,
                "device log corrupt ({why}): its later records are not read until it is reset"
            );
        }
    }
}

/// The key of a device's null stream in a [`LogBook`] (stream handles start at 1).
pub const NULL_STREAM: u64 = 0;

/// A module's log and the streams that launched its kernels since they were last waited for.
#[derive(Debug)]
struct Tracked {
    log: DeviceLog,
    /// Stream key → number of the latest launch on it.
    launches: HashMap<u64, u64>,
    /// The stream of the latest launch: where text goes when no stream was waited for.
    last_stream: u64,
}

/// Which launches a synchronization waits for, taken before it waits. A launch must be
/// queued and recorded ([`LogBook::launched`]) under the same lock as this is taken under,
/// so that a launch recorded before it is queued before the wait begins, and one recorded
/// after it keeps its module from counting as settled.
#[derive(Debug, Default)]
pub struct Waited {
    /// (module, stream key, launch number): each waited for, by a stream or device wait.
    launches: Vec<(u64, u64, u64)>,
    /// Modules to read although nothing they launched is known finished (an event wait).
    read_only: Vec<u64>,
    /// The stream the text goes to; `None`: each module's latest stream.
    target: Option<u64>,
    /// (module, header address) of each log a stream wait covers.
    headers: Vec<(u64, u64)>,
}

impl Waited {
    /// (module, header address) of the logs of a stream wait, whose headers the caller may
    /// copy on the stream before waiting (see [`DeviceLog::drain`]).
    pub fn headers(&self) -> &[(u64, u64)] {
        &self.headers
    }
}

/// Text and asserts for one stream, from one synchronization.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The stream key the output belongs to.
    pub stream: u64,
    /// What the kernels printed.
    pub text: Vec<u8>,
    /// Failed asserts found.
    pub asserts: u32,
}

/// Every device log of a backend, with the launches that may write them.
///
/// Attribution: a module's text goes to the stream being synchronized (or, for a device-wide
/// synchronize, to the stream of the module's latest launch). It is exact when the module's
/// kernels ran on one stream since its log was last read; with kernels of one module on
/// several streams at once, a finished kernel's text may come with another stream's
/// synchronize (never another module's, hence never another session's).
#[derive(Debug, Default)]
pub struct LogBook {
    modules: super::HandleMap<u64, Tracked>,
    launch_count: u64,
    /// Executable graph → modules of its kernels.
    graphs: HashMap<u64, Vec<u64>>,
}

impl LogBook {
    /// Starts tracking `module`'s log.
    pub fn add_module(&mut self, module: u64, log: DeviceLog) {
        self.modules.insert(module, Tracked { log, launches: HashMap::new(), last_stream: NULL_STREAM });
    }

    /// Whether `module` has a log.
    pub fn has_log(&self, module: u64) -> bool {
        self.modules.contains_key(&module)
    }

    /// Forgets `module` (unloaded), after reading what it left if `memory` is given
    /// (the caller waited for the device): its text goes to its latest stream.
    pub fn remove_module(&mut self, module: u64, memory: Option<&mut dyn LogMemory>) -> Option<Delivery> {
        let mut tracked = self.modules.remove(&module)?;
        let memory = memory?;
        match tracked.log.drain(memory, true, None) {
            Ok(drained) => Some(Delivery { stream: tracked.last_stream, text: drained.text, asserts: drained.asserts }),
            Err(e) => {
                tracing::warn!(%e, "reading the device log of an unloaded module failed");
                None
            }
        }
    }

    /// Records a launch of one of `module`'s kernels on `stream`.
    pub fn launched(&mut self, module: u64, stream: u64) {
        if let Some(tracked) = self.modules.get_mut(&module) {
            self.launch_count += 1;
            tracked.launches.insert(stream, self.launch_count);
            tracked.last_stream = stream;
        }
    }

    /// Remembers the modules of an instantiated graph's kernels (those with a log).
    pub fn graph_instantiated(&mut self, exec: u64, modules: Vec<u64>) {
        let mut modules: Vec<u64> = modules.into_iter().filter(|m| self.modules.contains_key(m)).collect();
        modules.sort_unstable();
        modules.dedup();
        if modules.is_empty() {
            self.graphs.remove(&exec);
        } else {
            self.graphs.insert(exec, modules);
        }
    }

    /// Records a launch of graph `exec` on `stream`.
    pub fn graph_launched(&mut self, exec: u64, stream: u64) {
        for module in self.graphs.get(&exec).cloned().unwrap_or_default() {
            self.launched(module, stream);
        }
    }

    /// Whether graph `exec` has kernels of a module with a log.
    pub fn graph_has_logs(&self, exec: u64) -> bool {
        self.graphs.contains_key(&exec)
    }

    /// Forgets a destroyed graph.
    pub fn graph_destroyed(&mut self, exec: u64) {
        self.graphs.remove(&exec);
    }

    /// Before waiting for `stream`: the launches the wait covers.
    pub fn before_stream_wait(&self, stream: u64) -> Waited {
        let launches: Vec<(u64, u64, u64)> = self.modules.iter().filter_map(|(&m, t)| t.launches.get(&stream).map(|&n| (m, stream, n))).collect();
        let headers = launches.iter().map(|&(m, _, _)| (m, self.modules[&m].log.address())).collect();
        Waited { launches, read_only: Vec::new(), target: Some(stream), headers }
    }

    /// Before waiting for an event recorded on `stream`: work after the event may still run,
    /// so the logs are read but nothing counts as finished.
    pub fn before_event_wait(&self, stream: u64) -> Waited {
        let read_only = self.modules.iter().filter(|(_, t)| t.launches.contains_key(&stream)).map(|(&m, _)| m).collect();
        Waited { launches: Vec::new(), read_only, target: Some(stream), headers: Vec::new() }
    }

    /// Before waiting for all of `device`'s work.
    pub fn before_device_wait(&self, device: DeviceIndex) -> Waited {
        let launches = self
            .modules
            .iter()
            .filter(|(_, t)| t.log.device() == device)
            .flat_map(|(&m, t)| t.launches.iter().map(move |(&s, &n)| (m, s, n)))
            .collect();
        Waited { launches, read_only: Vec::new(), target: None, headers: Vec::new() }
    }

    /// After the wait: the launches it covered are finished; reads each module concerned
    /// (resetting those left with no launch in flight) and returns the output per stream.
    /// A log that cannot be read is skipped (logged): the wait's own result stands.
    /// `headers`: (module, header bytes) the caller copied after the waited work (see
    /// [`Waited::headers`]); the other headers are read here.
    pub fn after_wait(&mut self, waited: Waited, memory: &mut dyn LogMemory, headers: &[(u64, [u8; HEADER_BYTES as usize])]) -> Vec<Delivery> {
        let mut modules: Vec<u64> = Vec::new();
        for &(module, stream, number) in &waited.launches {
            if let Some(tracked) = self.modules.get_mut(&module) {
                // A later launch on the stream was not waited for.
                if tracked.launches.get(&stream) == Some(&number) {
                    tracked.launches.remove(&stream);
                }
                modules.push(module);
            }
        }
        modules.extend(&waited.read_only);
        modules.sort_unstable();
        modules.dedup();
        let mut deliveries: Vec<Delivery> = Vec::new();
        for module in modules {
            let Some(tracked) = self.modules.get_mut(&module) else { continue };
            let settled = waited.read_only.is_empty() && tracked.launches.is_empty();
            let header = headers.iter().find(|(m, _)| *m == module).map(|(_, bytes)| bytes);
            let drained = match tracked.log.drain(memory, settled, header) {
                Ok(drained) => drained,
                Err(e) => {
                    tracing::warn!(%e, module, "reading a device log failed");
                    continue;
                }
            };
            if drained.text.is_empty() && drained.asserts == 0 {
                continue;
            }
            let stream = waited.target.unwrap_or(tracked.last_stream);
            match deliveries.iter_mut().find(|d| d.stream == stream) {
                Some(d) => {
                    d.text.extend(drained.text);
                    d.asserts += drained.asserts;
                }
                None => deliveries.push(Delivery { stream, text: drained.text, asserts: drained.asserts }),
            }
        }
        deliveries
    }
}

/// What synchronizations found, per stream, until the session takes it: kernel text (bounded
/// by [`MAX_PENDING_KERNEL_OUTPUT`](super::host::MAX_PENDING_KERNEL_OUTPUT), as on the host
/// backend) and a failed assert, latched until the stream is destroyed.
#[derive(Default)]
pub struct StreamOutputs {
    text: HashMap<u64, super::host::KernelOutput>,
    latched: HashMap<u64, BackendError>,
}

impl StreamOutputs {
    /// Keeps a delivery's text and latches its asserts on its stream.
    pub fn deliver(&mut self, delivery: Delivery) {
        if !delivery.text.is_empty() {
            self.text.entry(delivery.stream).or_default().append(&delivery.text);
        }
        if delivery.asserts > 0 {
            let error = BackendError::Assert(format!(
                "{} device-side assert(s) failed in kernels of this stream (their messages are in the kernel output)",
                delivery.asserts
            ));
            self.latched.entry(delivery.stream).or_insert(error);
        }
    }

    /// The error latched on `stream`.
    pub fn latched(&self, stream: u64) -> Result<(), BackendError> {
        self.latched.get(&stream).cloned().map_or(Ok(()), Err)
    }

    /// The text kept for `stream` since the last call (with a note of what was dropped).
    pub fn take(&mut self, stream: u64) -> Vec<u8> {
        self.text.remove(&stream).map(|output| output.take()).unwrap_or_default()
    }

    /// Forgets a destroyed stream.
    pub fn forget(&mut self, stream: u64) {
        self.text.remove(&stream);
        self.latched.remove(&stream);
    }
}

#[cfg(test)]
#[path = "device_log_tests.rs"]
mod tests;
