//! HIP fat binaries as `hipcc` embeds them, the clang offload bundles inside, and the choice
//! of the code object a device can run.
//!
//! Three layers, each a checked view over borrowed bytes (every offset and size is checked
//! against the input before it is used, with overflow-checked arithmetic, so hostile input
//! gives a [`FatbinError`], never a panic or an out-of-bounds read):
//!
//! - the **wrapper** `__hip_fatbin_wrapper` that `__hipRegisterFatBinary` receives
//!   ([`Wrapper`]): magic `HIPF` (0x48495046), version 1, the address of the offload bundle;
//! - the **clang offload bundle**: plain (`__CLANG_OFFLOAD_BUNDLE__`, [`Bundle`]) or
//!   compressed (`CCOB` versions 1–3, zlib or zstd, [`decompress`]);
//! - the **target id** of each entry (`hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`,
//!   [`TargetId`]) and the entry a device can run ([`select`]).
//!
//! Images that arrive as a bare pointer (`hipModuleLoadData`, the wrapper's bundle address)
//! have no length; [`image_extent`] learns it from the image's own headers (ELF, plain or
//! compressed bundle), asking for more bytes step by step ([`Extent::NeedMore`]) so a caller
//! never reads past what the headers promise.
//!
//! Layouts (all little-endian, no alignment):
//!
//! | structure | fields |
//! |---|---|
//! | wrapper (24) | `u32` magic, `u32` version, `u64` bundle address, `u64` unused |
//! | bundle header (32) | `[u8; 24]` magic, `u64` entry count |
//! | bundle entry (24 + id) | `u64` offset (from the bundle start), `u64` size, `u64` id length, id bytes |
//! | CCOB v1 (20) | `"CCOB"`, `u16` version, `u16` method (0 zlib, 1 zstd), `u32` uncompressed size, `u64` hash |
//! | CCOB v2 (24) | as v1 with a `u32` total size (header + payload) before the uncompressed size |
//! | CCOB v3 (32) | as v2 with `u64` total and uncompressed sizes |
use std::borrow::Cow;
use std::fmt;
use std::io::Read;
use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// The wrapper's magic, `"HIPF"` read as a little-endian `u32`.
pub const WRAPPER_MAGIC: u32 = 0x4849_5046;
/// The only wrapper version clang emits.
pub const WRAPPER_VERSION: u32 = 1;
/// Size of the wrapper structure.
pub const WRAPPER_LEN: usize = 24;
/// Magic of a plain offload bundle.
pub const BUNDLE_MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
/// Magic of a compressed offload bundle.
pub const CCOB_MAGIC: &[u8; 4] = b"CCOB";
/// Magic of an ELF file.
pub const ELF_MAGIC: &[u8; 4] = b"\x7fELF";
/// `e_machine` of AMD GPU code objects.
pub const EM_AMDGPU: u16 = 224;

/// Largest image (ELF, plain or decompressed bundle) this module accepts: 1 GiB.
pub const MAX_IMAGE_LEN: usize = 1 << 30;
/// Most entries of one bundle (real ones have a handful: one per architecture plus the host).
pub const MAX_BUNDLE_ENTRIES: u64 = 4096;
/// Longest entry id.
pub const MAX_ENTRY_ID_LEN: u64 = 4096;
/// Most program or section headers of one ELF image.
pub const MAX_ELF_HEADERS: u64 = 1 << 16;

/// Why an image could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FatbinError {
    /// The input ends before `what`, which needs `need` bytes from the start.
    Truncated { what: &'static str, need: u64, have: usize },
    /// `what` does not start with its magic number.
    BadMagic { what: &'static str },
    /// A version this parser does not know.
    UnsupportedVersion { what: &'static str, version: u32 },
    /// A compressed bundle whose method is neither zlib (0) nor zstd (1).
    UnsupportedCompression { method: u16 },
    /// An ELF image that is not 64-bit little-endian, or has odd header sizes.
    UnsupportedElf { why: &'static str },
    /// A length or count above this module's limits (or one that overflows).
    TooLarge { what: &'static str, len: u64, max: u64 },
    /// Decompression failed, or produced another size than the header promised.
    Decompress { reason: String },
    /// A bundle entry id that is not UTF-8.
    BadEntryId,
}

impl fmt::Display for FatbinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated { what, need, have } => write!(f, "truncated {what}: needs {need} bytes, {have} available"),
            Self::BadMagic { what } => write!(f, "not a {what} (bad magic number)"),
            Self::UnsupportedVersion { what, version } => write!(f, "{what} version {version} is not supported"),
            Self::UnsupportedCompression { method } => {
                write!(f, "compressed offload bundle uses method {method} (only 0 zlib and 1 zstd exist)")
            }
            Self::UnsupportedElf { why } => write!(f, "unsupported ELF image: {why}"),
            Self::TooLarge { what, len, max } => write!(f, "{what} too large: {len} (limit {max})"),
            Self::Decompress { reason } => write!(f, "compressed offload bundle: {reason}"),
            Self::BadEntryId => f.write_str("offload bundle entry id is not UTF-8"),
        }
    }
}

impl std::error::Error for FatbinError {}

type Result<T> = std::result::Result<T, FatbinError>;

// ------------------------------------------------------------------------------------------------
// Raw layouts
// ------------------------------------------------------------------------------------------------

#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct WrapperRaw {
    magic: U32,
    version: U32,
    binary: U64,
    unused: U64,
}

#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct BundleHeader {
    magic: [u8; 24],
    num_entries: U64,
}

#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct EntryHead {
    offset: U64,
    size: U64,
    id_len: U64,
}

#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct CcobPrefix {
    magic: [u8; 4],
    version: U16,
    method: U16,
}

#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct CcobV1 {
    prefix: CcobPrefix,
    uncompressed: U32,
    hash: U64,
}

#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct CcobV2 {
    prefix: CcobPrefix,
    total: U32,
    uncompressed: U32,
    hash: U64,
}

#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct CcobV3 {
    prefix: CcobPrefix,
    total: U64,
    uncompressed: U64,
    hash: U64,
}

/// An ELF64 file header (little-endian), read in place; also the code object readers'.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub(crate) struct ElfHeader {
    pub(crate) ident: [u8; 16],
    pub(crate) e_type: U16,
    pub(crate) machine: U16,
    pub(crate) version: U32,
    pub(crate) entry: U64,
    pub(crate) phoff: U64,
    pub(crate) shoff: U64,
    pub(crate) flags: U32,
    pub(crate) ehsize: U16,
    pub(crate) phentsize: U16,
    pub(crate) phnum: U16,
    pub(crate) shentsize: U16,
    pub(crate) shnum: U16,
    pub(crate) shstrndx: U16,
}

#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct ElfPhdr {
    p_type: U32,
    flags: U32,
    offset: U64,
    vaddr: U64,
    paddr: U64,
    filesz: U64,
    memsz: U64,
    align: U64,
}

/// An ELF64 section header (little-endian), read in place; also the code object readers'.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy)]
#[repr(C)]
pub(crate) struct ElfShdr {
    pub(crate) name: U32,
    pub(crate) sh_type: U32,
    pub(crate) flags: U64,
    pub(crate) addr: U64,
    pub(crate) offset: U64,
    pub(crate) size: U64,
    pub(crate) link: U32,
    pub(crate) info: U32,
    pub(crate) addralign: U64,
    pub(crate) entsize: U64,
}

const _: () = {
    use core::mem::size_of;
    assert!(size_of::<WrapperRaw>() == WRAPPER_LEN);
    assert!(size_of::<BundleHeader>() == 32);
    assert!(size_of::<EntryHead>() == 24);
    assert!(size_of::<CcobV1>() == 20);
    assert!(size_of::<CcobV2>() == 24);
    assert!(size_of::<CcobV3>() == 32);
    assert!(size_of::<ElfHeader>() == 64);
    assert!(size_of::<ElfPhdr>() == 56);
    assert!(size_of::<ElfShdr>() == 64);
};

/// `SHT_NOBITS`: a section that occupies no file space (`.bss`).
const SHT_NOBITS: u32 = 8;

/// The `T` at `at`, or `Truncated`.
fn view<'a, T: FromBytes + KnownLayout + Immutable + Unaligned>(data: &'a [u8], at: u64, what: &'static str) -> Result<&'a T> {
    let need = at.checked_add(core::mem::size_of::<T>() as u64).ok_or(FatbinError::TooLarge { what, len: at, max: MAX_IMAGE_LEN as u64 })?;
    let bytes = usize::try_from(at)
        .ok()
        .zip(usize::try_from(need).ok())
        .and_then(|(start, end)| data.get(start..end))
        .ok_or(FatbinError::Truncated { what, need, have: data.len() })?;
    T::ref_from_bytes(bytes).map_err(|_| FatbinError::Truncated { what, need, have: data.len() })
}

/// `data[offset..offset + len]`, or `Truncated`.
fn range<'a>(data: &'a [u8], offset: u64, len: u64, what: &'static str) -> Result<&'a [u8]> {
    let end = offset.checked_add(len).ok_or(FatbinError::TooLarge { what, len, max: MAX_IMAGE_LEN as u64 })?;
    usize::try_from(offset).ok().zip(usize::try_from(end).ok()).and_then(|(start, end)| data.get(start..end)).ok_or(FatbinError::Truncated {
        what,
        need: end,
        have: data.len(),
    })
}

fn cap(what: &'static str, len: u64) -> Result<usize> {
    if len > MAX_IMAGE_LEN as u64 {
        return Err(FatbinError::TooLarge { what, len, max: MAX_IMAGE_LEN as u64 });
    }
    Ok(len as usize)
}

// ------------------------------------------------------------------------------------------------
// Wrapper
// ------------------------------------------------------------------------------------------------

/// The `__hip_fatbin_wrapper` handed to `__hipRegisterFatBinary`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wrapper {
    /// Address of the offload bundle in the registering process.
    pub binary: u64,
}

impl Wrapper {
    /// Checks magic and version.
    pub fn parse(data: &[u8]) -> Result<Self> {
        let raw: &WrapperRaw = view(data, 0, "HIP fat binary wrapper")?;
        if raw.magic.get() != WRAPPER_MAGIC {
            return Err(FatbinError::BadMagic { what: "HIP fat binary wrapper" });
        }
        if raw.version.get() != WRAPPER_VERSION {
            return Err(FatbinError::UnsupportedVersion { what: "HIP fat binary wrapper", version: raw.version.get() });
        }
        Ok(Self { binary: raw.binary.get() })
    }
}

// ------------------------------------------------------------------------------------------------
// Image kinds and extents
// ------------------------------------------------------------------------------------------------

/// What an image is, by its magic number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageKind {
    /// An ELF file; `machine` is its `e_machine` (224 AMD GPU, 62 x86-64, 183 AArch64).
    Elf { machine: u16 },
    /// A plain clang offload bundle.
    Bundle,
    /// A compressed clang offload bundle.
    CompressedBundle,
    /// NVIDIA PTX text (what NVRTC produces on a CUDA worker).
    Ptx,
    /// An NVIDIA fatbin (`0xBA55ED50`).
    NvFatbin,
}

/// `e_machine` of NVIDIA cubins.
pub const EM_CUDA: u16 = 190;
const NV_FATBIN_MAGIC: [u8; 4] = 0xBA55_ED50u32.to_le_bytes();

/// Whether `data` looks like PTX: text whose first directive is `.version` (after comments).
fn is_ptx(data: &[u8]) -> bool {
    let head = &data[..data.len().min(4096)];
    let Ok(text) = std::str::from_utf8(head.split(|&b| b == 0).next().unwrap_or_default()) else { return false };
    text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with("//")).is_some_and(|l| l.starts_with(".version"))
}

/// The kind of `data` (which must hold at least the first 20 bytes of the image).
pub fn classify(data: &[u8]) -> Result<ImageKind> {
    if data.starts_with(ELF_MAGIC) {
        let header: &ElfHeader = view(data, 0, "ELF header")?;
        return Ok(ImageKind::Elf { machine: header.machine.get() });
    }
    if data.starts_with(BUNDLE_MAGIC) {
        return Ok(ImageKind::Bundle);
    }
    if data.starts_with(CCOB_MAGIC) {
        return Ok(ImageKind::CompressedBundle);
    }
    if data.starts_with(&NV_FATBIN_MAGIC) {
        return Ok(ImageKind::NvFatbin);
    }
    if is_ptx(data) {
        return Ok(ImageKind::Ptx);
    }
    if data.len() < BUNDLE_MAGIC.len() && (BUNDLE_MAGIC.starts_with(data) || ELF_MAGIC.starts_with(data)) {
        return Err(FatbinError::Truncated { what: "image magic", need: 4, have: data.len() });
    }
    Err(FatbinError::BadMagic { what: "code object, offload bundle or host module (ELF, __CLANG_OFFLOAD_BUNDLE__, CCOB, PTX or NVIDIA fatbin)" })
}

/// How much of an image there is, as far as its headers tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extent {
    /// The image is exactly this many bytes.
    Complete(usize),
    /// Show at least this many bytes (from the image start) to learn more.
    NeedMore(usize),
    /// The headers do not say (a version 1 compressed bundle: its zlib or zstd stream ends
    /// itself); the caller must bound the image some other way.
    Unsized,
}

/// The extent of the image starting at `data[0]`, from its own headers: call with the bytes
/// seen so far, starting with 4, and grow the view while the answer is `NeedMore`.
pub fn image_extent(data: &[u8]) -> Result<Extent> {
    if data.len() < 4 {
        return Ok(Extent::NeedMore(4));
    }
    if data.starts_with(ELF_MAGIC) {
        return elf_extent(data);
    }
    if data.starts_with(&BUNDLE_MAGIC[..4]) {
        return bundle_extent(data);
    }
    if data.starts_with(CCOB_MAGIC) {
        return ccob_extent(data);
    }
    classify(data).map(|_| Extent::Unsized)
}

fn need(len: u64, what: &'static str, data: &[u8]) -> Result<Option<Extent>> {
    let len = cap(what, len)?;
    Ok((data.len() < len).then_some(Extent::NeedMore(len)))
}

fn elf_extent(data: &[u8]) -> Result<Extent> {
    if let Some(more) = need(64, "ELF header", data)? {
        return Ok(more);
    }
    let h: &ElfHeader = view(data, 0, "ELF header")?;
    if h.ident[4] != 2 {
        return Err(FatbinError::UnsupportedElf { why: "not a 64-bit ELF file" });
    }
    if h.ident[5] != 1 {
        return Err(FatbinError::UnsupportedElf { why: "not little-endian" });
    }
    let (phoff, shoff) = (h.phoff.get(), h.shoff.get());
    let mut phnum = u64::from(h.phnum.get());
    let mut shnum = u64::from(h.shnum.get());
    if phnum > 0 && h.phentsize.get() as usize != core::mem::size_of::<ElfPhdr>() {
        return Err(FatbinError::UnsupportedElf { why: "program header size is not 56" });
    }
    if (shnum > 0 || shoff != 0) && h.shentsize.get() as usize != core::mem::size_of::<ElfShdr>() {
        return Err(FatbinError::UnsupportedElf { why: "section header size is not 64" });
    }
    // Extended numbering: counts that do not fit 16 bits live in section header 0.
    if shoff != 0 && (shnum == 0 || phnum == 0xffff) {
        let end = shoff.checked_add(64).ok_or(FatbinError::TooLarge { what: "ELF section headers", len: shoff, max: MAX_IMAGE_LEN as u64 })?;
        if let Some(more) = need(end, "ELF section headers", data)? {
            return Ok(more);
        }
        let first: &ElfShdr = view(data, shoff, "ELF section header 0")?;
        if shnum == 0 {
            shnum = first.size.get();
        }
        if phnum == 0xffff {
            phnum = u64::from(first.info.get());
        }
    }
    if phnum > MAX_ELF_HEADERS || shnum > MAX_ELF_HEADERS {
        return Err(FatbinError::TooLarge { what: "ELF header count", len: phnum.max(shnum), max: MAX_ELF_HEADERS });
    }
    let table_end =
        |off: u64, n: u64, size: u64, what| off.checked_add(n * size).ok_or(FatbinError::TooLarge { what, len: off, max: MAX_IMAGE_LEN as u64 });
    let ph_end = if phnum > 0 { table_end(phoff, phnum, 56, "ELF program headers")? } else { 0 };
    let sh_end = if shnum > 0 { table_end(shoff, shnum, 64, "ELF section headers")? } else { 0 };
    let tables = ph_end.max(sh_end).max(64);
    if let Some(more) = need(tables, "ELF header tables", data)? {
        return Ok(more);
    }
    let mut end = tables;
    let bad = |what| FatbinError::TooLarge { what, len: u64::MAX, max: MAX_IMAGE_LEN as u64 };
    for i in 0..phnum {
        let ph: &ElfPhdr = view(data, phoff + i * 56, "ELF program header")?;
        end = end.max(ph.offset.get().checked_add(ph.filesz.get()).ok_or_else(|| bad("ELF segment"))?);
    }
    for i in 0..shnum {
        let sh: &ElfShdr = view(data, shoff + i * 64, "ELF section header")?;
        if sh.sh_type.get() != SHT_NOBITS {
            end = end.max(sh.offset.get().checked_add(sh.size.get()).ok_or_else(|| bad("ELF section"))?);
        }
    }
    Ok(Extent::Complete(cap("ELF image", end)?))
}

fn bundle_extent(data: &[u8]) -> Result<Extent> {
    if let Some(more) = need(32, "offload bundle header", data)? {
        return Ok(more);
    }
    let h: &BundleHeader = view(data, 0, "offload bundle header")?;
    if &h.magic != BUNDLE_MAGIC {
        return Err(FatbinError::BadMagic { what: "clang offload bundle" });
    }
    let count = h.num_entries.get();
    if count > MAX_BUNDLE_ENTRIES {
        return Err(FatbinError::TooLarge { what: "offload bundle entry count", len: count, max: MAX_BUNDLE_ENTRIES });
    }
    let mut pos: u64 = 32;
    let mut end: u64 = 32;
    for _ in 0..count {
        if let Some(more) = need(pos + 24, "offload bundle entry", data)? {
            return Ok(more);
        }
        let e: &EntryHead = view(data, pos, "offload bundle entry")?;
        let id_len = e.id_len.get();
        if id_len > MAX_ENTRY_ID_LEN {
            return Err(FatbinError::TooLarge { what: "offload bundle entry id", len: id_len, max: MAX_ENTRY_ID_LEN });
        }
        pos += 24 + id_len;
        if let Some(more) = need(pos, "offload bundle entry id", data)? {
            return Ok(more);
        }
        let code_end = e.offset.get().checked_add(e.size.get());
        end = end.max(pos).max(code_end.ok_or(FatbinError::TooLarge { what: "offload bundle entry", len: u64::MAX, max: MAX_IMAGE_LEN as u64 })?);
    }
    Ok(Extent::Complete(cap("offload bundle", end)?))
}

/// A compressed bundle's header, any version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CcobHeader {
    /// Format version (1, 2 or 3).
    pub version: u16,
    /// 0 zlib, 1 zstd.
    pub method: u16,
    /// Header length (20, 24 or 32).
    pub header_len: usize,
    /// Header plus payload, where the version records it (2 and 3).
    pub total_len: Option<u64>,
    /// Size of the bundle once decompressed.
    pub uncompressed_len: u64,
}

impl CcobHeader {
    /// Reads the header at the start of `data`.
    pub fn parse(data: &[u8]) -> Result<Self> {
        let p: &CcobPrefix = view(data, 0, "compressed offload bundle header")?;
        if &p.magic != CCOB_MAGIC {
            return Err(FatbinError::BadMagic { what: "compressed offload bundle" });
        }
        let (version, method) = (p.version.get(), p.method.get());
        let (header_len, total_len, uncompressed_len) = match version {
            1 => {
                let h: &CcobV1 = view(data, 0, "compressed offload bundle header")?;
                (20, None, u64::from(h.uncompressed.get()))
            }
            2 => {
                let h: &CcobV2 = view(data, 0, "compressed offload bundle header")?;
                (24, Some(u64::from(h.total.get())), u64::from(h.uncompressed.get()))
            }
            3 => {
                let h: &CcobV3 = view(data, 0, "compressed offload bundle header")?;
                (32, Some(h.total.get()), h.uncompressed.get())
            }
            v => return Err(FatbinError::UnsupportedVersion { what: "compressed offload bundle", version: v.into() }),
        };
        if method > 1 {
            return Err(FatbinError::UnsupportedCompression { method });
        }
        if let Some(total) = total_len {
            if total < header_len as u64 {
                return Err(FatbinError::Truncated {
                    what: "compressed offload bundle (total size below its header)",
                    need: header_len as u64,
                    have: total as usize,
                });
            }
            cap("compressed offload bundle", total)?;
        }
        cap("decompressed offload bundle", uncompressed_len)?;
        Ok(Self { version, method, header_len, total_len, uncompressed_len })
    }
}

fn ccob_extent(data: &[u8]) -> Result<Extent> {
    if let Some(more) = need(8, "compressed offload bundle header", data)? {
        return Ok(more);
    }
    let p: &CcobPrefix = view(data, 0, "compressed offload bundle header")?;
    let header_len = match p.version.get() {
        1 => 20,
        2 => 24,
        _ => 32,
    };
    if let Some(more) = need(header_len, "compressed offload bundle header", data)? {
        return Ok(more);
    }
    let h = CcobHeader::parse(data)?;
    Ok(match h.total_len {
        Some(total) => Extent::Complete(total as usize),
        None => Extent::Unsized,
    })
}

// ------------------------------------------------------------------------------------------------
// Decompression
// ------------------------------------------------------------------------------------------------

/// The plain bundle in `data`: `data` itself unless it is a compressed bundle, which is
/// decompressed (bytes after its end, where a version 1 bundle does not say where that is,
/// are ignored: zlib and zstd streams end themselves).
pub fn decompress(data: &[u8]) -> Result<Cow<'_, [u8]>> {
    if !data.starts_with(CCOB_MAGIC) {
        return Ok(Cow::Borrowed(data));
    }
    let h = CcobHeader::parse(data)?;
    let end = h.total_len.unwrap_or(data.len() as u64);
    let payload = range(data, h.header_len as u64, end - h.header_len as u64, "compressed offload bundle payload")?;
    let want = h.uncompressed_len as usize;
    let out = match h.method {
        0 => miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(payload, want)
            .map_err(|e| FatbinError::Decompress { reason: format!("zlib: {:?}", e.status) })?,
        _ => {
            let mut source = payload;
            let decoder =
                ruzstd::decoding::StreamingDecoder::new(&mut source).map_err(|e| FatbinError::Decompress { reason: format!("zstd: {e}") })?;
            let mut out = Vec::with_capacity(want.min(64 << 20));
            // One byte more than promised, to notice a stream that is longer.
            decoder.take(want as u64 + 1).read_to_end(&mut out).map_err(|e| FatbinError::Decompress { reason: format!("zstd: {e}") })?;
            out
        }
    };
    if out.len() != want {
        return Err(FatbinError::Decompress {
            reason: format!("header promises {want} bytes, the stream holds {}{}", out.len(), if out.len() > want { "+" } else { "" }),
        });
    }
    Ok(Cow::Owned(out))
}

// ------------------------------------------------------------------------------------------------
// Plain bundles
// ------------------------------------------------------------------------------------------------

/// One entry of an offload bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry<'a> {
    /// The bundle entry id (`hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`).
    pub id: &'a str,
    /// The entry's bytes (a code object; empty for the host entry).
    pub code: &'a [u8],
}

/// A parsed plain offload bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bundle<'a> {
    entries: Vec<Entry<'a>>,
}

impl<'a> Bundle<'a> {
    /// Parses a plain bundle; every entry's bytes must lie inside `data`.
    pub fn parse(data: &'a [u8]) -> Result<Self> {
        let h: &BundleHeader = view(data, 0, "offload bundle header")?;
        if &h.magic != BUNDLE_MAGIC {
            return Err(FatbinError::BadMagic { what: "clang offload bundle" });
        }
        let count = h.num_entries.get();
        if count > MAX_BUNDLE_ENTRIES {
            return Err(FatbinError::TooLarge { what: "offload bundle entry count", len: count, max: MAX_BUNDLE_ENTRIES });
        }
        let mut entries = Vec::with_capacity(count as usize);
        let mut pos: u64 = 32;
        for _ in 0..count {
            let e: &EntryHead = view(data, pos, "offload bundle entry")?;
            let id_len = e.id_len.get();
            if id_len > MAX_ENTRY_ID_LEN {
                return Err(FatbinError::TooLarge { what: "offload bundle entry id", len: id_len, max: MAX_ENTRY_ID_LEN });
            }
            let id = range(data, pos + 24, id_len, "offload bundle entry id")?;
            let id = std::str::from_utf8(id).map_err(|_| FatbinError::BadEntryId)?;
            let code = range(data, e.offset.get(), e.size.get(), "offload bundle entry code")?;
            entries.push(Entry { id, code });
            pos += 24 + id_len;
        }
        Ok(Self { entries })
    }

    /// The entries, in bundle order.
    pub fn entries(&self) -> &[Entry<'a>] {
        &self.entries
    }
}

// ------------------------------------------------------------------------------------------------
// Target ids and selection
// ------------------------------------------------------------------------------------------------

/// A bundle entry id: `<kind>-<arch>-<vendor>-<os>-<env>-<target id>`, the environment
/// possibly empty (`hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-`) or absent in older ids
/// (`hip-amdgcn-amd-amdhsa-gfx906`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetId<'a> {
    /// Offload kind: `hip`, `hipv4`, `host`, `openmp`, ...
    pub kind: &'a str,
    /// Triple architecture: `amdgcn`, `x86_64`, ...
    pub arch: &'a str,
    /// Processor and features (`gfx90a:sramecc+:xnack-`); empty for host entries.
    pub target: Arch<'a>,
}

impl<'a> TargetId<'a> {
    /// Splits an entry id; `None` when it does not have a kind and a triple.
    pub fn parse(id: &'a str) -> Option<Self> {
        let (kind, rest) = id.split_once('-')?;
        let mut parts = rest.splitn(4, '-');
        let arch = parts.next()?;
        let _vendor = parts.next()?;
        let _os = parts.next()?;
        let tail = parts.next().unwrap_or("");
        let target = if arch == "amdgcn" {
            // `-gfx90a...` (empty environment), `gfx906...` (no environment) or `env-gfx...`.
            match tail.strip_prefix('-') {
                Some(t) => t,
                None if tail.starts_with("gfx") => tail,
                None => tail.split_once('-').map_or("", |(_, t)| t),
            }
        } else {
            ""
        };
        Some(Self { kind, arch, target: Arch::parse(target) })
    }

    /// Whether this entry is HIP device code for AMD GPUs.
    pub fn is_hip_gpu(&self) -> bool {
        self.kind.starts_with("hip") && self.arch == "amdgcn" && !self.target.processor.is_empty()
    }
}

/// A processor with target features, as in `gcnArchName`: `gfx90a:sramecc+:xnack-`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arch<'a> {
    /// The processor (`gfx90a`), `host` for the host backend.
    pub processor: &'a str,
    /// Features explicitly on (`+`) or off (`-`); a feature not listed is "any".
    pub features: Vec<(&'a str, bool)>,
    /// The original text.
    pub text: &'a str,
}

impl<'a> Arch<'a> {
    /// Parses `processor(:feature[+-])*`; features without a sign are ignored.
    pub fn parse(text: &'a str) -> Self {
        let mut parts = text.split(':');
        let processor = parts.next().unwrap_or("");
        let features = parts.filter_map(|f| f.strip_suffix('+').map(|n| (n, true)).or_else(|| f.strip_suffix('-').map(|n| (n, false)))).collect();
        Self { processor, features, text }
    }

    fn feature(&self, name: &str) -> Option<bool> {
        self.features.iter().find(|(n, _)| *n == name).map(|&(_, on)| on)
    }
}

/// Generic processors (LLVM 19+) and the processors their code runs on.
const GENERIC_PROCESSORS: &[(&str, &[&str])] = &[
    ("gfx9-generic", &["gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"]),
    ("gfx9-4-generic", &["gfx940", "gfx941", "gfx942", "gfx950"]),
    ("gfx10-1-generic", &["gfx1010", "gfx1011", "gfx1012", "gfx1013"]),
    ("gfx10-3-generic", &["gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"]),
    ("gfx11-generic", &["gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"]),
    ("gfx12-generic", &["gfx1200", "gfx1201"]),
];

/// How well code for `code` suits `device`: `None` when it cannot run there. An exact
/// processor beats a generic one; among those, more explicitly matching features win (a
/// feature the code leaves unspecified runs either way, as ROCm's loader decides).
pub fn compatibility(code: &Arch<'_>, device: &Arch<'_>) -> Option<u32> {
    let base = if code.processor == device.processor {
        1000
    } else if GENERIC_PROCESSORS.iter().any(|(g, members)| *g == code.processor && members.contains(&device.processor)) {
        500
    } else {
        return None;
    };
    let mut score = base;
    for &(name, on) in &code.features {
        match device.feature(name) {
            Some(d) if d != on => return None,
            Some(_) => score += 1,
            None => {}
        }
    }
    Some(score)
}

/// No entry of a bundle runs on the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoMatch {
    /// The device's architecture (`gcnArchName`).
    pub needed: String,
    /// The GPU targets the bundle carries.
    pub available: Vec<String>,
}

impl fmt::Display for NoMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let available = if self.available.is_empty() { "no GPU code object at all".to_string() } else { self.available.join(", ") };
        write!(f, "no code object for the worker's device architecture '{}'; the program carries: {available}", self.needed)?;
        if Arch::parse(&self.needed).processor == "host" {
            f.write_str(
                ". The worker runs the host backend, which executes host modules only: a hipcc fat binary \
                 (AMD GPU code) can never run there. Use a worker with one of these GPUs, or build the \
                 kernels with hiprtc (or as a host module) for the host backend",
            )?;
        }
        Ok(())
    }
}

/// The entry of `bundle` that runs best on a device of architecture `device_arch`.
pub fn select<'b, 'a>(bundle: &'b Bundle<'a>, device_arch: &str) -> std::result::Result<&'b Entry<'a>, NoMatch> {
    let device = Arch::parse(device_arch);
    let mut best: Option<(u32, &Entry<'a>)> = None;
    for entry in bundle.entries() {
        let Some(id) = TargetId::parse(entry.id) else { continue };
        if !id.is_hip_gpu() || entry.code.is_empty() {
            continue;
        }
        if let Some(score) = compatibility(&id.target, &device) {
            if !matches!(best, Some((b, _)) if b >= score) {
                best = Some((score, entry));
            }
        }
    }
    best.map(|(_, e)| e).ok_or_else(|| NoMatch {
        needed: device_arch.to_string(),
        available: bundle
            .entries()
            .iter()
            .filter_map(|e| TargetId::parse(e.id))
            .filter(TargetId::is_hip_gpu)
            .map(|id| id.target.text.to_string())
            .collect(),
    })
}

/// Alignment of each entry's code in bundles [`write_bundle`] lays out, as clang's offload
/// bundler aligns code objects (a loader may map them in place).
pub const BUNDLE_CODE_ALIGN: usize = 4096;

/// A plain offload bundle holding `entries` (id, code), in order: the header and ids first,
/// then each entry's code at a multiple of [`BUNDLE_CODE_ALIGN`].
pub fn write_bundle(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let header_len: usize = 32 + entries.iter().map(|(id, _)| 24 + id.len()).sum::<usize>();
    let mut offsets = Vec::with_capacity(entries.len());
    let mut end = header_len;
    for (_, code) in entries {
        let at = if code.is_empty() { end } else { end.next_multiple_of(BUNDLE_CODE_ALIGN) };
        offsets.push(at);
        end = at + code.len();
    }
    let mut out = Vec::with_capacity(end);
    out.extend_from_slice(BUNDLE_MAGIC);
    out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for ((id, code), at) in entries.iter().zip(&offsets) {
        out.extend_from_slice(&(*at as u64).to_le_bytes());
        out.extend_from_slice(&(code.len() as u64).to_le_bytes());
        out.extend_from_slice(&(id.len() as u64).to_le_bytes());
        out.extend_from_slice(id.as_bytes());
    }
    for ((_, code), at) in entries.iter().zip(&offsets) {
        out.resize(*at, 0);
        out.extend_from_slice(code);
    }
    out
}

/// Builders for tests (here, and in other crates through the `test-support` feature).
#[cfg(any(test, feature = "test-support"))]
pub mod test_support {
    use super::BUNDLE_MAGIC;

    /// A plain bundle with the given entries, laid out as clang does (ids first, code after).
    pub fn bundle(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let header_len: usize = 32 + entries.iter().map(|(id, _)| 24 + id.len()).sum::<usize>();
        let mut out = Vec::new();
        out.extend_from_slice(BUNDLE_MAGIC);
        out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
        let mut offset = header_len;
        for (id, code) in entries {
            out.extend_from_slice(&(offset as u64).to_le_bytes());
            out.extend_from_slice(&(code.len() as u64).to_le_bytes());
            out.extend_from_slice(&(id.len() as u64).to_le_bytes());
            out.extend_from_slice(id.as_bytes());
            offset += code.len();
        }
        for (_, code) in entries {
            out.extend_from_slice(code);
        }
        out
    }
}

#[cfg(test)]
mod test {
    use super::*;

    use super::test_support::bundle as build_bundle;

    fn ccob(version: u16, method: u16, payload: &[u8], uncompressed: usize) -> Vec<u8> {
        let mut out = CCOB_MAGIC.to_vec();
        out.extend_from_slice(&version.to_le_bytes());
        out.extend_from_slice(&method.to_le_bytes());
        match version {
            1 => out.extend_from_slice(&(uncompressed as u32).to_le_bytes()),
            2 => {
                out.extend_from_slice(&((24 + payload.len()) as u32).to_le_bytes());
                out.extend_from_slice(&(uncompressed as u32).to_le_bytes());
            }
            _ => {
                out.extend_from_slice(&((32 + payload.len()) as u64).to_le_bytes());
                out.extend_from_slice(&(uncompressed as u64).to_le_bytes());
            }
        }
        out.extend_from_slice(&0x0123_4567_89ab_cdefu64.to_le_bytes());
        out.extend_from_slice(payload);
        out
    }

    /// Grows a view over `data` the way a pointer-reading caller does.
    fn extent_by_steps(data: &[u8]) -> Result<Extent> {
        let mut seen = 0;
        loop {
            match image_extent(&data[..seen.min(data.len())])? {
                Extent::NeedMore(n) => {
                    assert!(n > seen, "NeedMore must grow the view ({seen} -> {n})");
                    if n > data.len() {
                        return Err(FatbinError::Truncated { what: "test image", need: n as u64, have: data.len() });
                    }
                    seen = n;
                }
                done => return Ok(done),
            }
        }
    }

    const CODE_A: &[u8] = b"\x7fELF-code-for-gfx90a";
    const CODE_B: &[u8] = b"\x7fELF-code-for-gfx1030";

    fn two_arch_bundle() -> Vec<u8> {
        build_bundle(&[
            ("host-x86_64-unknown-linux", b""),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", CODE_A),
            ("hipv4-amdgcn-amd-amdhsa--gfx1030", CODE_B),
        ])
    }

    #[test]
    fn test_wrapper() {
        let mut raw = [0xa5u8; 24];
        raw[..4].copy_from_slice(b"FPIH");
        raw[4..8].copy_from_slice(&1u32.to_le_bytes());
        raw[8..16].copy_from_slice(&0x3000u64.to_le_bytes());
        assert_eq!(Wrapper::parse(&raw), Ok(Wrapper { binary: 0x3000 }));
        raw[4] = 2;
        assert_eq!(Wrapper::parse(&raw), Err(FatbinError::UnsupportedVersion { what: "HIP fat binary wrapper", version: 2 }));
        raw[0] = b'X';
        assert!(matches!(Wrapper::parse(&raw), Err(FatbinError::BadMagic { .. })));
        assert!(matches!(Wrapper::parse(&raw[..23]), Err(FatbinError::Truncated { .. })));
    }

    #[test]
    fn test_bundle_parse_and_extent() {
        let data = two_arch_bundle();
        let bundle = Bundle::parse(&data).unwrap();
        assert_eq!(bundle.entries().len(), 3);
        assert_eq!(bundle.entries()[1].code, CODE_A);
        assert_eq!(bundle.entries()[2].id, "hipv4-amdgcn-amd-amdhsa--gfx1030");
        assert_eq!(extent_by_steps(&data), Ok(Extent::Complete(data.len())));
        // Trailing bytes (the next bundle in .hip_fatbin) are not part of it.
        let mut padded = data.clone();
        padded.extend_from_slice(&[0; 4096]);
        assert_eq!(extent_by_steps(&padded), Ok(Extent::Complete(data.len())));
        assert_eq!(classify(&data), Ok(ImageKind::Bundle));
    }

    #[test]
    fn test_bundle_hostile() {
        let data = two_arch_bundle();
        // Every truncation is an error, never a panic.
        for n in 0..data.len() {
            assert!(Bundle::parse(&data[..n]).is_err(), "prefix {n} parsed");
        }
        // Entry count far beyond the data.
        let mut bad = data.clone();
        bad[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(Bundle::parse(&bad), Err(FatbinError::TooLarge { .. })));
        assert!(matches!(image_extent(&bad), Err(FatbinError::TooLarge { .. })));
        bad[24..32].copy_from_slice(&100u64.to_le_bytes());
        assert!(Bundle::parse(&bad).is_err());
        // An entry whose offset + size overflows.
        let mut bad = data.clone();
        bad[32..40].copy_from_slice(&u64::MAX.to_le_bytes());
        bad[40..48].copy_from_slice(&2u64.to_le_bytes());
        assert!(Bundle::parse(&bad).is_err());
        assert!(image_extent(&bad).is_err());
        // An id length that overflows.
        let mut bad = data.clone();
        bad[48..56].copy_from_slice(&(u64::MAX - 10).to_le_bytes());
        assert!(Bundle::parse(&bad).is_err());
        assert!(image_extent(&bad).is_err());
        // A non-UTF-8 id.
        let mut bad = data.clone();
        bad[56] = 0xff;
        assert_eq!(Bundle::parse(&bad), Err(FatbinError::BadEntryId));
        // Every single-byte corruption of the header area is handled.
        for i in 0..200.min(data.len()) {
            for v in [0u8, 0x7f, 0xff] {
                let mut bad = data.clone();
                bad[i] = v;
                let _ = Bundle::parse(&bad);
                let _ = image_extent(&bad);
                let _ = decompress(&bad);
            }
        }
    }

    #[test]
    fn test_target_ids() {
        let t = TargetId::parse("hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-").unwrap();
        assert_eq!((t.kind, t.arch, t.target.processor), ("hipv4", "amdgcn", "gfx90a"));
        assert_eq!(t.target.features, vec![("sramecc", true), ("xnack", false)]);
        assert!(t.is_hip_gpu());
        let t = TargetId::parse("hip-amdgcn-amd-amdhsa-gfx906:xnack-").unwrap();
        assert_eq!((t.kind, t.target.text), ("hip", "gfx906:xnack-"));
        let t = TargetId::parse("host-x86_64-unknown-linux-gnu").unwrap();
        assert_eq!((t.kind, t.arch, t.target.processor), ("host", "x86_64", ""));
        assert!(!t.is_hip_gpu());
        assert!(TargetId::parse("nodash").is_none());
        assert!(TargetId::parse("hip-amdgcn").is_none());
    }

    #[test]
    fn test_compatibility() {
        let dev = Arch::parse("gfx90a:sramecc+:xnack-");
        assert_eq!(compatibility(&Arch::parse("gfx90a"), &dev), Some(1000));
        assert_eq!(compatibility(&Arch::parse("gfx90a:xnack-"), &dev), Some(1001));
        assert_eq!(compatibility(&Arch::parse("gfx90a:sramecc+:xnack-"), &dev), Some(1002));
        assert_eq!(compatibility(&Arch::parse("gfx90a:xnack+"), &dev), None);
        assert_eq!(compatibility(&Arch::parse("gfx908"), &dev), None);
        assert_eq!(compatibility(&Arch::parse("gfx10-3-generic"), &Arch::parse("gfx1031")), Some(500));
        assert_eq!(compatibility(&Arch::parse("gfx10-3-generic"), &Arch::parse("gfx90a")), None);
        assert_eq!(compatibility(&Arch::parse("gfx90a"), &Arch::parse("host")), None);
    }

    #[test]
    fn test_select() {
        let data = build_bundle(&[
            ("host-x86_64-unknown-linux", b""),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a", b"any"),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", b"xnack-off"),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", b"xnack-on"),
            ("hipv4-amdgcn-amd-amdhsa--gfx1030", b"rdna2"),
        ]);
        let bundle = Bundle::parse(&data).unwrap();
        assert_eq!(select(&bundle, "gfx90a:sramecc+:xnack-").unwrap().code, b"xnack-off");
        assert_eq!(select(&bundle, "gfx90a:sramecc+:xnack+").unwrap().code, b"xnack-on");
        assert_eq!(select(&bundle, "gfx90a").unwrap().code, b"any");
        assert_eq!(select(&bundle, "gfx1030").unwrap().code, b"rdna2");
        let miss = select(&bundle, "gfx942:sramecc+:xnack-").unwrap_err();
        assert_eq!(miss.available, ["gfx90a", "gfx90a:xnack-", "gfx90a:xnack+", "gfx1030"]);
        let text = miss.to_string();
        assert!(text.contains("'gfx942:sramecc+:xnack-'") && text.contains("gfx1030"), "{text}");
        assert!(!text.contains("host backend"));
        let host = select(&bundle, "host").unwrap_err().to_string();
        assert!(host.contains("'host'") && host.contains("can never run there") && host.contains("gfx90a"), "{host}");
    }

    #[test]
    fn test_ccob_zlib_all_versions() {
        let plain = two_arch_bundle();
        let z = miniz_oxide::deflate::compress_to_vec_zlib(&plain, 6);
        for version in 1..=3 {
            let c = ccob(version, 0, &z, plain.len());
            assert_eq!(classify(&c), Ok(ImageKind::CompressedBundle));
            assert_eq!(decompress(&c).unwrap().as_ref(), plain.as_slice(), "v{version}");
            let want = if version == 1 { Extent::Unsized } else { Extent::Complete(c.len()) };
            assert_eq!(extent_by_steps(&c), Ok(want));
            // Trailing bytes after the stream are ignored.
            let mut trailing = c.clone();
            trailing.extend_from_slice(&[0xa5; 64]);
            assert_eq!(decompress(&trailing).unwrap().as_ref(), plain.as_slice());
            // A header that promises another size is refused.
            let wrong = ccob(version, 0, &z, plain.len() - 1);
            assert!(matches!(decompress(&wrong), Err(FatbinError::Decompress { .. })));
            let wrong = ccob(version, 0, &z, plain.len() + 1);
            assert!(matches!(decompress(&wrong), Err(FatbinError::Decompress { .. })));
            for n in 0..c.len() {
                let _ = decompress(&c[..n]);
                let _ = image_extent(&c[..n]);
            }
        }
    }

    #[test]
    fn test_ccob_hostile_headers() {
        let plain = two_arch_bundle();
        let z = miniz_oxide::deflate::compress_to_vec_zlib(&plain, 6);
        let mut c = ccob(3, 0, &z, plain.len());
        c[6] = 7; // method
        assert_eq!(decompress(&c), Err(FatbinError::UnsupportedCompression { method: 7 }));
        let mut c = ccob(3, 0, &z, plain.len());
        c[4] = 9; // version
        assert!(matches!(decompress(&c), Err(FatbinError::UnsupportedVersion { .. })));
        let mut c = ccob(3, 0, &z, plain.len());
        c[8..16].copy_from_slice(&u64::MAX.to_le_bytes()); // total size
        assert!(matches!(decompress(&c), Err(FatbinError::TooLarge { .. })));
        assert!(matches!(image_extent(&c), Err(FatbinError::TooLarge { .. })));
        let mut c = ccob(3, 0, &z, plain.len());
        c[8..16].copy_from_slice(&4u64.to_le_bytes()); // total below the header
        assert!(decompress(&c).is_err());
        let mut c = ccob(3, 0, &z, plain.len());
        c[16..24].copy_from_slice(&u64::MAX.to_le_bytes()); // uncompressed size
        assert!(matches!(decompress(&c), Err(FatbinError::TooLarge { .. })));
        // Garbage payloads for both methods.
        for method in [0, 1] {
            let c = ccob(2, method, &[0xa5; 100], 1000);
            assert!(matches!(decompress(&c), Err(FatbinError::Decompress { .. })), "method {method}");
        }
    }

    /// A zstd frame of one compressed block whose literals' Huffman weights are FSE-coded
    /// with a table of `1 << accuracy_log` entries (the format allows at most 6).
    fn zstd_huffman_weights_table(accuracy_log: u8) -> Vec<u8> {
        let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd]; // magic
        frame.extend_from_slice(&[0x20, 16]); // single segment, content size 16
        let weights = [[(accuracy_log - 5) | 0xf0].as_slice(), &[0xff; 7]].concat();
        // Compressed literals, one stream: 16 regenerated bytes, then the tree description
        // (its size byte, the FSE-coded weights) and a few stream bytes.
        let compressed = 1 + weights.len() + 4;
        let literals_header = 2 | (16 << 4) | (compressed << 14);
        let mut block = literals_header.to_le_bytes()[..3].to_vec();
        block.push(weights.len() as u8);
        block.extend_from_slice(&weights);
        block.extend_from_slice(&[0xff; 4]);
        block.push(0); // no sequences
        let block_header = 1 | (2 << 1) | (block.len() << 3); // last, compressed
        frame.extend_from_slice(&block_header.to_le_bytes()[..3]);
        frame.extend_from_slice(&block);
        frame
    }

    #[test]
    fn test_ccob_zstd_huffman_weight_table_bounded() {
        // A table of 2^20 entries to build per block would let a small image cost the
        // worker seconds of CPU: refused up front as the format's limit (6) says.
        let c = ccob(3, 1, &zstd_huffman_weights_table(20), 16);
        let Err(FatbinError::Decompress { reason }) = decompress(&c) else { panic!("a 2^20-entry Huffman weight table was decoded") };
        assert!(reason.contains("AccLogTooBig { got: 20, max: 6 }"), "{reason}");
    }

    fn elf(segments: &[(u64, u64)], sections: &[(u32, u64, u64)], phoff: u64, shoff: u64) -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(ELF_MAGIC);
        h[4] = 2;
        h[5] = 1;
        h[18..20].copy_from_slice(&EM_AMDGPU.to_le_bytes());
        h[32..40].copy_from_slice(&phoff.to_le_bytes());
        h[40..48].copy_from_slice(&shoff.to_le_bytes());
        h[54..56].copy_from_slice(&56u16.to_le_bytes());
        h[56..58].copy_from_slice(&(segments.len() as u16).to_le_bytes());
        h[58..60].copy_from_slice(&64u16.to_le_bytes());
        h[60..62].copy_from_slice(&(sections.len() as u16).to_le_bytes());
        let mut out = h;
        let grow = |out: &mut Vec<u8>, len: usize| {
            if out.len() < len {
                out.resize(len, 0);
            }
        };
        for (i, &(offset, filesz)) in segments.iter().enumerate() {
            let at = phoff as usize + i * 56;
            grow(&mut out, at + 56);
            out[at + 8..at + 16].copy_from_slice(&offset.to_le_bytes());
            out[at + 32..at + 40].copy_from_slice(&filesz.to_le_bytes());
        }
        for (i, &(ty, offset, size)) in sections.iter().enumerate() {
            let at = shoff as usize + i * 64;
            grow(&mut out, at + 64);
            out[at + 4..at + 8].copy_from_slice(&ty.to_le_bytes());
            out[at + 24..at + 32].copy_from_slice(&offset.to_le_bytes());
            out[at + 32..at + 40].copy_from_slice(&size.to_le_bytes());
        }
        out
    }

    #[test]
    fn test_elf_extent() {
        // Section headers at the end (the usual layout): the image ends with them.
        let image = elf(&[(0, 0x400)], &[(0, 0, 0), (1, 0x400, 0x100), (SHT_NOBITS, 0x500, 0x10000)], 64, 0x500);
        assert_eq!(classify(&image), Ok(ImageKind::Elf { machine: EM_AMDGPU }));
        assert_eq!(extent_by_steps(&image), Ok(Extent::Complete(0x500 + 3 * 64)));
        // A section after the headers extends the image; NOBITS ones do not.
        let mut image = elf(&[], &[(1, 0x1000, 0x80), (SHT_NOBITS, 0x2000, 0x1000)], 0, 64);
        image.resize(0x1080, 0);
        assert_eq!(extent_by_steps(&image), Ok(Extent::Complete(0x1080)));
        // 32-bit or big-endian images are refused; overflowing tables too.
        let mut bad = image.clone();
        bad[4] = 1;
        assert!(matches!(image_extent(&bad), Err(FatbinError::UnsupportedElf { .. })));
        let mut bad = image.clone();
        bad[40..48].copy_from_slice(&(u64::MAX - 8).to_le_bytes());
        assert!(image_extent(&bad).is_err());
        let mut bad = image.clone();
        bad[24 + 64..32 + 64].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(image_extent(&bad).is_err());
        for n in 0..image.len().min(300) {
            let _ = image_extent(&image[..n]);
        }
    }
}
