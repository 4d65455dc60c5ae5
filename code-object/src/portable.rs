//! The entries our `hipcc` adds to a HIP fat binary beside AMD code objects, and the choice of
//! what a device runs from a bundle holding them.
//!
//! - **PTX** (`hipv4-nvptx64-nvidia-cuda--sm_70`): the kernels compiled by clang's NVPTX back
//!   end for a virtual architecture; an NVIDIA worker's driver JIT-compiles it for any GPU of
//!   that architecture or newer.
//! - **Device source** ([`SOURCE_ENTRY_ID`]): the translation unit's device code as source
//!   (the program's own files, host-only functions removed), the options it was compiled with
//!   and, for every kernel and device variable the host code registers, a C++ expression that
//!   names it. A worker with no code object for its device compiles this once, through hiprtc
//!   on that worker (the host backend's C++ compiler, NVRTC, AMD's hiprtc), and caches it.
//!
//! AMD's runtime ignores entries whose triple is not `amdgcn`, so a bundle with these entries
//! still runs unchanged on ROCm when it also carries AMD code objects.

use std::fmt;

use crate::fatbin::{compatibility, Arch, Bundle, Entry, TargetId};

/// Bundle entry id of the device-source entry.
pub const SOURCE_ENTRY_ID: &str = "hip_remote-source-unknown-unknown--portable";
/// Prefix of a PTX entry's id; the virtual architecture (`sm_70`) follows.
pub const PTX_ENTRY_PREFIX: &str = "hipv4-nvptx64-nvidia-cuda--";
/// The macro hipcc defines (`-D…=1`) in the options of the device source it embeds: the
/// program is a whole HIP program (host code left out), not a hiprtc program, so the worker
/// lets `hip/hip_runtime.h` declare the host API as a HIP compile would.
pub const DEVICE_SOURCE_MACRO: &str = "__HIP_REMOTE_DEVICE_SOURCE__";
/// Magic number opening a device-source entry ("HRSRC", version 1).
pub const SOURCE_MAGIC: &[u8; 8] = b"HRSRC\0\0\x01";
/// Most items (files, options, symbols) one device-source entry may hold.
pub const MAX_SOURCE_ITEMS: usize = 1 << 16;

/// A device-source entry (see the module documentation).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceEntry<'a> {
    /// Program name, for diagnostics (the source file's name).
    pub name: &'a str,
    /// The main file.
    pub source: &'a str,
    /// Other files of the program, by the name the main file and the others include them.
    pub headers: Vec<(&'a str, &'a str)>,
    /// Compiler options (`-D`, `-U`, `-I`, `-std=`).
    pub options: Vec<&'a str>,
    /// Every kernel the host code registers: (registered name, C++ expression naming it).
    pub kernels: Vec<(&'a str, &'a str)>,
    /// Every device variable the host code registers: (registered name, expression).
    pub variables: Vec<(&'a str, &'a str)>,
}

/// Why a device-source entry could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceEntryError(pub String);

impl fmt::Display for SourceEntryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "device-source entry: {}", self.0)
    }
}

impl std::error::Error for SourceEntryError {}

/// Item tags of the encoding: `tag u8, 3 zero bytes, len u32 (LE), len bytes (UTF-8)`.
mod tag {
    pub const NAME: u8 = 1;
    pub const SOURCE: u8 = 2;
    pub const HEADER_NAME: u8 = 3;
    pub const HEADER_TEXT: u8 = 4;
    pub const OPTION: u8 = 5;
    pub const KERNEL_NAME: u8 = 6;
    pub const KERNEL_EXPRESSION: u8 = 7;
    pub const VARIABLE_NAME: u8 = 8;
    pub const VARIABLE_EXPRESSION: u8 = 9;
}

impl<'a> SourceEntry<'a> {
    /// The entry's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = SOURCE_MAGIC.to_vec();
        let mut item = |tag: u8, text: &str| {
            out.extend_from_slice(&[tag, 0, 0, 0]);
            out.extend_from_slice(&(text.len() as u32).to_le_bytes());
            out.extend_from_slice(text.as_bytes());
        };
        item(tag::NAME, self.name);
        item(tag::SOURCE, self.source);
        for (name, text) in &self.headers {
            item(tag::HEADER_NAME, name);
            item(tag::HEADER_TEXT, text);
        }
        for option in &self.options {
            item(tag::OPTION, option);
        }
        for (name, expr) in &self.kernels {
            item(tag::KERNEL_NAME, name);
            item(tag::KERNEL_EXPRESSION, expr);
        }
        for (name, expr) in &self.variables {
            item(tag::VARIABLE_NAME, name);
            item(tag::VARIABLE_EXPRESSION, expr);
        }
        out
    }

    /// Reads an entry; every length is checked against the input before it is used.
    pub fn parse(data: &'a [u8]) -> Result<Self, SourceEntryError> {
        let err = |what: &str| SourceEntryError(what.to_string());
        let mut rest = data.strip_prefix(SOURCE_MAGIC.as_slice()).ok_or_else(|| err("bad magic number"))?;
        let mut items: Vec<(u8, &'a str)> = Vec::new();
        while !rest.is_empty() {
            if items.len() >= MAX_SOURCE_ITEMS {
                return Err(SourceEntryError(format!("more than {MAX_SOURCE_ITEMS} items")));
            }
            if rest.len() < 8 {
                return Err(err("truncated item header"));
            }
            let tag = rest[0];
            let len = u32::from_le_bytes([rest[4], rest[5], rest[6], rest[7]]) as usize;
            let body = rest.get(8..8 + len).ok_or_else(|| err("item runs past the end"))?;
            let text = std::str::from_utf8(body).map_err(|_| err("item is not UTF-8"))?;
            items.push((tag, text));
            rest = &rest[8 + len..];
        }
        let mut entry = SourceEntry::default();
        let (mut saw_name, mut saw_source) = (false, false);
        let mut iter = items.into_iter();
        while let Some((tag, text)) = iter.next() {
            let mut second = |want: u8, what: &str| match iter.next() {
                Some((t, value)) if t == want => Ok(value),
                _ => Err(SourceEntryError(format!("{what} without its pair"))),
            };
            match tag {
                tag::NAME if !saw_name => (entry.name, saw_name) = (text, true),
                tag::SOURCE if !saw_source => (entry.source, saw_source) = (text, true),
                tag::HEADER_NAME => entry.headers.push((text, second(tag::HEADER_TEXT, "header name")?)),
                tag::OPTION => entry.options.push(text),
                tag::KERNEL_NAME => entry.kernels.push((text, second(tag::KERNEL_EXPRESSION, "kernel name")?)),
                tag::VARIABLE_NAME => entry.variables.push((text, second(tag::VARIABLE_EXPRESSION, "variable name")?)),
                other => return Err(SourceEntryError(format!("unexpected item tag {other}"))),
            }
        }
        if !saw_source {
            return Err(err("no source"));
        }
        Ok(entry)
    }
}

/// What a device runs from a bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice<'b, 'a> {
    /// An AMD code object for the device's processor.
    CodeObject(&'b Entry<'a>),
    /// PTX for a virtual architecture the device implements.
    Ptx(&'b Entry<'a>),
    /// The device source, to compile for the device.
    Source(&'b Entry<'a>),
}

/// Nothing in a bundle runs on a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NothingRuns {
    /// The device's architecture (`gcnArchName`: `gfx90a:xnack-`, `sm_90`, `host`).
    pub needed: String,
    /// What the bundle carries, by target (`gfx90a`, `sm_70 (PTX)`).
    pub available: Vec<String>,
}

impl fmt::Display for NothingRuns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let available = if self.available.is_empty() { "no device code at all".to_string() } else { self.available.join(", ") };
        write!(f, "no code for the worker's device architecture '{}'; the program carries: {available}", self.needed)?;
        let processor = Arch::parse(&self.needed).processor;
        if processor == "host" {
            f.write_str(
                ". The worker runs the host backend, which needs the kernels' source: build the program \
                 with hip-remote's hipcc (it embeds the device source), or use a worker with one of these GPUs",
            )?;
        } else if processor.starts_with("sm_") {
            f.write_str(". NVIDIA workers run PTX or the device source: build the program with hip-remote's hipcc")?;
        }
        Ok(())
    }
}

/// The virtual architecture number of a PTX entry id or an NVIDIA `gcnArchName` (`sm_70` → 70).
fn sm_number(text: &str) -> Option<u32> {
    text.strip_prefix("sm_")?.trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse().ok()
}

/// What of `bundle` runs best on a device of architecture `device_arch`: an AMD code object
/// of its processor, else PTX of the newest virtual architecture it implements, else the
/// device source.
pub fn choose<'b, 'a>(bundle: &'b Bundle<'a>, device_arch: &str) -> Result<Choice<'b, 'a>, NothingRuns> {
    let device = Arch::parse(device_arch);
    let device_sm = sm_number(device.processor);
    let mut best_code: Option<(u32, &'b Entry<'a>)> = None;
    let mut best_ptx: Option<(u32, &'b Entry<'a>)> = None;
    let mut source = None;
    let mut available = Vec::new();
    for entry in bundle.entries() {
        if entry.code.is_empty() {
            continue;
        }
        if entry.id == SOURCE_ENTRY_ID {
            available.push("device source".to_string());
            source = Some(entry);
        } else if let Some(sm) = entry.id.strip_prefix(PTX_ENTRY_PREFIX) {
            available.push(format!("{sm} (PTX)"));
            if let (Some(want), Some(have)) = (device_sm, sm_number(sm)) {
                if have <= want && !matches!(best_ptx, Some((b, _)) if b >= have) {
                    best_ptx = Some((have, entry));
                }
            }
        } else if let Some(id) = TargetId::parse(entry.id).filter(TargetId::is_hip_gpu) {
            available.push(id.target.text.to_string());
            if let Some(score) = compatibility(&id.target, &device) {
                if !matches!(best_code, Some((b, _)) if b >= score) {
                    best_code = Some((score, entry));
                }
            }
        }
    }
    if let Some((_, e)) = best_code {
        return Ok(Choice::CodeObject(e));
    }
    if let Some((_, e)) = best_ptx {
        return Ok(Choice::Ptx(e));
    }
    source.map(Choice::Source).ok_or_else(|| NothingRuns { needed: device_arch.to_string(), available })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fatbin::test_support::bundle;

    fn sample() -> SourceEntry<'static> {
        SourceEntry {
            name: "vadd.hip",
            source: "__global__ void k(int*) {}\n",
            headers: vec![("util.h", "#pragma once\n")],
            options: vec!["-DN=4", "-std=c++17"],
            kernels: vec![("_Z1kPi", "k"), ("_Z5scaleIfEvPT_S0_i", "scale<float>")],
            variables: vec![("counter", "counter")],
        }
    }

    #[test]
    fn source_entry_round_trips() {
        let e = sample();
        assert_eq!(SourceEntry::parse(&e.encode()).unwrap(), e);
    }

    #[test]
    fn source_entry_refuses_damage_without_panicking() {
        let bytes = sample().encode();
        for cut in 0..bytes.len() {
            let _ = SourceEntry::parse(&bytes[..cut]);
        }
        assert!(SourceEntry::parse(&bytes[..bytes.len() - 1]).is_err(), "a cut item is refused");
        let mut bad = bytes.clone();
        bad[0] = b'X';
        assert!(SourceEntry::parse(&bad).is_err());
        // A header name whose text is missing.
        let mut lonely = SOURCE_MAGIC.to_vec();
        lonely.extend_from_slice(&[tag::SOURCE, 0, 0, 0, 0, 0, 0, 0, tag::HEADER_NAME, 0, 0, 0, 1, 0, 0, 0, b'h']);
        assert!(SourceEntry::parse(&lonely).unwrap_err().0.contains("without its pair"));
        // A length far past the end.
        let mut huge = SOURCE_MAGIC.to_vec();
        huge.extend_from_slice(&[tag::SOURCE, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
        assert!(SourceEntry::parse(&huge).is_err());
    }

    #[test]
    fn choice_prefers_code_objects_then_newest_usable_ptx_then_source() {
        let src = sample().encode();
        let b = bundle(&[
            ("host-x86_64-unknown-linux-gnu--", b""),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a", b"\x7fELFgfx90a"),
            ("hipv4-nvptx64-nvidia-cuda--sm_70", b"ptx70"),
            ("hipv4-nvptx64-nvidia-cuda--sm_90", b"ptx90"),
            (SOURCE_ENTRY_ID, &src),
        ]);
        let b = Bundle::parse(&b).unwrap();
        assert!(matches!(choose(&b, "gfx90a:sramecc+:xnack-"), Ok(Choice::CodeObject(e)) if e.code == b"\x7fELFgfx90a"));
        assert!(matches!(choose(&b, "sm_90"), Ok(Choice::Ptx(e)) if e.code == b"ptx90"));
        assert!(matches!(choose(&b, "sm_80"), Ok(Choice::Ptx(e)) if e.code == b"ptx70"));
        assert!(matches!(choose(&b, "sm_60"), Ok(Choice::Source(_))), "PTX newer than the GPU does not run");
        assert!(matches!(choose(&b, "host"), Ok(Choice::Source(_))));
        assert!(matches!(choose(&b, "gfx1030"), Ok(Choice::Source(_))));
    }

    #[test]
    fn written_bundles_parse_back_with_aligned_code() {
        let src = sample().encode();
        let entries: [(&str, &[u8]); 3] =
            [("host-x86_64-unknown-linux-gnu--", b""), ("hipv4-nvptx64-nvidia-cuda--sm_70", b"ptx"), (SOURCE_ENTRY_ID, &src)];
        let bytes = crate::fatbin::write_bundle(&entries);
        let b = Bundle::parse(&bytes).unwrap();
        let got: Vec<(&str, &[u8])> = b.entries().iter().map(|e| (e.id, e.code)).collect();
        assert_eq!(got, entries);
        for e in &b.entries()[1..] {
            assert_eq!((e.code.as_ptr() as usize - bytes.as_ptr() as usize) % crate::fatbin::BUNDLE_CODE_ALIGN, 0);
        }
        assert_eq!(
            crate::fatbin::image_extent(&bytes),
            Ok(crate::fatbin::Extent::Complete(bytes.len())),
            "the registration reads exactly the bundle"
        );
    }

    #[test]
    fn nothing_runs_names_what_there_is_and_what_is_needed() {
        let b = bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", b"\x7fELF"), ("hipv4-nvptx64-nvidia-cuda--sm_70", b"ptx")]);
        let b = Bundle::parse(&b).unwrap();
        let miss = choose(&b, "host").unwrap_err();
        assert_eq!(miss.available, ["gfx90a", "sm_70 (PTX)"]);
        let text = miss.to_string();
        assert!(text.contains("'host'") && text.contains("gfx90a, sm_70 (PTX)") && text.contains("hipcc"), "{text}");
        let miss = choose(&b, "sm_60").unwrap_err();
        assert!(miss.to_string().contains("'sm_60'"));
    }
}
