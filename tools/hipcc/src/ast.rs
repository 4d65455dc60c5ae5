//! The declarations of a translation unit, read from clang's JSON AST dump
//! (`-Xclang -ast-dump=json`) as it streams: only what the device-source pass needs is kept
//! (declarations at namespace and class scope, their extents, CUDA attributes and mangled
//! names); expressions and statements are walked for their locations, then dropped.
//!
//! clang elides a location's `file` when it equals the previous printed location's, so every
//! location of the dump is visited in order to know which file an offset belongs to.
//!
//! Dumps nest as deep as the program's expressions do (a sum of a thousand terms is a thousand
//! levels): the reader has no depth limit, and grows its stack on the heap as it descends
//! (`serde_stacker`), so any depth clang writes is read.

use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A position in a file: the byte offset of a token and the token's length.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loc {
    /// The file (as clang spelled its path).
    pub file: Rc<str>,
    /// Byte offset of the token.
    pub offset: usize,
    /// Length of the token.
    pub tok_len: usize,
    /// The token comes from a macro expansion: `offset` is where the macro's name is written,
    /// and `tok_len` that name's length.
    pub macro_expansion: bool,
}

/// CUDA/HIP attributes of a declaration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Targets {
    pub global: bool,
    pub device: bool,
    pub constant: bool,
    pub shared: bool,
    pub managed: bool,
}

impl Targets {
    /// Whether device code may use it (a kernel, a device function or a device variable).
    pub fn on_device(&self) -> bool {
        self.global || self.device || self.constant || self.shared || self.managed
    }
}

/// One declaration kept from the dump.
#[derive(Clone, Debug, Default)]
pub struct Decl {
    pub kind: String,
    pub name: String,
    pub mangled: String,
    /// The declared type (`qualType`), for variables.
    pub qual_type: String,
    pub implicit: bool,
    pub begin: Option<Loc>,
    pub end: Option<Loc>,
    pub targets: Targets,
    /// A function with a body.
    pub has_body: bool,
    /// Where the name is (`loc`).
    pub loc: Option<Loc>,
    /// The function's body, `{` to `}` (a `CompoundStmt`; `None` for a function-try-block).
    pub body: Option<(Loc, Loc)>,
    /// A redeclaration (`previousDecl`): an earlier declaration of it exists.
    pub redeclaration: bool,
    /// Declared `constexpr`.
    pub constexpr: bool,
    /// `= default` (clang gives such a function a body it made itself).
    pub defaulted: bool,
    /// Declared `extern` (storage class).
    pub extern_storage: bool,
    /// A variable with an initialiser.
    pub has_init: bool,
    /// The declared type with typedefs resolved (`desugaredQualType`), when it differs.
    pub desugared_type: String,
    /// Declarations inside (namespaces, linkage specifications, classes, templates).
    pub children: Vec<Decl>,
}

impl Decl {
    /// The bytes `[begin, end of the last token)` when both ends are in the same file.
    pub fn extent(&self) -> Option<(Rc<str>, std::ops::Range<usize>)> {
        let (b, e) = (self.begin.as_ref()?, self.end.as_ref()?);
        (b.file == e.file && b.offset <= e.offset).then(|| (b.file.clone(), b.offset..e.offset + e.tok_len))
    }
}

/// Declaration kinds whose children are declarations worth keeping.
fn keeps_children(kind: &str) -> bool {
    matches!(
        kind,
        "TranslationUnitDecl"
            | "NamespaceDecl"
            | "LinkageSpecDecl"
            | "CXXRecordDecl"
            | "ClassTemplateDecl"
            | "FunctionTemplateDecl"
            | "ClassTemplateSpecializationDecl"
    )
}

/// Parses a whole dump; the translation unit's declaration.
pub fn parse(json: impl std::io::Read) -> Result<Decl, String> {
    let last_file = RefCell::new(Rc::from(""));
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::with_capacity(1 << 20, json));
    de.disable_recursion_limit();
    let de = serde_stacker::Deserializer::new(&mut de);
    let node = NodeSeed { last_file: &last_file, keep: true }.deserialize(de).map_err(|e| format!("clang's AST dump: {e}"))?;
    node.ok_or_else(|| "clang's AST dump is not an object".to_string())
}

struct NodeSeed<'s> {
    last_file: &'s RefCell<Rc<str>>,
    /// Whether the node itself matters (else only its locations are followed).
    keep: bool,
}

impl<'de> DeserializeSeed<'de> for NodeSeed<'_> {
    type Value = Option<Decl>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NodeSeed<'_> {
    type Value = Option<Decl>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an AST node")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut decl = Decl::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "kind" => decl.kind = map.next_value()?,
                "name" if self.keep => decl.name = map.next_value()?,
                "mangledName" if self.keep => decl.mangled = map.next_value()?,
                // An inherited attribute repeats an earlier declaration's (and its range).
                "isImplicit" | "implicit" | "inherited" => decl.implicit |= map.next_value::<bool>()?,
                "type" if self.keep => {
                    let t: TypeInfo = map.next_value()?;
                    decl.qual_type = t.qual_type;
                    decl.desugared_type = t.desugared;
                }
                "previousDecl" if self.keep => {
                    map.next_value::<IgnoredAny>()?;
                    decl.redeclaration = true;
                }
                "constexpr" if self.keep => decl.constexpr = map.next_value()?,
                "explicitlyDefaulted" if self.keep => {
                    map.next_value::<IgnoredAny>()?;
                    decl.defaulted = true;
                }
                "storageClass" if self.keep => decl.extern_storage = map.next_value::<String>()? == "extern",
                "init" if self.keep => {
                    map.next_value::<IgnoredAny>()?;
                    decl.has_init = true;
                }
                "loc" => {
                    decl.loc = map.next_value_seed(LocSeed { last_file: self.last_file })?;
                }
                "range" => {
                    let (b, e) = map.next_value_seed(RangeSeed { last_file: self.last_file })?;
                    decl.begin = b;
                    decl.end = e;
                }
                "inner" => {
                    let keep_children = self.keep && keeps_children(&decl.kind);
                    let children = map.next_value_seed(InnerSeed { last_file: self.last_file, keep: keep_children })?;
                    for child in children {
                        match child.kind.as_str() {
                            "CUDAGlobalAttr" => decl.targets.global = true,
                            "CUDADeviceAttr" => decl.targets.device = true,
                            "CUDAConstantAttr" => decl.targets.constant = true,
                            "CUDASharedAttr" => decl.targets.shared = true,
                            "HIPManagedAttr" => decl.targets.managed = true,
                            "CompoundStmt" => {
                                decl.has_body = true;
                                decl.body = child.begin.clone().zip(child.end.clone());
                            }
                            "CXXTryStmt" => decl.has_body = true,
                            // `[[noreturn]] void f();`: the declaration's range starts after a
                            // leading attribute; its extent must take the attribute in.
                            kind if kind.ends_with("Attr") && !child.implicit => {
                                if let (Some(attr), Some(begin)) = (&child.begin, &decl.begin) {
                                    if attr.file == begin.file && attr.offset < begin.offset {
                                        decl.begin = Some(attr.clone());
                                    }
                                }
                            }
                            _ if keep_children && child.kind.ends_with("Decl") => decl.children.push(child),
                            _ => {}
                        }
                    }
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Some(decl))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

#[derive(serde::Deserialize, Default)]
struct TypeInfo {
    #[serde(rename = "qualType", default)]
    qual_type: String,
    #[serde(rename = "desugaredQualType", default)]
    desugared: String,
}

/// The children of a node. Only the kept ones and attribute/body markers are returned.
struct InnerSeed<'s> {
    last_file: &'s RefCell<Rc<str>>,
    keep: bool,
}

impl<'de> DeserializeSeed<'de> for InnerSeed<'_> {
    type Value = Vec<Decl>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for InnerSeed<'_> {
    type Value = Vec<Decl>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of AST nodes")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(child) = seq.next_element_seed(NodeSeed { last_file: self.last_file, keep: self.keep })? {
            if let Some(child) = child {
                let marker = child.kind.ends_with("Attr") || child.kind == "CompoundStmt" || child.kind == "CXXTryStmt";
                if marker || self.keep {
                    out.push(child);
                }
            }
        }
        Ok(out)
    }
}

/// A location: `{offset, file?, line?, col, tokLen, includedFrom?}` or, inside a macro
/// expansion, `{spellingLoc, expansionLoc}` (the expansion is where the text is).
struct LocSeed<'s> {
    last_file: &'s RefCell<Rc<str>>,
}

impl<'de> DeserializeSeed<'de> for LocSeed<'_> {
    type Value = Option<Loc>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for LocSeed<'_> {
    type Value = Option<Loc>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a source location")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut offset, mut tok_len, mut expansion, mut bare) = (None, 0, None, false);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "offset" => {
                    offset = Some(map.next_value::<usize>()?);
                    bare = true;
                }
                "file" => *self.last_file.borrow_mut() = Rc::from(map.next_value::<String>()?),
                "tokLen" => tok_len = map.next_value()?,
                "spellingLoc" => {
                    map.next_value_seed(LocSeed { last_file: self.last_file })?;
                }
                "expansionLoc" => expansion = map.next_value_seed(LocSeed { last_file: self.last_file })?.map(|l| Loc { macro_expansion: true, ..l }),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if bare {
            return Ok(offset.map(|offset| Loc { file: self.last_file.borrow().clone(), offset, tok_len, macro_expansion: false }));
        }
        Ok(expansion)
    }
}

struct RangeSeed<'s> {
    last_file: &'s RefCell<Rc<str>>,
}

impl<'de> DeserializeSeed<'de> for RangeSeed<'_> {
    type Value = (Option<Loc>, Option<Loc>);
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RangeSeed<'_> {
    type Value = (Option<Loc>, Option<Loc>);
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a source range")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut begin, mut end) = (None, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "begin" => begin = map.next_value_seed(LocSeed { last_file: self.last_file })?,
                "end" => end = map.next_value_seed(LocSeed { last_file: self.last_file })?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok((begin, end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel whose body holds an expression nested `depth` levels deep, as clang dumps
    /// `x + x + … + x`.
    fn deep_dump(depth: usize) -> String {
        let open = r#"{"kind":"BinaryOperator","range":{"begin":{"offset":40,"tokLen":1},"end":{"offset":41,"tokLen":1}},"inner":["#;
        let leaf = r#"{"kind":"DeclRefExpr","range":{"begin":{"offset":40,"tokLen":1},"end":{"offset":40,"tokLen":1}}}"#;
        let expr = format!("{}{leaf}{}", open.repeat(depth), "]}".repeat(depth));
        format!(
            r#"{{"kind":"TranslationUnitDecl","inner":[{{"kind":"FunctionDecl","name":"k","mangledName":"_Z1kv",
               "loc":{{"offset":20,"file":"/k.hip","tokLen":1}},
               "range":{{"begin":{{"offset":0,"tokLen":10}},"end":{{"offset":99,"tokLen":1}}}},
               "inner":[{{"kind":"CompoundStmt","inner":[{expr}]}},{{"kind":"CUDAGlobalAttr"}}]}}]}}"#
        )
    }

    #[test]
    fn any_depth_is_read() {
        // serde_json alone gives up past 128 levels; 50 000 would overflow a plain stack.
        for depth in [127, 129, 5_000, 50_000] {
            let tu = parse(deep_dump(depth).as_bytes()).unwrap_or_else(|e| panic!("depth {depth}: {e}"));
            let k = &tu.children[0];
            assert!(k.targets.global && k.has_body && k.name == "k", "depth {depth}");
            assert_eq!(k.extent(), Some((Rc::from("/k.hip"), 0..100)), "depth {depth}");
        }
    }

    #[test]
    fn elided_files_follow_the_previous_location() {
        let json = r#"{"id":"0x1","kind":"TranslationUnitDecl","loc":{},"range":{"begin":{},"end":{}},"inner":[
          {"id":"0x2","kind":"FunctionDecl","loc":{"offset":82,"file":"/a.hip","line":4,"col":17,"tokLen":4},
           "range":{"begin":{"spellingLoc":{"offset":1821,"file":"/inc/hip_runtime.h","line":55,"col":20,"tokLen":13,
                     "includedFrom":{"file":"/a.hip"}},"expansionLoc":{"offset":66,"file":"/a.hip","line":4,"col":1,"tokLen":10}},
                    "end":{"offset":220,"line":7,"col":1,"tokLen":1}},
           "name":"vadd","mangledName":"_Z19__device_stub__vaddPi","type":{"qualType":"void (int *)"},
           "inner":[{"id":"0x3","kind":"ParmVarDecl","loc":{"offset":100,"col":3,"tokLen":1},"range":{"begin":{"offset":90,"col":1,"tokLen":3},"end":{"offset":100,"col":3,"tokLen":1}}},
                    {"id":"0x4","kind":"CompoundStmt","range":{"begin":{"offset":110,"tokLen":1},"end":{"offset":220,"tokLen":1}}},
                    {"id":"0x5","kind":"CUDAGlobalAttr","range":{"begin":{"offset":1821,"file":"/inc/hip_runtime.h","tokLen":13},"end":{"offset":1821,"tokLen":13}}}]},
          {"id":"0x6","kind":"VarDecl","loc":{"offset":5,"tokLen":1},"range":{"begin":{"offset":1,"tokLen":3},"end":{"offset":5,"tokLen":1}},"name":"x","type":{"qualType":"int"}}
        ]}"#;
        let tu = parse(json.as_bytes()).unwrap();
        assert_eq!(tu.children.len(), 2);
        let k = &tu.children[0];
        assert_eq!((k.name.as_str(), k.mangled.as_str()), ("vadd", "_Z19__device_stub__vaddPi"));
        assert!(k.targets.global && k.has_body);
        assert_eq!(k.extent(), Some((Rc::from("/a.hip"), 66..221)));
        // The attribute's location switched the file to the header: the variable is there.
        assert_eq!(tu.children[1].begin.as_ref().unwrap().file.as_ref(), "/inc/hip_runtime.h");
    }
}
