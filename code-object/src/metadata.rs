//! The kernels of one AMDGPU code object and their argument layouts, from its metadata note.
//!
//! A code object (what [`crate::fatbin::select`] picks from a bundle, or what
//! `hipModuleLoadData` receives) is an ELF64 file with `e_machine` `EM_AMDGPU` (224). Code
//! object versions 3 to 6 (`EI_ABIVERSION` 1 to 4; hipcc of ROCm 5.2 emits v4, newer ones v5)
//! describe their kernels in one note, owner `"AMDGPU"`, type `NT_AMDGPU_METADATA` (32), whose
//! descriptor is a msgpack map (LLVM's AMDGPUUsage, "Code Object V3 Metadata"):
//!
//! ```text
//! amdhsa.version: [1, 2]                      (1.0 = v3, 1.1 = v4, 1.2 = v5, 1.3 = v6)
//! amdhsa.target:  "amdgcn-amd-amdhsa--gfx90a:xnack-"
//! amdhsa.kernels: [{ .name, .symbol, .kernarg_segment_size, .kernarg_segment_align,
//!                    .sgpr_count, .vgpr_count, .group_segment_fixed_size,
//!                    .private_segment_fixed_size, .max_flat_workgroup_size, .wavefront_size,
//!                    .args: [{ .offset, .size, .value_kind, .name?, ... }] }]
//! ```
//!
//! Arguments whose `.value_kind` starts with `hidden_` are filled in by the runtime (grid
//! sizes, the printf buffer, ...), not by the caller: [`KernelInfo::params`] leaves them out,
//! while [`KernelInfo::kernarg_size`] still counts them (the runtime's buffer holds both).
//!
//! Code object v2 (a YAML note of owner `"AMD"`) is refused: no HIP since ROCm 4 emits it.
//!
//! Every size is bounded by a named limit, and every argument is checked to lie inside the
//! kernarg segment, so a caller can copy arguments by these offsets without further checks.

use crate::fatbin::{EM_AMDGPU, MAX_IMAGE_LEN};
use object::elf::FileHeader64;
use object::read::elf::{FileHeader, ProgramHeader, SectionHeader};
use object::Endianness;
use rmpv::ValueRef;
use std::fmt;

/// Owner of the metadata note.
pub const NOTE_OWNER: &[u8] = b"AMDGPU";
/// Type of the metadata note (`NT_AMDGPU_METADATA`).
pub const NT_AMDGPU_METADATA: u32 = 32;
/// `EI_OSABI` of code objects for the HSA runtime (`ELFOSABI_AMDGPU_HSA`).
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;
/// Code object versions this module reads (`EI_ABIVERSION` + 2).
pub const SUPPORTED_CODE_OBJECT_VERSIONS: std::ops::RangeInclusive<u32> = 3..=6;

/// Largest metadata note accepted: 4 MiB (a module of a thousand kernels needs about 2).
pub const MAX_METADATA_LEN: usize = 4 << 20;
/// Deepest msgpack nesting accepted (real metadata nests 4 levels).
pub const MAX_MSGPACK_DEPTH: usize = 16;
/// Most kernels of one code object.
pub const MAX_KERNELS: usize = 1 << 16;
/// Most arguments (hidden ones included) of one kernel.
pub const MAX_KERNEL_ARGS: usize = 1024;
/// Longest kernel name or symbol (mangled C++ templates can be long).
pub const MAX_NAME_LEN: usize = 64 << 10;
/// Largest kernarg segment accepted: 1 MiB.
pub const MAX_KERNARG_SIZE: u32 = 1 << 20;

/// Why a code object's kernel metadata could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetadataError {
    /// Not a well-formed ELF64 file (the ELF reader's reason).
    Elf(String),
    /// An ELF file, but not an AMDGPU code object for the HSA runtime.
    NotAmdgpu { why: String },
    /// A code object version this module does not read (v2 and older, or a future one).
    UnsupportedVersion { code_object_version: u32 },
    /// No `NT_AMDGPU_METADATA` note.
    NoMetadata,
    /// A length or count above this module's limits.
    TooLarge { what: &'static str, len: u64, max: u64 },
    /// The note is not valid msgpack (or nests deeper than [`MAX_MSGPACK_DEPTH`]).
    Msgpack(String),
    /// A field is missing, or has the wrong type. `path` names it (`amdhsa.kernels[2].args[0].size`).
    Field { path: String, problem: &'static str },
}

impl fmt::Display for MetadataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Elf(why) => write!(f, "not a valid ELF64 code object: {why}"),
            Self::NotAmdgpu { why } => write!(f, "not an AMDGPU HSA code object: {why}"),
            Self::UnsupportedVersion { code_object_version } => {
                write!(f, "code object v{code_object_version} is not supported (v3 to v6 are)")
            }
            Self::NoMetadata => write!(f, "the code object has no NT_AMDGPU_METADATA note"),
            Self::TooLarge { what, len, max } => write!(f, "{what} is {len}, above the limit of {max}"),
            Self::Msgpack(why) => write!(f, "the metadata note is not valid msgpack: {why}"),
            Self::Field { path, problem } => write!(f, "metadata field {path}: {problem}"),
        }
    }
}

impl std::error::Error for MetadataError {}

type Result<T> = std::result::Result<T, MetadataError>;

/// One argument the caller passes, as laid out in the kernarg segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamInfo {
    /// Byte offset in the kernarg segment.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
    /// `.value_kind`: `by_value`, `global_buffer`, `dynamic_shared_pointer`, `image`, ...
    pub value_kind: String,
}

/// Resource use of a kernel: what `hipFuncGetAttributes` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelAttributes {
    pub sgpr_count: u32,
    pub vgpr_count: u32,
    /// Static LDS (`__shared__`) bytes.
    pub group_segment_fixed_size: u32,
    /// Scratch bytes per work-item.
    pub private_segment_fixed_size: u32,
    pub max_flat_workgroup_size: u32,
    pub wavefront_size: u32,
}

/// One kernel of a code object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelInfo {
    /// `.name`: the source-level (mangled) name `hipModuleGetFunction` looks up.
    pub name: String,
    /// `.symbol`: the kernel descriptor's symbol (`name.kd`).
    pub symbol: String,
    /// The caller's arguments in declaration order (hidden arguments left out).
    pub params: Vec<ParamInfo>,
    /// `.kernarg_segment_size`: the whole segment, hidden arguments included.
    pub kernarg_size: u32,
    /// `.kernarg_segment_align`.
    pub kernarg_align: u32,
    pub attributes: KernelAttributes,
}

/// What one code object's metadata says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeObjectMetadata {
    /// From the ELF header: 3 to 6.
    pub code_object_version: u32,
    /// `amdhsa.target`, when present (`amdgcn-amd-amdhsa--gfx90a:xnack-`).
    pub target: Option<String>,
    pub kernels: Vec<KernelInfo>,
}

/// The kernels of `code_object` with their argument layouts.
pub fn kernel_param_layouts(code_object: &[u8]) -> Result<Vec<KernelInfo>> {
    parse(code_object).map(|m| m.kernels)
}

/// All of `code_object`'s metadata this module reads.
pub fn parse(code_object: &[u8]) -> Result<CodeObjectMetadata> {
    if code_object.len() > MAX_IMAGE_LEN {
        return Err(MetadataError::TooLarge { what: "code object", len: code_object.len() as u64, max: MAX_IMAGE_LEN as u64 });
    }
    let (code_object_version, note) = metadata_note(code_object)?;
    if note.len() > MAX_METADATA_LEN {
        return Err(MetadataError::TooLarge { what: "metadata note", len: note.len() as u64, max: MAX_METADATA_LEN as u64 });
    }
    from_msgpack(code_object_version, note)
}

/// The metadata in a note's msgpack descriptor.
fn from_msgpack(code_object_version: u32, note: &[u8]) -> Result<CodeObjectMetadata> {
    let mut rest = note;
    let root = rmpv::decode::read_value_ref_with_max_depth(&mut rest, MAX_MSGPACK_DEPTH).map_err(|e| MetadataError::Msgpack(e.to_string()))?;
    let root = Node::new(&root, "metadata".to_string());
    let target = root.field_opt("amdhsa.target")?.map(|t| t.string(MAX_NAME_LEN)).transpose()?;
    let kernels = match root.field_opt("amdhsa.kernels")? {
        None => Vec::new(),
        Some(list) => list.array(MAX_KERNELS)?.iter().map(kernel).collect::<Result<_>>()?,
    };
    Ok(CodeObjectMetadata { code_object_version, target, kernels })
}

/// The code object version and the descriptor of the metadata note, found through the
/// section headers or, where those are stripped, the program headers.
fn metadata_note(data: &[u8]) -> Result<(u32, &[u8])> {
    let header = FileHeader64::<Endianness>::parse(data).map_err(|e| MetadataError::Elf(e.to_string()))?;
    let endian = header.endian().map_err(|e| MetadataError::Elf(e.to_string()))?;
    let machine = header.e_machine(endian);
    if machine != EM_AMDGPU {
        return Err(MetadataError::NotAmdgpu { why: format!("e_machine is {machine}, not {EM_AMDGPU}") });
    }
    if endian != Endianness::Little {
        return Err(MetadataError::NotAmdgpu { why: "big-endian".to_string() });
    }
    let ident = header.e_ident();
    if ident.os_abi != ELFOSABI_AMDGPU_HSA {
        return Err(MetadataError::NotAmdgpu { why: format!("EI_OSABI is {}, not {ELFOSABI_AMDGPU_HSA} (HSA)", ident.os_abi) });
    }
    let code_object_version = u32::from(ident.abi_version) + 2;
    if !SUPPORTED_CODE_OBJECT_VERSIONS.contains(&code_object_version) {
        return Err(MetadataError::UnsupportedVersion { code_object_version });
    }
    let elf = |e: object::Error| MetadataError::Elf(e.to_string());
    let is_metadata = |n: &object::read::elf::Note<'_, FileHeader64<Endianness>>| n.name() == NOTE_OWNER && n.n_type(endian) == NT_AMDGPU_METADATA;
    for section in header.sections(endian, data).map_err(elf)?.iter() {
        if let Some(mut notes) = section.notes(endian, data).map_err(elf)? {
            while let Some(note) = notes.next().map_err(elf)? {
                if is_metadata(&note) {
                    return Ok((code_object_version, note.desc()));
                }
            }
        }
    }
    for segment in header.program_headers(endian, data).map_err(elf)? {
        if let Some(mut notes) = segment.notes(endian, data).map_err(elf)? {
            while let Some(note) = notes.next().map_err(elf)? {
                if is_metadata(&note) {
                    return Ok((code_object_version, note.desc()));
                }
            }
        }
    }
    Err(MetadataError::NoMetadata)
}

fn kernel(k: &Node<'_, '_>) -> Result<KernelInfo> {
    let name = k.field(".name")?.string(MAX_NAME_LEN)?;
    let k = Node { path: format!("{}({name})", k.path), value: k.value };
    let kernarg_size = k.field(".kernarg_segment_size")?.u32()?;
    if kernarg_size > MAX_KERNARG_SIZE {
        return Err(MetadataError::TooLarge { what: "kernarg segment", len: kernarg_size.into(), max: MAX_KERNARG_SIZE.into() });
    }
    let mut params = Vec::new();
    if let Some(args) = k.field_opt(".args")? {
        for arg in args.array(MAX_KERNEL_ARGS)? {
            let value_kind = arg.field(".value_kind")?.string(MAX_NAME_LEN)?;
            let offset = arg.field(".offset")?.u32()?;
            let size = arg.field(".size")?.u32()?;
            if !matches!(offset.checked_add(size), Some(end) if end <= kernarg_size) {
                return Err(MetadataError::Field { path: arg.path, problem: "lies outside the kernarg segment" });
            }
            if !value_kind.starts_with("hidden_") {
                params.push(ParamInfo { offset, size, value_kind });
            }
        }
    }
    Ok(KernelInfo {
        symbol: k.field(".symbol")?.string(MAX_NAME_LEN)?,
        params,
        kernarg_size,
        kernarg_align: k.field(".kernarg_segment_align")?.u32()?,
        attributes: KernelAttributes {
            sgpr_count: k.field(".sgpr_count")?.u32()?,
            vgpr_count: k.field(".vgpr_count")?.u32()?,
            group_segment_fixed_size: k.field(".group_segment_fixed_size")?.u32()?,
            private_segment_fixed_size: k.field(".private_segment_fixed_size")?.u32()?,
            max_flat_workgroup_size: k.field(".max_flat_workgroup_size")?.u32()?,
            wavefront_size: k.field(".wavefront_size")?.u32()?,
        },
        name,
    })
}

/// A msgpack value with the path that led to it, for errors that say where.
struct Node<'v, 'a> {
    value: &'v ValueRef<'a>,
    path: String,
}

impl<'v, 'a> Node<'v, 'a> {
    fn new(value: &'v ValueRef<'a>, path: String) -> Self {
        Self { value, path }
    }

    fn problem(&self, problem: &'static str) -> MetadataError {
        MetadataError::Field { path: self.path.clone(), problem }
    }

    fn field_opt(&self, key: &str) -> Result<Option<Node<'v, 'a>>> {
        let ValueRef::Map(entries) = self.value else { return Err(self.problem("is not a map")) };
        let mut found = None;
        for (k, v) in entries {
            if matches!(k, ValueRef::String(s) if s.as_bytes() == key.as_bytes()) {
                if found.is_some() {
                    return Err(MetadataError::Field { path: format!("{}.{}", self.path, key.trim_start_matches('.')), problem: "appears twice" });
                }
                found = Some(Node::new(v, format!("{}.{}", self.path, key.trim_start_matches('.'))));
            }
        }
        Ok(found)
    }

    fn field(&self, key: &str) -> Result<Node<'v, 'a>> {
        self.field_opt(key)?
            .ok_or_else(|| MetadataError::Field { path: format!("{}.{}", self.path, key.trim_start_matches('.')), problem: "is missing" })
    }

    fn array(&self, max: usize) -> Result<Vec<Node<'v, 'a>>> {
        let ValueRef::Array(items) = self.value else { return Err(self.problem("is not an array")) };
        if items.len() > max {
            return Err(MetadataError::TooLarge { what: "metadata array", len: items.len() as u64, max: max as u64 });
        }
        Ok(items.iter().enumerate().map(|(i, v)| Node::new(v, format!("{}[{i}]", self.path))).collect())
    }

    fn string(&self, max: usize) -> Result<String> {
        let ValueRef::String(s) = self.value else { return Err(self.problem("is not a string")) };
        let s = s.as_str().ok_or_else(|| self.problem("is not UTF-8"))?;
        if s.len() > max {
            return Err(MetadataError::TooLarge { what: "metadata string", len: s.len() as u64, max: max as u64 });
        }
        Ok(s.to_string())
    }

    fn u32(&self) -> Result<u32> {
        let ValueRef::Integer(n) = self.value else { return Err(self.problem("is not an integer")) };
        n.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or_else(|| self.problem("is not an integer from 0 to 2^32-1"))
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use rmpv::Value;

    fn map(entries: Vec<(&str, Value)>) -> Value {
        Value::Map(entries.into_iter().map(|(k, v)| (Value::from(k), v)).collect())
    }

    fn arg(offset: u64, size: u64, kind: &str) -> Value {
        map(vec![(".offset", offset.into()), (".size", size.into()), (".value_kind", kind.into())])
    }

    fn kernel_with(args: Vec<Value>, kernarg_size: u64) -> Value {
        map(vec![
            (".name", "k".into()),
            (".symbol", "k.kd".into()),
            (".kernarg_segment_size", kernarg_size.into()),
            (".kernarg_segment_align", 8.into()),
            (".sgpr_count", 10.into()),
            (".vgpr_count", 4.into()),
            (".group_segment_fixed_size", 0.into()),
            (".private_segment_fixed_size", 0.into()),
            (".max_flat_workgroup_size", 256.into()),
            (".wavefront_size", 64.into()),
            (".args", Value::Array(args)),
        ])
    }

    fn decode(root: &Value) -> Result<CodeObjectMetadata> {
        let mut bytes = Vec::new();
        rmpv::encode::write_value(&mut bytes, root).unwrap();
        from_msgpack(5, &bytes)
    }

    fn kernels(list: Vec<Value>) -> Value {
        map(vec![("amdhsa.version", Value::Array(vec![1.into(), 2.into()])), ("amdhsa.kernels", Value::Array(list))])
    }

    #[test]
    fn hidden_arguments_are_not_params_but_count_in_the_segment() {
        let k =
            kernel_with(vec![arg(0, 8, "global_buffer"), arg(8, 4, "by_value"), arg(16, 4, "hidden_block_count_x"), arg(24, 8, "hidden_none")], 32);
        let m = decode(&kernels(vec![k])).unwrap();
        assert_eq!(m.target, None);
        let k = &m.kernels[0];
        assert_eq!((k.name.as_str(), k.symbol.as_str(), k.kernarg_size), ("k", "k.kd", 32));
        assert_eq!(k.params.iter().map(|p| (p.offset, p.size)).collect::<Vec<_>>(), [(0, 8), (8, 4)]);
        assert_eq!(k.attributes.max_flat_workgroup_size, 256);
    }

    #[test]
    fn an_argument_outside_the_segment_is_refused() {
        for bad in [arg(8, 4, "by_value"), arg(u32::MAX as u64, 2, "by_value"), arg(4, u32::MAX as u64, "hidden_none")] {
            let err = decode(&kernels(vec![kernel_with(vec![bad], 8)])).unwrap_err();
            assert!(
                matches!(&err, MetadataError::Field { path, problem: "lies outside the kernarg segment" } if path == "metadata.amdhsa.kernels[0](k).args[0]"),
                "{err}"
            );
        }
    }

    #[test]
    fn missing_and_mistyped_fields_name_their_path() {
        let Value::Map(mut entries) = kernel_with(vec![], 0) else { unreachable!() };
        entries.retain(|(k, _)| k.as_str() != Some(".vgpr_count"));
        let err = decode(&kernels(vec![Value::Map(entries)])).unwrap_err();
        assert_eq!(err, MetadataError::Field { path: "metadata.amdhsa.kernels[0](k).vgpr_count".into(), problem: "is missing" });
        let err = decode(&kernels(vec![kernel_with(vec![arg(0, 4, "by_value")], 1u64 << 40)])).unwrap_err();
        assert!(matches!(err, MetadataError::Field { problem: "is not an integer from 0 to 2^32-1", .. }), "{err}");
        let err = decode(&kernels(vec![kernel_with(vec![], MAX_KERNARG_SIZE as u64 + 1)])).unwrap_err();
        assert!(matches!(err, MetadataError::TooLarge { what: "kernarg segment", .. }), "{err}");
        let err = decode(&kernels(vec![Value::from("kernel")])).unwrap_err();
        assert!(matches!(err, MetadataError::Field { problem: "is not a map", .. }), "{err}");
        let twice = map(vec![("amdhsa.kernels", Value::Array(vec![])), ("amdhsa.kernels", Value::Array(vec![]))]);
        assert!(matches!(decode(&twice), Err(MetadataError::Field { problem: "appears twice", .. })));
        assert_eq!(decode(&map(vec![])).unwrap().kernels, []);
    }

    #[test]
    fn limits_hold() {
        let many = vec![arg(0, 0, "by_value"); MAX_KERNEL_ARGS + 1];
        assert!(matches!(decode(&kernels(vec![kernel_with(many, 0)])), Err(MetadataError::TooLarge { what: "metadata array", .. })));
        let mut deep = Value::Nil;
        for _ in 0..MAX_MSGPACK_DEPTH + 1 {
            deep = Value::Array(vec![deep]);
        }
        assert!(matches!(decode(&map(vec![("x", deep)])), Err(MetadataError::Msgpack(_))));
        assert!(matches!(from_msgpack(5, &[0xdd, 0xff, 0xff, 0xff, 0xff]), Err(MetadataError::Msgpack(_))), "array of 2^32 in 5 bytes");
        assert!(matches!(from_msgpack(5, &[]), Err(MetadataError::Msgpack(_))));
    }
}
