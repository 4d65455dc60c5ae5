//! The kernel names an image holds, read where the client loads it, so that
//! `hipModuleGetFunction` can answer `hipErrorNotFound` for a name the image lacks without
//! asking the worker, and post the lookup of a name it holds.
//!
//! | image | where the names are | parameter layouts |
//! |---|---|---|
//! | AMDGPU code object | its metadata note's `amdhsa.kernels` (`.name`) | yes ([`crate::metadata`]) |
//! | PTX | each `.entry NAME` (comments and strings skipped) | no |
//! | cubin (`EM_CUDA`) | `.symtab` functions marked `STO_CUDA_ENTRY` | no |
//! | host module | the note hip-remote's worker writes into what its hiprtc and linker return ([`annotate_host_module`]) | yes (the note's) |
//!
//! Offload bundles and fat binaries are read through the entry the device runs (the caller
//! picks it). Anything else (an NVIDIA fatbin, a host module written by hand, whose kernel
//! table a constructor may fill) is [`Unreadable`]: the caller asks the worker.
//!
//! Each reader answers [`Presence::Absent`] only where its format makes that certain; a
//! name it cannot classify (a cubin function without the entry mark) is
//! [`Presence::Unknown`]. Every count and length is bounded by a named limit before anything
//! is allocated for it.

use crate::fatbin::{self, ElfHeader, ElfShdr as SectionHeader, ImageKind, EM_AMDGPU, EM_CUDA, MAX_IMAGE_LEN};
use crate::metadata;
use std::collections::{HashMap, HashSet};
use std::fmt;
use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// Owner of the note listing a host module's kernels (`"hip-remote"`, NUL-terminated in the
/// note's name field).
pub const HOST_NOTE_OWNER: &[u8] = b"hip-remote";
/// Type of that note: the kernel names, each NUL-terminated, in table order.
pub const NT_HIP_REMOTE_KERNELS: u32 = 1;
/// Most kernels one image may list (as many as a code object's metadata may hold).
pub const MAX_LISTED_KERNELS: usize = metadata::MAX_KERNELS;
/// Longest kernel name read (as in code object metadata).
pub const MAX_NAME_LEN: usize = metadata::MAX_NAME_LEN;
/// Most symbols of a cubin's symbol table looked at.
pub const MAX_SYMBOLS: u64 = 1 << 20;
/// Most section headers walked in one ELF image.
pub const MAX_SECTIONS: u64 = fatbin::MAX_ELF_HEADERS;
/// Most parameters of one kernel in a host module's note (as in code object metadata).
pub const MAX_NOTED_PARAMS: usize = metadata::MAX_KERNEL_ARGS;
/// Largest host-module kernel note read or written: 16 MiB.
pub const MAX_NOTE_LEN: u64 = 16 << 20;

/// `st_other` bit of a cubin's kernel (`__global__`) symbols.
pub const STO_CUDA_ENTRY: u8 = 0x10;

const SHT_SYMTAB: u32 = 2;
const SHT_NOTE: u32 = 7;
const STT_FUNC: u8 = 2;
/// First reserved section index: at or above it `e_shnum` lives in section header 0.
const SHN_LORESERVE: u16 = 0xff00;

/// Whether an image holds a kernel of some name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// It does: a lookup of it succeeds on the worker.
    Present,
    /// It does not: `hipModuleGetFunction` answers `hipErrorNotFound`.
    Absent,
    /// The image does not tell; ask the worker.
    Unknown,
}

/// Why an image's kernel names could not be read (the caller then asks the worker).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable(pub String);

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kernel names unreadable: {}", self.0)
    }
}

impl std::error::Error for Unreadable {}

type Result<T> = std::result::Result<T, Unreadable>;

fn unreadable(why: impl fmt::Display) -> Unreadable {
    Unreadable(why.to_string())
}

/// The kernels of one image.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelNames {
    /// Each kernel's name and, where the image records it, its parameters' `(offset, size)`
    /// in declaration order.
    kernels: HashMap<String, Option<Vec<(u32, u32)>>>,
    /// Names the reader saw but cannot classify: [`Presence::Unknown`].
    undecided: HashSet<String>,
}

impl KernelNames {
    /// Whether the image holds a kernel `name`.
    pub fn presence(&self, name: &str) -> Presence {
        if self.kernels.contains_key(name) {
            Presence::Present
        } else if self.undecided.contains(name) {
            Presence::Unknown
        } else {
            Presence::Absent
        }
    }

    /// The parameter layout of kernel `name`, where the image records it.
    pub fn params(&self, name: &str) -> Option<&[(u32, u32)]> {
        self.kernels.get(name)?.as_deref()
    }

    /// How many kernels the image holds.
    pub fn len(&self) -> usize {
        self.kernels.len()
    }

    /// Whether the image holds no kernel.
    pub fn is_empty(&self) -> bool {
        self.kernels.is_empty()
    }

    /// The kernel names, in no particular order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.kernels.keys().map(String::as_str)
    }

    fn add(&mut self, name: String, params: Option<Vec<(u32, u32)>>) -> Result<()> {
        if name.len() > MAX_NAME_LEN {
            return Err(unreadable(format!("a kernel name of {} bytes (limit {MAX_NAME_LEN})", name.len())));
        }
        if !self.kernels.contains_key(&name) && self.kernels.len() >= MAX_LISTED_KERNELS {
            return Err(unreadable(format!("more than {MAX_LISTED_KERNELS} kernels")));
        }
        self.kernels.insert(name, params);
        Ok(())
    }
}

/// The kernels of a code object, PTX text, cubin or host module, by its own magic (bundles
/// and fat binaries: read the entry the device runs).
pub fn read(image: &[u8]) -> Result<KernelNames> {
    if image.len() > MAX_IMAGE_LEN {
        return Err(unreadable(format!("an image of {} bytes (limit {MAX_IMAGE_LEN})", image.len())));
    }
    match fatbin::classify(image).map_err(unreadable)? {
        ImageKind::Elf { machine: EM_AMDGPU } => from_code_object(image),
        ImageKind::Elf { machine: EM_CUDA } => from_cubin(image),
        ImageKind::Elf { .. } => from_host_module(image),
        ImageKind::Ptx => from_ptx(image),
        other => Err(unreadable(format!("a {other:?} image: read the entry the device runs"))),
    }
}

/// An AMDGPU code object's kernels and their parameter layouts, from its metadata note.
pub fn from_code_object(code_object: &[u8]) -> Result<KernelNames> {
    // The ELF reader wants its input 8-byte aligned; an image handed over as a pointer may
    // sit anywhere.
    let mut aligned = Vec::new();
    let code_object = if code_object.as_ptr().align_offset(8) == 0 {
        code_object
    } else {
        aligned.resize(code_object.len().div_ceil(8), 0u64);
        let bytes = &mut aligned.as_mut_bytes()[..code_object.len()];
        bytes.copy_from_slice(code_object);
        bytes
    };
    let meta = metadata::parse(code_object).map_err(unreadable)?;
    let mut names = KernelNames::default();
    for k in meta.kernels {
        let params: Vec<(u32, u32)> = k.params.iter().map(|p| (p.offset, p.size)).collect();
        // A descriptor symbol other than `name.kd` (no compiler emits one): whether a lookup
        // by it succeeds is the runtime's affair, so it is asked.
        if let Some(symbol) = k.symbol.strip_suffix(".kd").filter(|s| *s != k.name) {
            if names.undecided.len() < MAX_LISTED_KERNELS {
                names.undecided.insert(symbol.to_string());
            }
        }
        names.add(k.name, Some(params))?;
    }
    for name in names.kernels.keys() {
        names.undecided.remove(name);
    }
    Ok(names)
}

/// The `.entry` functions of PTX text (up to its first NUL). `.func` functions are not
/// kernels: `cuModuleGetFunction` does not find them.
pub fn from_ptx(ptx: &[u8]) -> Result<KernelNames> {
    let text = ptx.split(|&b| b == 0).next().unwrap_or_default();
    let text = std::str::from_utf8(text).map_err(|_| unreadable("PTX text is not UTF-8"))?;
    let mut names = KernelNames::default();
    let mut tokens = PtxTokens { rest: text };
    while let Some(token) = tokens.next() {
        if token != ".entry" {
            continue;
        }
        match tokens.next() {
            Some(name) if is_ptx_identifier(name) => names.add(name.to_string(), None)?,
            other => return Err(unreadable(format!("PTX `.entry` followed by {other:?}, not a name"))),
        }
    }
    Ok(names)
}

/// PTX split into identifiers, directives and single punctuation characters, with comments
/// and string literals left out.
struct PtxTokens<'a> {
    rest: &'a str,
}

impl<'a> Iterator for PtxTokens<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        loop {
            self.rest = self.rest.trim_start();
            if let Some(after) = self.rest.strip_prefix("//") {
                self.rest = after.find('\n').map_or("", |i| &after[i..]);
            } else if let Some(after) = self.rest.strip_prefix("/*") {
                self.rest = after.find("*/").map_or("", |i| &after[i + 2..]);
            } else if let Some(after) = self.rest.strip_prefix('"') {
                self.rest = after.find(['"', '\n']).map_or("", |i| &after[i + 1..]);
            } else {
                break;
            }
        }
        let c = self.rest.chars().next()?;
        let len = if is_ptx_word_char(c) { self.rest.find(|c| !is_ptx_word_char(c)).unwrap_or(self.rest.len()) } else { c.len_utf8() };
        let (token, rest) = self.rest.split_at(len);
        self.rest = rest;
        Some(token)
    }
}

fn is_ptx_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%' | '.')
}

/// A PTX identifier: `[a-zA-Z_$%][a-zA-Z0-9_$]*` (PTX ISA, "Identifiers"), or `[_$%][a-zA-Z0-9_$]+`.
fn is_ptx_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, '_' | '$' | '%'))
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$'))
}

// ------------------------------------------------------------------------------------------------
// ELF: section headers, cubin symbols, the host module note
// ------------------------------------------------------------------------------------------------

#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct Symbol {
    name: U32,
    info: u8,
    other: u8,
    shndx: U16,
    value: U64,
    size: U64,
}

#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct NoteHeader {
    namesz: U32,
    descsz: U32,
    n_type: U32,
}

const ELF_HEADER_LEN: usize = 64;
const SECTION_HEADER_LEN: usize = 64;
const SYMBOL_LEN: usize = 24;
const NOTE_HEADER_LEN: usize = 12;

const _: () = {
    assert!(size_of::<ElfHeader>() == ELF_HEADER_LEN);
    assert!(size_of::<SectionHeader>() == SECTION_HEADER_LEN);
    assert!(size_of::<Symbol>() == SYMBOL_LEN);
    assert!(size_of::<NoteHeader>() == NOTE_HEADER_LEN);
};

/// `data[at..at + len]`, or why not.
fn slice<'a>(data: &'a [u8], at: u64, len: u64, what: &str) -> Result<&'a [u8]> {
    let end = at.checked_add(len).ok_or_else(|| unreadable(format!("{what}: offset overflows")))?;
    usize::try_from(at)
        .ok()
        .zip(usize::try_from(end).ok())
        .and_then(|(start, end)| data.get(start..end))
        .ok_or_else(|| unreadable(format!("{what} (bytes {at}..{end}) lies past the image's {} bytes", data.len())))
}

fn read_at<'a, T: FromBytes + KnownLayout + Immutable + Unaligned>(data: &'a [u8], at: u64, what: &str) -> Result<&'a T> {
    let bytes = slice(data, at, size_of::<T>() as u64, what)?;
    T::ref_from_bytes(bytes).map_err(|_| unreadable(format!("{what}: misread")))
}

/// The ELF header of a 64-bit little-endian image and its section headers.
fn sections(data: &[u8]) -> Result<(&ElfHeader, Vec<&SectionHeader>)> {
    let header: &ElfHeader = read_at(data, 0, "ELF header")?;
    if header.ident[..4] != fatbin::ELF_MAGIC[..] || header.ident[4] != 2 || header.ident[5] != 1 {
        return Err(unreadable("not a 64-bit little-endian ELF image"));
    }
    let shoff = header.shoff.get();
    if shoff == 0 {
        return Ok((header, Vec::new()));
    }
    if usize::from(header.shentsize.get()) != SECTION_HEADER_LEN {
        return Err(unreadable(format!("ELF section headers of {} bytes, not {SECTION_HEADER_LEN}", header.shentsize.get())));
    }
    let mut count = u64::from(header.shnum.get());
    if count == 0 {
        // Extended numbering: the count lives in section header 0.
        count = read_at::<SectionHeader>(data, shoff, "ELF section header 0")?.size.get();
    }
    if count > MAX_SECTIONS {
        return Err(unreadable(format!("{count} ELF sections (limit {MAX_SECTIONS})")));
    }
    slice(data, shoff, count * SECTION_HEADER_LEN as u64, "ELF section headers")?;
    let headers = (0..count).map(|i| read_at(data, shoff + i * SECTION_HEADER_LEN as u64, "ELF section header")).collect::<Result<_>>()?;
    Ok((header, headers))
}

/// The NUL-terminated string at `at` in `table`, at most [`MAX_NAME_LEN`] bytes.
fn string_at(table: &[u8], at: u32) -> Result<&str> {
    let tail = table.get(at as usize..).ok_or_else(|| unreadable("a symbol name lies past its string table"))?;
    let tail = &tail[..tail.len().min(MAX_NAME_LEN + 1)];
    let end =
        tail.iter().position(|&b| b == 0).ok_or_else(|| unreadable(format!("a symbol name longer than {MAX_NAME_LEN} bytes, or unterminated")))?;
    std::str::from_utf8(&tail[..end]).map_err(|_| unreadable("a symbol name is not UTF-8"))
}

/// A cubin's kernels: the functions of its symbol table marked [`STO_CUDA_ENTRY`]. Other
/// functions are [`Presence::Unknown`] (a toolkit that did not mark its entries), names that
/// are no function [`Presence::Absent`].
pub fn from_cubin(cubin: &[u8]) -> Result<KernelNames> {
    let (_, headers) = sections(cubin)?;
    let mut names = KernelNames::default();
    let mut symbols_seen = 0u64;
    let mut tables = 0;
    for table in headers.iter().filter(|h| h.sh_type.get() == SHT_SYMTAB) {
        tables += 1;
        let strings = headers.get(table.link.get() as usize).ok_or_else(|| unreadable("a symbol table links to no string table"))?;
        let strings = slice(cubin, strings.offset.get(), strings.size.get(), "symbol string table")?;
        let count = table.size.get() / SYMBOL_LEN as u64;
        symbols_seen += count;
        if symbols_seen > MAX_SYMBOLS {
            return Err(unreadable(format!("more than {MAX_SYMBOLS} symbols")));
        }
        slice(cubin, table.offset.get(), count * SYMBOL_LEN as u64, "symbol table")?;
        for i in 0..count {
            let sym: &Symbol = read_at(cubin, table.offset.get() + i * SYMBOL_LEN as u64, "symbol")?;
            if sym.info & 0xf != STT_FUNC || sym.shndx.get() == 0 {
                continue;
            }
            let name = string_at(strings, sym.name.get())?;
            if sym.other & STO_CUDA_ENTRY != 0 {
                names.undecided.remove(name);
                names.add(name.to_string(), None)?;
            } else if !names.kernels.contains_key(name) && names.undecided.len() < MAX_SYMBOLS as usize {
                names.undecided.insert(name.to_string());
            }
        }
    }
    if tables == 0 {
        return Err(unreadable("a cubin without a symbol table"));
    }
    Ok(names)
}

/// A host module's kernels, from the note [`annotate_host_module`] wrote; a module without
/// it (written by hand: a constructor may fill its table) is [`Unreadable`].
pub fn from_host_module(module: &[u8]) -> Result<KernelNames> {
    let (_, headers) = sections(module)?;
    for note in headers.iter().filter(|h| h.sh_type.get() == SHT_NOTE) {
        if note.size.get() > MAX_NOTE_LEN {
            continue;
        }
        let mut notes = slice(module, note.offset.get(), note.size.get(), "ELF note section")?;
        while notes.len() >= NOTE_HEADER_LEN {
            let head: &NoteHeader = read_at(notes, 0, "ELF note")?;
            let (name_len, desc_len) = (u64::from(head.namesz.get()), u64::from(head.descsz.get()));
            let name = slice(notes, NOTE_HEADER_LEN as u64, name_len, "ELF note name")?;
            let desc_at = NOTE_HEADER_LEN as u64 + name_len.next_multiple_of(4);
            let desc = slice(notes, desc_at, desc_len, "ELF note descriptor")?;
            if name.strip_suffix(b"\0") == Some(HOST_NOTE_OWNER) && head.n_type.get() == NT_HIP_REMOTE_KERNELS {
                return kernel_note(desc);
            }
            let next = (desc_at + desc_len.next_multiple_of(4)).min(notes.len() as u64);
            notes = &notes[next as usize..];
        }
    }
    Err(unreadable("a host module without hip-remote's kernel note (one written by hand may fill its table in a constructor)"))
}

/// The note's descriptor: per kernel, its name and a NUL, a `u32` parameter count, then that
/// many `(u32 offset, u32 size)` pairs, all little-endian and unaligned.
fn kernel_note(desc: &[u8]) -> Result<KernelNames> {
    let mut names = KernelNames::default();
    let mut rest = desc;
    let take_u32 = |rest: &mut &[u8]| -> Result<u32> {
        let (word, tail) = rest.split_first_chunk::<4>().ok_or_else(|| unreadable("the kernel note ends inside a number"))?;
        *rest = tail;
        Ok(u32::from_le_bytes(*word))
    };
    while !rest.is_empty() {
        let end = rest
            .iter()
            .take(MAX_NAME_LEN + 1)
            .position(|&b| b == 0)
            .ok_or_else(|| unreadable("a kernel name in the note is unterminated or too long"))?;
        let name = std::str::from_utf8(&rest[..end]).map_err(|_| unreadable("a kernel name in the note is not UTF-8"))?;
        if name.is_empty() {
            return Err(unreadable("an empty kernel name in the note"));
        }
        rest = &rest[end + 1..];
        let count = take_u32(&mut rest)? as usize;
        if count > MAX_NOTED_PARAMS || count * 8 > rest.len() {
            return Err(unreadable(format!("kernel {name}: {count} parameters (limit {MAX_NOTED_PARAMS}, or past the note's end)")));
        }
        let params = (0..count).map(|_| Ok((take_u32(&mut rest)?, take_u32(&mut rest)?))).collect::<Result<Vec<_>>>()?;
        names.add(name.to_string(), Some(params))?;
    }
    Ok(names)
}

/// `module` (a host module: an ELF64 little-endian shared object) with a note listing
/// `kernels`, each `(name, parameters' (offset, size))` as its table holds them once loaded,
/// for [`from_host_module`]: a non-allocated `SHT_NOTE` section appended with a copy of the
/// section headers. The loaded image is unchanged (no segment moves).
pub fn annotate_host_module(module: &[u8], kernels: &[(&str, &[(u32, u32)])]) -> Result<Vec<u8>> {
    if kernels.len() > MAX_LISTED_KERNELS {
        return Err(unreadable(format!("{} kernels (limit {MAX_LISTED_KERNELS})", kernels.len())));
    }
    if let Some((bad, _)) = kernels.iter().find(|(k, _)| k.is_empty() || k.len() > MAX_NAME_LEN || k.contains('\0')) {
        return Err(unreadable(format!("kernel name {bad:?} cannot be listed")));
    }
    if let Some((name, params)) = kernels.iter().find(|(_, p)| p.len() > MAX_NOTED_PARAMS) {
        return Err(unreadable(format!("kernel {name}: {} parameters (limit {MAX_NOTED_PARAMS})", params.len())));
    }
    let (header, headers) = sections(module)?;
    let count = headers.len();
    if count == 0 || count + 1 >= usize::from(SHN_LORESERVE) || header.shnum.get() == 0 {
        return Err(unreadable(format!("{count} section headers: no room for one more without extended numbering")));
    }
    if from_host_module(module).is_ok() {
        return Err(unreadable("the module already carries a kernel note"));
    }
    let mut desc = Vec::new();
    for (name, params) in kernels {
        desc.extend_from_slice(name.as_bytes());
        desc.push(0);
        desc.extend_from_slice(&(params.len() as u32).to_le_bytes());
        for (offset, size) in *params {
            desc.extend_from_slice(&offset.to_le_bytes());
            desc.extend_from_slice(&size.to_le_bytes());
        }
    }
    let owner: Vec<u8> = HOST_NOTE_OWNER.iter().copied().chain([0]).collect();
    let note_len = NOTE_HEADER_LEN + owner.len().next_multiple_of(4) + desc.len().next_multiple_of(4);
    if note_len as u64 > MAX_NOTE_LEN {
        return Err(unreadable(format!("a kernel note of {note_len} bytes (limit {MAX_NOTE_LEN})")));
    }
    let mut out = Vec::with_capacity(module.len() + 8 + note_len + 8 + (count + 1) * SECTION_HEADER_LEN);
    out.extend_from_slice(module);
    let pad = |out: &mut Vec<u8>, to: usize| out.resize(out.len().next_multiple_of(to), 0);
    pad(&mut out, 8);
    let note_at = out.len();
    let head = NoteHeader { namesz: U32::new(owner.len() as u32), descsz: U32::new(desc.len() as u32), n_type: U32::new(NT_HIP_REMOTE_KERNELS) };
    out.extend_from_slice(head.as_bytes());
    out.extend_from_slice(&owner);
    pad(&mut out, 4);
    out.extend_from_slice(&desc);
    pad(&mut out, 8);
    let shoff = out.len();
    for h in &headers {
        out.extend_from_slice(h.as_bytes());
    }
    let note = SectionHeader {
        name: U32::new(0),
        sh_type: U32::new(SHT_NOTE),
        flags: U64::new(0),
        addr: U64::new(0),
        offset: U64::new(note_at as u64),
        size: U64::new((NOTE_HEADER_LEN + owner.len().next_multiple_of(4) + desc.len()) as u64),
        link: U32::new(0),
        info: U32::new(0),
        addralign: U64::new(4),
        entsize: U64::new(0),
    };
    out.extend_from_slice(note.as_bytes());
    let patched = ElfHeader::mut_from_bytes(&mut out[..ELF_HEADER_LEN]).map_err(|_| unreadable("ELF header"))?;
    patched.shoff = U64::new(shoff as u64);
    patched.shnum = U16::new((count + 1) as u16);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use zerocopy::FromZeros;

    const V4: &[u8] = include_bytes!("../testdata/mixed-gfx90a-v4.co");
    const V5: &[u8] = include_bytes!("../testdata/mixed-gfx1030-v5.co");

    #[test]
    fn code_object_kernels_and_layouts_come_from_the_metadata() {
        for co in [V4, V5] {
            let names = read(co).unwrap();
            assert_eq!(names.len(), 3);
            for k in ["mixed", "no_args", "tail_char"] {
                assert_eq!(names.presence(k), Presence::Present, "{k}");
            }
            assert_eq!(names.presence("nope"), Presence::Absent);
            assert_eq!(names.presence("mixed.kd"), Presence::Absent);
            // Wherever the bytes sit (an image handed over as a pointer).
            let mut shifted = vec![0u8; co.len() + 1];
            shifted[1..].copy_from_slice(co);
            assert_eq!(read(&shifted[1..]).unwrap(), names);
            // The oracle: the metadata reader's own layouts (checked against the C ABI in
            // tests/metadata.rs), on an 8-aligned copy as that reader needs.
            let mut aligned = vec![0u64; co.len().div_ceil(8)];
            aligned.as_mut_bytes()[..co.len()].copy_from_slice(co);
            for k in metadata::kernel_param_layouts(&aligned.as_bytes()[..co.len()]).unwrap() {
                let expected: Vec<(u32, u32)> = k.params.iter().map(|p| (p.offset, p.size)).collect();
                assert_eq!(names.params(&k.name), Some(&expected[..]), "{}", k.name);
            }
            assert_eq!(names.params("no_args"), Some(&[][..]));
        }
    }

    #[test]
    fn a_truncated_or_damaged_code_object_is_unreadable_not_empty() {
        for cut in [0, 3, 20, 64, V4.len() / 2, V4.len() - 1] {
            assert!(read(&V4[..cut]).is_err(), "cut at {cut}");
        }
        let mut bad = V4.to_vec();
        bad[0x28..0x30].copy_from_slice(&u64::MAX.to_le_bytes()); // e_shoff
        assert!(read(&bad).is_err());
    }

    const PTX: &str = r#"//
// Generated by NVIDIA NVVM Compiler
.version 8.0
.target sm_80
.address_size 64

	// .globl	vadd
.file 1 "/tmp/.entry fake.cu"
/* .entry also_fake( */
.func  (.param .b32 func_retval0) helper(.param .b32 helper_param_0)
{
	ret;
}
.visible .entry vadd(
	.param .u64 vadd_param_0
)
{
	ret;
}
.entry
	_Z5scalePfi   (
	.param .u64 _Z5scalePfi_param_0
)
{
	ret;
}
"#;

    #[test]
    fn ptx_entries_are_kernels_and_funcs_comments_strings_are_not() {
        let names = read(PTX.as_bytes()).unwrap();
        let mut listed: Vec<&str> = names.names().collect();
        listed.sort();
        assert_eq!(listed, ["_Z5scalePfi", "vadd"]);
        for absent in ["helper", "fake", "also_fake", "nope"] {
            assert_eq!(names.presence(absent), Presence::Absent, "{absent}");
        }
        // NUL-terminated as cuModuleLoadData takes it: the NUL ends the text.
        let mut with_nul = PTX.as_bytes().to_vec();
        with_nul.extend_from_slice(b"\0.entry after_nul(\n)");
        assert_eq!(read(&with_nul).unwrap(), names);
    }

    #[test]
    fn ptx_of_the_examples_lists_its_kernel() {
        let ptx = include_bytes!("../../examples/hello_hip/vadd.sm_80.ptx");
        let names = read(ptx).unwrap();
        assert!(!names.is_empty(), "{names:?}");
        assert!(String::from_utf8_lossy(ptx).contains(&format!(".entry {}", names.names().next().unwrap())));
    }

    #[test]
    fn damaged_ptx_is_unreadable() {
        assert!(from_ptx(b".version 8.0\n.entry (\n").is_err());
        assert!(from_ptx(b".version 8.0\n.entry").is_err());
        assert!(from_ptx(b".version 8.0\n.entry \xff\xfe(\n").is_err());
    }

    /// A minimal ELF64 image: header, the given sections (each `(type, link, bytes)`), their
    /// section headers at the end; section 0 is the null section.
    fn elf(machine: u16, sections: &[(u32, u32, &[u8])]) -> Vec<u8> {
        let mut out = vec![0u8; ELF_HEADER_LEN];
        let mut headers = vec![SectionHeader::new_zeroed()];
        for (sh_type, link, bytes) in sections {
            out.resize(out.len().next_multiple_of(8), 0);
            let mut h = SectionHeader::new_zeroed();
            h.sh_type = U32::new(*sh_type);
            h.link = U32::new(*link);
            h.offset = U64::new(out.len() as u64);
            h.size = U64::new(bytes.len() as u64);
            headers.push(h);
            out.extend_from_slice(bytes);
        }
        out.resize(out.len().next_multiple_of(8), 0);
        let shoff = out.len();
        for h in &headers {
            out.extend_from_slice(h.as_bytes());
        }
        let header = ElfHeader::mut_from_bytes(&mut out[..ELF_HEADER_LEN]).unwrap();
        header.ident[..4].copy_from_slice(fatbin::ELF_MAGIC);
        header.ident[4] = 2;
        header.ident[5] = 1;
        header.e_type = U16::new(3);
        header.machine = U16::new(machine);
        header.shoff = U64::new(shoff as u64);
        header.shentsize = U16::new(SECTION_HEADER_LEN as u16);
        header.shnum = U16::new(headers.len() as u16);
        out
    }

    /// A cubin: `symbols` as `(name, st_info type, st_other)`, all defined in section 1.
    fn cubin(symbols: &[(&str, u8, u8)]) -> Vec<u8> {
        let mut strings = vec![0u8];
        let mut table = vec![0u8; SYMBOL_LEN];
        for (name, kind, other) in symbols {
            let at = strings.len() as u32;
            strings.extend_from_slice(name.as_bytes());
            strings.push(0);
            table.extend_from_slice(&at.to_le_bytes());
            table.push(0x10 | kind); // STB_GLOBAL
            table.push(*other);
            table.extend_from_slice(&1u16.to_le_bytes());
            table.extend_from_slice(&[0; 16]);
        }
        elf(EM_CUDA, &[(1, 0, b"code"), (SHT_SYMTAB, 3, &table), (3, 0, &strings)])
    }

    #[test]
    fn cubin_entries_are_kernels_device_functions_undecided() {
        let image = cubin(&[("_Z4vaddPf", STT_FUNC, STO_CUDA_ENTRY), ("_Z6helperf", STT_FUNC, 0), ("table", 1, 0)]);
        let names = read(&image).unwrap();
        assert_eq!(names.presence("_Z4vaddPf"), Presence::Present);
        assert_eq!(names.presence("_Z6helperf"), Presence::Unknown);
        assert_eq!(names.presence("table"), Presence::Absent, "an object is no kernel");
        assert_eq!(names.presence("nope"), Presence::Absent);
        for cut in [10, 64, image.len() - 1] {
            assert!(read(&image[..cut]).is_err(), "cut at {cut}");
        }
        // No symbol table at all: nothing can be said.
        assert!(read(&elf(EM_CUDA, &[(1, 0, b"code")])).is_err());
    }

    #[test]
    fn hostile_cubin_counts_and_names_are_refused() {
        let image = cubin(&[("k", STT_FUNC, STO_CUDA_ENTRY)]);
        let shoff = u64::from_le_bytes(image[0x28..0x30].try_into().unwrap()) as usize;
        // A symbol table claiming 2^60 bytes.
        let mut huge = image.clone();
        let symtab = shoff + 2 * SECTION_HEADER_LEN;
        huge[symtab + 32..symtab + 40].copy_from_slice(&(1u64 << 60).to_le_bytes());
        assert!(read(&huge).is_err());
        // A name offset past the string table.
        let mut far = image.clone();
        let sym1 = u64::from_le_bytes(image[symtab + 24..symtab + 32].try_into().unwrap()) as usize + SYMBOL_LEN;
        far[sym1..sym1 + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(read(&far).is_err());
        // A section count beyond the limit.
        let mut many = image.clone();
        many[0x3c..0x3e].copy_from_slice(&0u16.to_le_bytes());
        many[shoff + 32..shoff + 40].copy_from_slice(&(MAX_SECTIONS + 1).to_le_bytes());
        assert!(read(&many).is_err());
    }

    fn host_module() -> Vec<u8> {
        elf(62, &[(1, 0, b"\x90\x90\xc3"), (3, 0, b"\0.text\0")])
    }

    #[test]
    fn a_host_module_lists_its_kernels_only_once_annotated() {
        let plain = host_module();
        assert!(read(&plain).is_err(), "a host module without the note is unreadable");
        let annotated = annotate_host_module(&plain, &[("scale", &[(0, 8), (8, 4)]), ("_Z4vaddPfS_", &[])]).unwrap();
        assert_eq!(&annotated[ELF_HEADER_LEN..plain.len()], &plain[ELF_HEADER_LEN..], "the original bytes are kept");
        let names = read(&annotated).unwrap();
        assert_eq!(names.presence("scale"), Presence::Present);
        assert_eq!(names.presence("_Z4vaddPfS_"), Presence::Present);
        assert_eq!(names.presence("vadd"), Presence::Absent);
        assert_eq!(names.params("scale"), Some(&[(0, 8), (8, 4)][..]));
        assert_eq!(names.params("_Z4vaddPfS_"), Some(&[][..]));
        // Its extent, as a pointer-reading client learns it, covers the note.
        assert_eq!(fatbin::image_extent(&annotated).unwrap(), fatbin::Extent::Complete(annotated.len()));
        // Once only; no kernels is a list too.
        assert!(annotate_host_module(&annotated, &[("x", &[])]).is_err());
        assert!(read(&annotate_host_module(&plain, &[]).unwrap()).unwrap().is_empty());
        assert!(annotate_host_module(&plain, &[("a\0b", &[])]).is_err());
        assert!(annotate_host_module(&plain, &[("many", &[(0, 1); MAX_NOTED_PARAMS + 1])]).is_err());
        // Every truncation is refused, never misread.
        for cut in (0..annotated.len()).step_by(7) {
            assert!(read(&annotated[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn a_hostile_host_note_is_refused() {
        let annotated = annotate_host_module(&host_module(), &[("k", &[(0, 4)])]).unwrap();
        let note_at = annotated.windows(HOST_NOTE_OWNER.len()).position(|w| w == HOST_NOTE_OWNER).unwrap() - NOTE_HEADER_LEN;
        // A descriptor size past the section.
        let mut long = annotated.clone();
        long[note_at + 4..note_at + 8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(read(&long).is_err());
        let desc_at = note_at + NOTE_HEADER_LEN + 12;
        // A name not NUL-terminated within the descriptor.
        let mut open = annotated.clone();
        open[desc_at + 1..desc_at + 14].fill(b'x');
        assert!(read(&open).is_err());
        // A parameter count past the descriptor's end, or beyond the limit.
        for count in [2u32, u32::MAX] {
            let mut over = annotated.clone();
            over[desc_at + 2..desc_at + 6].copy_from_slice(&count.to_le_bytes());
            assert!(read(&over).is_err(), "{count} parameters");
        }
    }

    #[test]
    fn other_images_are_unreadable() {
        assert!(read(b"not an image at all, just text").is_err());
        assert!(read(&0xBA55_ED50u32.to_le_bytes().repeat(8)).is_err());
        let bundle = fatbin::test_support::bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", V4)]);
        assert!(read(&bundle).is_err(), "a bundle: read the entry the device runs");
    }
}
