//! The device-source entry of a fat binary: the program's own files with every host-only
//! function removed, so that a worker compiles the kernels for its device with nothing of the
//! client but the program.
//!
//! From clang's AST of the translation unit (compiled for the host side, as the host pass
//! sees it):
//! - **files**: the main file and the headers the dependency list names outside the system
//!   directories (ours included as system); each header travels under the name it is included
//!   by, and its `#include` lines are rewritten to that name;
//! - **pruning**: functions (free, member, templates) that are neither `__device__` nor
//!   `__global__`, and host variables of HIP runtime types, are blanked out (newlines kept, so
//!   the worker's diagnostics have the right lines). Host code never runs on the worker, and
//!   without it the source needs no HIP host API there;
//! - **symbols**: every kernel (template instances included) and device variable the host
//!   side registers, by the name `__hipRegisterFunction` gives it, with a C++ expression naming
//!   it for hiprtc's name expressions.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::ast::Decl;

/// The prefix clang gives a kernel's host-side stub in the host compilation.
const STUB_PREFIX: &str = "__device_stub__";

/// A kernel or device variable: the name the host side registers, and an expression for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub registered: String,
    pub expression: String,
}

/// The program's files, pruned, with the symbols to compile.
#[derive(Debug, Default)]
pub struct DeviceSource {
    pub main_name: String,
    pub main_text: String,
    /// (include name, text).
    pub headers: Vec<(String, String)>,
    pub kernels: Vec<Symbol>,
    pub variables: Vec<Symbol>,
}

/// Builds the device source of `main` from its AST (`tu`) and the non-system files of its
/// dependency list (`user_files`, the main file included). `include_dirs` are the `-I`
/// directories, in order, for resolving `#include` lines.
pub fn build(main: &Path, tu: &Decl, user_files: &[PathBuf], include_dirs: &[PathBuf]) -> Result<DeviceSource, String> {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let main = canonical(main);
    let files: Vec<PathBuf> = user_files.iter().map(|p| canonical(p)).collect();
    let by_clang_name: HashMap<Rc<str>, PathBuf> = HashMap::new();
    let mut blanks: HashMap<PathBuf, Vec<Cut>> = HashMap::new();
    let mut kernels = BTreeMap::new();
    let mut variables = BTreeMap::new();
    let mut resolve_cache = by_clang_name;
    let mut in_user_file = |file: &Rc<str>| -> Option<PathBuf> {
        let path = resolve_cache.entry(file.clone()).or_insert_with(|| canonical(Path::new(file.as_ref())));
        files.contains(path).then(|| path.clone())
    };
    visit(tu, &mut |decl: &Decl, scope: Scope| {
        let in_template = scope.in_template;
        let function =
            matches!(decl.kind.as_str(), "FunctionDecl" | "CXXMethodDecl" | "CXXConstructorDecl" | "CXXDestructorDecl" | "CXXConversionDecl");
        let template = decl.kind == "FunctionTemplateDecl";
        if decl.implicit {
            return;
        }
        if template {
            let pattern = decl.children.iter().find(|c| c.kind.ends_with("FunctionDecl") || c.kind.starts_with("CXX"));
            let targets = pattern.map(|p| p.targets).unwrap_or_default();
            if targets.global {
                for instance in decl.children.iter().filter(|c| !c.mangled.is_empty()) {
                    add_kernel(&mut kernels, &instance.mangled);
                }
            }
            if let (Some(pattern), false) = (pattern, targets.on_device() || in_template) {
                blank(host_function_cut(decl, pattern), &mut in_user_file, &mut blanks);
            }
        } else if function && !in_template {
            if decl.targets.global && decl.has_body && !decl.mangled.is_empty() {
                add_kernel(&mut kernels, &decl.mangled);
            }
            if !decl.targets.on_device() {
                blank(host_function_cut(decl, decl), &mut in_user_file, &mut blanks);
            }
        } else if decl.kind == "VarDecl" {
            if decl.targets.device || decl.targets.constant {
                let name = if decl.mangled.is_empty() { decl.name.clone() } else { decl.mangled.clone() };
                if decl.begin.as_ref().is_some_and(|l| in_user_file(&l.file).is_some()) {
                    let expression = demangled(&name).unwrap_or_else(|| name.clone()).replace("(anonymous namespace)::", "");
                    variables.insert(name.clone(), Symbol { registered: name, expression });
                }
            } else if !decl.targets.on_device() && !in_template && !scope.in_class && !usable_on_device(decl) {
                blank(host_variable_cut(decl), &mut in_user_file, &mut blanks);
            }
        }
    });

    // Names: the main file by its file name; headers by how they are included.
    let mut names: HashMap<PathBuf, String> = HashMap::new();
    let main_name = main.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "main.hip".into());
    names.insert(main.clone(), main_name.clone());
    let mut texts: HashMap<PathBuf, String> = HashMap::new();
    for file in &files {
        let mut bytes = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
        if let Some(cuts) = blanks.get_mut(file) {
            bytes = apply_cuts(bytes, cuts);
        }
        let text = String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8", file.display()))?;
        texts.insert(file.clone(), text);
    }
    let mut taken: HashSet<String> = HashSet::from([main_name.clone()]);
    let mut rewritten: HashMap<PathBuf, String> = HashMap::new();
    // Breadth-first from the main file, so names follow include order.
    let mut queue = vec![main.clone()];
    let mut seen: HashSet<PathBuf> = HashSet::from([main.clone()]);
    while let Some(file) = queue.first().cloned() {
        queue.remove(0);
        let Some(text) = texts.get(&file) else { continue };
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut out = String::with_capacity(text.len());
        for line in text.split_inclusive('\n') {
            let Some((quoted, spelled)) = include_target(line) else {
                out.push_str(line);
                continue;
            };
            let mut candidates: Vec<PathBuf> = Vec::new();
            if quoted {
                candidates.push(dir.join(spelled));
            }
            candidates.extend(include_dirs.iter().map(|d| d.join(spelled)));
            let found = candidates.into_iter().map(|c| canonical(&c)).find(|c| texts.contains_key(c));
            let Some(target) = found else {
                out.push_str(line);
                continue;
            };
            let name = names
                .entry(target.clone())
                .or_insert_with(|| {
                    let safe = !spelled.starts_with('/') && !spelled.split('/').any(|p| p == ".." || p == "." || p.is_empty());
                    let name = if safe && !taken.contains(spelled) {
                        spelled.to_string()
                    } else {
                        let base = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                        format!("hip_remote_files/{}/{base}", taken.len())
                    };
                    taken.insert(name.clone());
                    name
                })
                .clone();
            out.push_str(&format!("#include \"{name}\"\n"));
            if seen.insert(target.clone()) {
                queue.push(target);
            }
        }
        rewritten.insert(file, out);
    }
    let main_text = rewritten.remove(&main).ok_or_else(|| format!("{}: not among the compiled files", main.display()))?;
    let mut headers: Vec<(String, String)> = rewritten.into_iter().filter_map(|(path, text)| Some((names.get(&path)?.clone(), text))).collect();
    headers.sort();
    Ok(DeviceSource { main_name, main_text, headers, kernels: expressions(kernels), variables: variables.into_values().collect() })
}

/// Where a declaration is: inside a class, inside a template (kept whole).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Scope {
    in_template: bool,
    in_class: bool,
}

/// Calls `f` on every declaration under `decl` (namespaces, linkage specifications and
/// classes are entered; the members of a class template, and of a class holding one, are "in
/// a template": kept whole).
fn visit(decl: &Decl, f: &mut impl FnMut(&Decl, Scope)) {
    fn walk(decl: &Decl, scope: Scope, f: &mut impl FnMut(&Decl, Scope)) {
        for child in &decl.children {
            f(child, scope);
            match child.kind.as_str() {
                "NamespaceDecl" | "LinkageSpecDecl" => walk(child, scope, f),
                // A class with a nested class template: that template's members are kept whole
                // and may call any member of the class, so its members are kept whole too.
                "CXXRecordDecl" => {
                    let in_template = scope.in_template || child.children.iter().any(|c| c.kind == "ClassTemplateDecl");
                    walk(child, Scope { in_template, in_class: true }, f)
                }
                "ClassTemplateDecl" => walk(child, Scope { in_template: true, in_class: true }, f),
                _ => {}
            }
        }
    }
    walk(decl, Scope::default(), f)
}

/// What of a host declaration the device source leaves out.
#[derive(Clone, Debug, PartialEq, Eq)]
enum CutKind {
    /// The whole declaration.
    Whole,
    /// A function's body (`{` … `}`), replaced by `;`: the declaration stays, so that kept
    /// code (class and function templates, whose bodies are kept whole) still finds the name.
    Body,
    /// A function template's body, replaced by [`UNREACHABLE_BODY`]: the template stays
    /// defined, so that explicit instantiations of it (`template void f<int>(int*);`, which
    /// need a definition, and `extern template …`) compile, as ggml's instance files have them.
    /// clang's AST does not say which instances are explicit, so every host function template
    /// keeps a definition; one that never runs.
    TemplateBody,
    /// A constructor's member initialisers and body (from the `:` after the parameter list,
    /// found by scanning from the name at this offset), replaced by `;`.
    ConstructorBody { name: usize },
    /// A host variable becomes a declaration (`extern`, its initialiser left out: the range is
    /// the whole declaration; the name ends at `name_end`), so that kept code naming it (a
    /// `using` declaration, a template) still compiles, while no host code runs on the worker.
    ExternVariable { name_end: usize },
}

/// What a host function template's body becomes: a definition that never runs, for any
/// return type and on any host compiler (GCC and clang both know the builtin).
const UNREACHABLE_BODY: &[u8] = b"{ __builtin_unreachable(); }";

/// A part of one file to blank out (newlines kept).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Cut {
    file: Rc<str>,
    range: std::ops::Range<usize>,
    kind: CutKind,
    /// The range ends inside a macro expansion: the blank runs on to the end of the
    /// macro's invocation (its name and parenthesised arguments).
    ends_in_macro: bool,
}

impl Cut {
    /// The whole extent of `decl`, if it lies in one file.
    fn whole(decl: &Decl) -> Option<Cut> {
        let (file, range) = decl.extent()?;
        Some(Cut { file, range, kind: CutKind::Whole, ends_in_macro: decl.end.as_ref().is_some_and(|e| e.macro_expansion) })
    }
}

/// What to leave out of the host function `decl` (a function, or a function template whose
/// pattern is `pattern`): its body where the declaration can stand alone, else all of it.
/// `None`: nothing (a declaration without a body, or a `constexpr` function, which device
/// code may call).
fn host_function_cut(decl: &Decl, pattern: &Decl) -> Option<Cut> {
    if !pattern.has_body || pattern.constexpr || pattern.defaulted {
        return None;
    }
    let deduced = (pattern.qual_type.starts_with("auto") || pattern.qual_type.starts_with("decltype(auto)")) && !pattern.qual_type.contains("->");
    // A function template whose return type its body deduces: kept whole, since a declaration
    // alone cannot be called by the kept code that names it, and a template emits nothing
    // unless device code instantiates it.
    if deduced && decl.kind == "FunctionTemplateDecl" {
        return None;
    }
    let in_macro = |l: &Option<crate::ast::Loc>| l.as_ref().is_some_and(|l| l.macro_expansion);
    // A definition whose declaration exists elsewhere (out-of-line members, `ns::f`) cannot
    // be left as a bare declaration; neither can one written by a macro, a function-try-block,
    // nor one whose return type is deduced from its body.
    // A function template's definition keeps a body that never runs instead (an out-of-line
    // one too: `template <class T> void S::f(T) { … }` stays a valid definition); a
    // constructor cannot, since its members and bases may need initialisers.
    let body = pattern.body.as_ref().filter(|(b, e)| !b.macro_expansion && !e.macro_expansion && b.file == e.file);
    let constructor = pattern.kind == "CXXConstructorDecl";
    let template_body = decl.kind == "FunctionTemplateDecl" && !constructor;
    let redeclaration = (decl.redeclaration || pattern.redeclaration) && !template_body;
    let whole = redeclaration || deduced || in_macro(&decl.begin) || in_macro(&pattern.loc) || body.is_none();
    if whole {
        return Cut::whole(decl);
    }
    let (open, close) = body?;
    let kind = match &pattern.loc {
        Some(name) if constructor && name.file == open.file && name.offset < open.offset => CutKind::ConstructorBody { name: name.offset },
        _ if template_body => CutKind::TemplateBody,
        _ => CutKind::Body,
    };
    Some(Cut { file: open.file.clone(), range: open.offset..close.offset + close.tok_len, kind, ends_in_macro: false })
}

/// What to leave out of a host variable at namespace scope: its initialiser, the rest made an
/// `extern` declaration; all of it when it redeclares one (an out-of-line static member), or a
/// macro writes it.
fn host_variable_cut(decl: &Decl) -> Option<Cut> {
    let mut cut = Cut::whole(decl)?;
    let in_macro = |l: &Option<crate::ast::Loc>| l.as_ref().is_some_and(|l| l.macro_expansion);
    // An initialiser ending in a macro (`= 4 * MIB`) is fine: the cut runs on through the
    // macro's arguments (`ends_in_macro`).
    if decl.redeclaration || in_macro(&decl.begin) || in_macro(&decl.loc) {
        return Some(cut);
    }
    let name = decl.loc.as_ref().filter(|n| n.file == cut.file && cut.range.contains(&n.offset))?;
    cut.kind = CutKind::ExternVariable { name_end: name.offset + name.tok_len };
    Some(cut)
}

/// Whether device code may use the host variable `decl` (so it stays): `constexpr`, a
/// declaration (`extern`, no initialiser), or a constant of a scalar type. Any other host
/// variable is left out: device code cannot use it, and its initialiser would run host code.
fn usable_on_device(decl: &Decl) -> bool {
    if decl.constexpr || (decl.extern_storage && !decl.has_init) {
        return true;
    }
    let ty = if decl.desugared_type.is_empty() { &decl.qual_type } else { &decl.desugared_type };
    // Array bounds do not matter; `const` must qualify the variable itself (after the last `*`).
    let ty: String = ty.split('[').next().unwrap_or_default().to_string();
    let words = |t: &str| -> Vec<String> { t.split(|c: char| c.is_whitespace() || c == '*').filter(|w| !w.is_empty()).map(str::to_string).collect() };
    const SCALAR: &[&str] = &[
        "const", "volatile", "unsigned", "signed", "char", "short", "int", "long", "float", "double", "bool", "wchar_t", "char8_t", "char16_t",
        "char32_t", "_Float16", "__int128", "void",
    ];
    let top_level = ty.rsplit('*').next().unwrap_or_default();
    words(top_level).iter().any(|w| w == "const") && words(&ty).iter().all(|w| SCALAR.contains(&w.as_str()))
}

/// Blanks `cut` when it lies in one of the program's files.
fn blank(cut: Option<Cut>, in_user_file: &mut impl FnMut(&Rc<str>) -> Option<PathBuf>, blanks: &mut HashMap<PathBuf, Vec<Cut>>) {
    if let Some(cut) = cut {
        if let Some(path) = in_user_file(&cut.file) {
            blanks.entry(path).or_default().push(cut);
        }
    }
}

/// Applies every cut of one file, keeping newlines so that lines stay where they were: bodies
/// become `;`, variables `extern` declarations, whole declarations blanks (a cut inside a
/// whole one is dropped).
fn apply_cuts(mut bytes: Vec<u8>, cuts: &[Cut]) -> Vec<u8> {
    // Resolve each cut's range against the text.
    let mut resolved: Vec<(std::ops::Range<usize>, &Cut)> = cuts
        .iter()
        .map(|cut| {
            let mut range = cut.range.start.min(bytes.len())..cut.range.end.min(bytes.len());
            range.start = attribute_opening(&bytes, range.start);
            if cut.ends_in_macro {
                range.end = macro_invocation_end(&bytes, range.end);
            }
            if let CutKind::ConstructorBody { name } = cut.kind {
                range.start = initialiser_colon(&bytes, name, range.start).unwrap_or(range.start);
            }
            (range, cut)
        })
        .collect();
    let wholes: Vec<std::ops::Range<usize>> = resolved.iter().filter(|(_, c)| c.kind == CutKind::Whole).map(|(r, _)| r.clone()).collect();
    resolved.retain(|(r, c)| !wholes.iter().any(|w| w.start <= r.start && r.end <= w.end && (c.kind != CutKind::Whole || w != r)));
    resolved.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
    resolved.dedup_by_key(|(r, _)| r.start);
    // Blanks, but keeps the lines of conditional and macro directives inside the cut: a
    // definition may span `#if … #else … #endif` (one macro invocation per branch), and
    // cutting a directive would unbalance the rest of the file.
    let spaces = |bytes: &mut [u8]| {
        let mut line_start = true;
        let mut keep = false;
        for i in 0..bytes.len() {
            if line_start {
                keep = is_kept_directive(&bytes[i..]);
            }
            line_start = bytes[i] == b'\n';
            if !keep && bytes[i] != b'\n' {
                bytes[i] = b' ';
            }
        }
    };
    // From the end backwards, so that an insertion does not move what is still to be cut.
    for (range, cut) in resolved {
        if range.is_empty() {
            continue;
        }
        match cut.kind {
            CutKind::Whole => spaces(&mut bytes[range]),
            CutKind::Body | CutKind::ConstructorBody { .. } => {
                spaces(&mut bytes[range.clone()]);
                bytes[range.start] = b';';
            }
            CutKind::TemplateBody => {
                spaces(&mut bytes[range.clone()]);
                // Over the blanked body where it fits on the body's first line, else inserted
                // (that line grows; no line moves).
                let first_line = bytes[range.clone()].iter().position(|&b| b == b'\n').unwrap_or(range.len());
                if first_line >= UNREACHABLE_BODY.len() {
                    bytes[range.start..range.start + UNREACHABLE_BODY.len()].copy_from_slice(UNREACHABLE_BODY);
                } else {
                    bytes.splice(range.start..range.start, UNREACHABLE_BODY.iter().copied());
                }
            }
            CutKind::ExternVariable { name_end } => match extern_declaration(&bytes, range.clone(), name_end) {
                Some(init) => {
                    spaces(&mut bytes[init..range.end]);
                    if bytes[range.start..].starts_with(b"static") {
                        bytes[range.start..range.start + 6].copy_from_slice(b"extern");
                    } else {
                        bytes.splice(range.start..range.start, b"extern ".iter().copied());
                    }
                }
                None => spaces(&mut bytes[range]),
            },
        }
    }
    bytes
}

/// Where the attribute list a declaration starts with opens, when `start` is inside one:
/// clang begins a leading `[[noreturn]]` at `noreturn` and `__attribute__((cold))` at `cold`,
/// and a cut must take the brackets too (`[[` alone would be left before the next line).
fn attribute_opening(bytes: &[u8], start: usize) -> usize {
    let before_spaces = |mut i: usize| {
        while i > 0 && bytes[i - 1].is_ascii_whitespace() {
            i -= 1;
        }
        i
    };
    let i = before_spaces(start);
    if bytes[..i].ends_with(b"[[") {
        return i - 2;
    }
    if bytes[..i].ends_with(b"((") {
        let j = before_spaces(i - 2);
        if bytes[..j].ends_with(b"__attribute__") {
            return j - b"__attribute__".len();
        }
    }
    start
}

/// Whether a line (from its start) is a preprocessor directive a cut keeps: conditionals
/// (`#if`, `#ifdef`, `#ifndef`, `#elif`, `#else`, `#endif`) and `#define`/`#undef`.
fn is_kept_directive(line: &[u8]) -> bool {
    let text = line.iter().position(|&b| b != b' ' && b != b'\t').map_or(&line[..0], |i| &line[i..]);
    let Some(rest) = text.strip_prefix(b"#") else { return false };
    let word_start = rest.iter().position(|&b| b != b' ' && b != b'\t').unwrap_or(rest.len());
    let word: Vec<u8> = rest[word_start..].iter().copied().take_while(|b| b.is_ascii_alphabetic()).collect();
    matches!(word.as_slice(), b"if" | b"ifdef" | b"ifndef" | b"elif" | b"else" | b"endif" | b"define" | b"undef")
}

/// Where the initialiser of the variable declared in `range` (its name ending at `name_end`)
/// starts (`range.end` when it has none), if the declaration can be made `extern`: not
/// `inline`, nor of a deduced type (`auto`).
fn extern_declaration(bytes: &[u8], range: std::ops::Range<usize>, name_end: usize) -> Option<usize> {
    if !(range.start..=range.end).contains(&name_end) {
        return None;
    }
    let head = std::str::from_utf8(&bytes[range.start..name_end]).ok()?;
    let words: Vec<&str> = head.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).collect();
    if words.iter().any(|w| matches!(*w, "inline" | "auto" | "decltype" | "constinit" | "extern")) {
        return None;
    }
    // After the name: array bounds and attributes, then `=`, `(` or `{`.
    let mut i = name_end;
    let mut depth = 0usize;
    while i < range.end {
        match bytes[i] {
            b'[' => depth += 1,
            b']' => depth = depth.saturating_sub(1),
            b'=' | b'(' | b'{' if depth == 0 => {
                if bytes[name_end..i].windows(13).any(|w| w == b"__attribute__") {
                    return None;
                }
                return Some(i);
            }
            _ => {}
        }
        i += 1;
    }
    Some(range.end)
}

/// The end of a macro invocation whose name ends at `at`: past its parenthesised arguments,
/// if any follow.
fn macro_invocation_end(bytes: &[u8], at: usize) -> usize {
    let mut i = at;
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    if bytes.get(i) != Some(&b'(') {
        return at;
    }
    let mut depth = 0usize;
    while i < bytes.len() {
        match bytes[i] {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    at
}

/// The `:` that starts a constructor's member initialisers: after the parameter list that
/// follows the name at `name`, before the body at `body`.
fn initialiser_colon(bytes: &[u8], name: usize, body: usize) -> Option<usize> {
    let text = bytes.get(name..body)?;
    let open = text.iter().position(|&b| b == b'(')?;
    let mut depth = 0usize;
    let mut close = None;
    for (i, &b) in text.iter().enumerate().skip(open) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let after = close? + 1;
    let rest = &text[after..];
    (0..rest.len()).find(|&i| rest[i] == b':' && rest.get(i + 1) != Some(&b':') && (i == 0 || rest[i - 1] != b':')).map(|i| name + after + i)
}

/// The name the host side registers for the kernel whose stub is `stub_mangled`
/// (`_Z19__device_stub__vaddPi` → `_Z4vaddPi`; `extern "C"` kernels: `__device_stub__k` → `k`).
pub fn registered_name(stub_mangled: &str) -> Option<String> {
    if let Some(plain) = stub_mangled.strip_prefix(STUB_PREFIX) {
        return Some(plain.to_string());
    }
    let at = stub_mangled.find(STUB_PREFIX)?;
    let digits_start = stub_mangled[..at].rfind(|c: char| !c.is_ascii_digit()).map_or(0, |i| i + 1);
    let len: usize = stub_mangled[digits_start..at].parse().ok()?;
    let new_len = len.checked_sub(STUB_PREFIX.len()).filter(|&n| n > 0)?;
    Some(format!("{}{new_len}{}", &stub_mangled[..digits_start], &stub_mangled[at + STUB_PREFIX.len()..]))
}

fn add_kernel(kernels: &mut BTreeMap<String, ()>, stub: &str) {
    if let Some(name) = registered_name(stub) {
        kernels.insert(name, ());
    }
}

fn demangled(name: &str) -> Option<String> {
    let symbol = cpp_demangle::Symbol::new(name).ok()?;
    symbol.demangle().ok()
}

/// Splits a demangled function (`void ns::k<float>(float*, int)`) into its qualified name
/// (`ns::k<float>`) and parameter list (`float*, int`).
fn split_function(demangled: &str) -> Option<(String, String)> {
    let text = demangled.trim_end();
    if !text.ends_with(')') {
        return None;
    }
    // The parameter list is the last balanced parenthesis group.
    let mut depth = 0i32;
    let mut open = None;
    for (i, c) in text.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    open = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let open = open?;
    let params = text[open + 1..text.len() - 1].to_string();
    let mut name = text[..open].trim();
    // A template's return type comes first (`void k<float>`); names never start with `void `.
    if let Some(rest) = name.strip_prefix("void ") {
        name = rest.trim();
    }
    Some((name.replace("(anonymous namespace)::", ""), if params == "void" { String::new() } else { params }))
}

/// An expression per kernel: its name, or a cast to its type where the name is overloaded.
fn expressions(kernels: BTreeMap<String, ()>) -> Vec<Symbol> {
    let parts: Vec<(String, Option<(String, String)>)> =
        kernels.into_keys().map(|k| (k.clone(), demangled(&k).and_then(|d| split_function(&d)))).collect();
    let mut uses: HashMap<String, usize> = HashMap::new();
    for (_, p) in &parts {
        if let Some((name, _)) = p {
            *uses.entry(name.clone()).or_default() += 1;
        }
    }
    parts
        .into_iter()
        .map(|(registered, p)| {
            let expression = match p {
                Some((name, params)) if uses.get(&name).copied().unwrap_or(0) > 1 => {
                    format!("static_cast<void(*)({params})>(&{})", template_arguments_as_cpp(&name))
                }
                Some((name, _)) => template_arguments_as_cpp(&name),
                None => registered.clone(),
            };
            Symbol { registered, expression }
        })
        .collect()
}

/// A demangled name's template arguments written as C++ takes them: the demangler's
/// `k<&op_add(float, float), float>` (a function's address with its parameter list) becomes
/// `k<&op_add, float>` (the template parameter's type picks the overload), and an empty
/// parameter pack's trailing `, >` (`k<float, >`) becomes `k<float>`.
fn template_arguments_as_cpp(name: &str) -> String {
    let mut out = function_addresses_as_names(name);
    while let Some(at) = out.find(", >") {
        out.replace_range(at..at + 3, ">");
    }
    out
}

fn function_addresses_as_names(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len());
    let mut i = 0;
    while i < chars.len() {
        out.push(chars[i]);
        if chars[i] != '&' || !chars.get(i + 1).is_some_and(|c| c.is_alphabetic() || *c == '_' || *c == ':') {
            i += 1;
            continue;
        }
        // What follows `&` up to a top-level `(` (a function's parameter list), `,` or `>`.
        let mut j = i + 1;
        let mut angle = 0usize;
        while j < chars.len() {
            match chars[j] {
                '<' => angle += 1,
                '>' if angle == 0 => break,
                '>' => angle -= 1,
                '(' | ',' if angle == 0 => break,
                _ => {}
            }
            j += 1;
        }
        if chars.get(j) != Some(&'(') {
            i += 1;
            continue;
        }
        // `&void f<int>(int*)`: a function template's instance comes with its return type
        // first; the name is what follows the last top-level space.
        let mut name_start = i + 1;
        let mut angle = 0usize;
        for (k, &c) in chars.iter().enumerate().take(j).skip(i + 1) {
            match c {
                '<' => angle += 1,
                '>' => angle = angle.saturating_sub(1),
                ' ' if angle == 0 => name_start = k + 1,
                _ => {}
            }
        }
        // Its own template arguments may hold further addresses.
        out.push_str(&function_addresses_as_names(&chars[name_start..j].iter().collect::<String>()));
        // The parameter list: dropped (balanced parentheses).
        let mut depth = 0usize;
        let mut k = j;
        while k < chars.len() {
            match chars[k] {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            k += 1;
        }
        i = (k + 1).min(chars.len());
    }
    out
}

/// The target of an `#include` line: (quoted, spelled name).
fn include_target(line: &str) -> Option<(bool, &str)> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start().strip_prefix("include")?.trim_start();
    if let Some(r) = rest.strip_prefix('"') {
        return Some((true, &r[..r.find('"')?]));
    }
    let r = rest.strip_prefix('<')?;
    Some((false, &r[..r.find('>')?]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn stub_names_become_device_names() {
        assert_eq!(registered_name("_Z19__device_stub__vaddPKfS0_Pfi").as_deref(), Some("_Z4vaddPKfS0_Pfi"));
        assert_eq!(registered_name("_Z20__device_stub__scaleIfEvPT_S0_i").as_deref(), Some("_Z5scaleIfEvPT_S0_i"));
        assert_eq!(registered_name("_ZN2ns16__device_stub__kEPi").as_deref(), Some("_ZN2ns1kEPi"));
        assert_eq!(registered_name("__device_stub__plain").as_deref(), Some("plain"));
        assert_eq!(registered_name("_Z4vaddPi"), None);
    }

    #[test]
    fn demangled_kernels_become_expressions() {
        let ks: BTreeMap<String, ()> =
            ["_Z4vaddPKfS0_Pfi", "_Z5scaleIfEvPT_S0_i", "_Z5scaleIdEvPT_S0_i", "_ZN12_GLOBAL__N_11kEPi", "_Z1fPi", "_Z1fPf", "plain"]
                .iter()
                .map(|k| (k.to_string(), ()))
                .collect();
        let got: HashMap<String, String> = expressions(ks).into_iter().map(|s| (s.registered, s.expression)).collect();
        assert_eq!(got["_Z4vaddPKfS0_Pfi"], "vadd");
        assert_eq!(got["_Z5scaleIfEvPT_S0_i"], "scale<float>");
        assert_eq!(got["_Z5scaleIdEvPT_S0_i"], "scale<double>");
        assert_eq!(got["_ZN12_GLOBAL__N_11kEPi"], "k");
        assert_eq!(got["_Z1fPi"], "static_cast<void(*)(int*)>(&f)");
        assert_eq!(got["_Z1fPf"], "static_cast<void(*)(float*)>(&f)");
        assert_eq!(got["plain"], "plain");
    }

    #[test]
    fn a_class_holding_a_class_template_is_kept_whole() {
        let decl = |kind: &str, name: &str, children: Vec<Decl>| Decl { kind: kind.into(), name: name.into(), children, ..Decl::default() };
        // class Parser { template <class T> class Arg { bool parse() { Parser::parse(); } }; static int parse(); };
        // struct Plain { void host_only(); };
        let arg = decl("ClassTemplateDecl", "Arg", vec![decl("CXXRecordDecl", "Arg", vec![decl("CXXMethodDecl", "arg_parse", vec![])])]);
        let parser = decl("CXXRecordDecl", "Parser", vec![arg, decl("CXXMethodDecl", "parse", vec![])]);
        let plain = decl("CXXRecordDecl", "Plain", vec![decl("CXXMethodDecl", "host_only", vec![])]);
        let tu = decl("TranslationUnitDecl", "", vec![parser, plain]);
        let mut seen = HashMap::new();
        visit(&tu, &mut |d: &Decl, scope: Scope| {
            seen.insert(d.name.clone(), scope.in_template);
        });
        assert!(seen["parse"] && seen["arg_parse"], "members of a class holding a template are kept: {seen:?}");
        assert!(!seen["host_only"], "other classes' host-only members are not: {seen:?}");
    }

    /// A cut of `what` (the first occurrence of it in `text`) of the given kind.
    fn cut_of(text: &str, what: &str, kind: CutKind) -> Cut {
        let start = text.find(what).unwrap_or_else(|| panic!("{what:?} not in the text"));
        Cut { file: Rc::from("f"), range: start..start + what.len(), kind, ends_in_macro: false }
    }

    fn applied(text: &str, cuts: &[Cut]) -> String {
        let out = String::from_utf8(apply_cuts(text.as_bytes().to_vec(), cuts)).unwrap();
        assert_eq!(out.lines().count(), text.lines().count(), "lines stay where they were:\n{out}");
        out.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn host_bodies_leave_declarations() {
        let text = "std::string f(int x) {\n  return g(x);\n}\nstruct S { S(int a) : m(a), n{a} { run(); } int m, n; };\n";
        let body = cut_of(text, "{\n  return g(x);\n}", CutKind::Body);
        let ctor_name = text.find("S(int").unwrap();
        let ctor = cut_of(text, "{ run(); }", CutKind::ConstructorBody { name: ctor_name });
        assert_eq!(applied(text, &[body, ctor]), "std::string f(int x) ; struct S { S(int a) ; int m, n; };");
    }

    #[test]
    fn host_variables_become_extern_declarations() {
        let text = "Registry registry(1, 2);\nstatic int counts[4] = {1};\nbool done = false;\nauto lambda = [] {};\nFoo plain;\n";
        let cuts: Vec<Cut> = [
            ("Registry registry(1, 2)", "Registry registry"),
            ("static int counts[4] = {1}", "static int counts"),
            ("bool done = false", "bool done"),
            ("auto lambda = [] {}", "auto lambda"),
            ("Foo plain", "Foo plain"),
        ]
        .iter()
        .map(|(decl, name)| {
            let name_end = text.find(name).unwrap() + name.len();
            cut_of(text, decl, CutKind::ExternVariable { name_end })
        })
        .collect();
        assert_eq!(applied(text, &cuts), "extern Registry registry ; extern int counts[4] ; extern bool done ; ; extern Foo plain;");
    }

    #[test]
    fn a_variable_whose_initialiser_ends_in_a_macro_stays_declared() {
        use crate::ast::Loc;
        let text = "size_t N = 4 * MIB_OF(2);\n";
        let loc = |offset: usize, tok_len: usize, macro_expansion: bool| Some(Loc { file: Rc::from("f"), offset, tok_len, macro_expansion });
        // clang puts the end of `4 * MIB_OF(2)` at the macro's name.
        let var = Decl {
            kind: "VarDecl".into(),
            begin: loc(0, 6, false),
            loc: loc(7, 1, false),
            end: loc(15, 6, true),
            qual_type: "size_t".into(),
            ..Decl::default()
        };
        let cut = host_variable_cut(&var).unwrap();
        assert!(matches!(cut.kind, CutKind::ExternVariable { .. }) && cut.ends_in_macro, "{cut:?}");
        assert_eq!(applied(text, &[cut]), "extern size_t N ;");
    }

    #[test]
    fn a_cut_across_conditional_branches_keeps_the_directives() {
        // One macro-written definition per branch (hip-tests' TEMPLATE_TEST_CASE under `#if HT_AMD`).
        let text = "#if A\nTEST(x, 1) {\n#else\nTEST(x, 2) {\n#endif\n  body();\n}\nint keep;\n";
        let cut = cut_of(text, "TEST(x, 1) {\n#else\nTEST(x, 2) {\n#endif\n  body();\n}", CutKind::Whole);
        let out = String::from_utf8(apply_cuts(text.as_bytes().to_vec(), &[cut])).unwrap();
        let lines: Vec<&str> = out.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        assert_eq!(lines, ["#if A", "#else", "#endif", "int keep;"]);
    }

    /// A location in file `f` at the first occurrence of `what` after byte `from`.
    fn loc_of(text: &str, what: &str, from: usize) -> crate::ast::Loc {
        let offset = from + text[from..].find(what).unwrap_or_else(|| panic!("{what:?} not in the text after {from}"));
        crate::ast::Loc { file: Rc::from("f"), offset, tok_len: what.len(), macro_expansion: false }
    }

    /// A host function (template) as clang's AST gives it: `decl` starts at `begin`, is named
    /// `name`, and has the body from `open` to the last `}` of the text after it.
    fn host_function(text: &str, kind: &str, begin: &str, name: &str, open: &str, redeclaration: bool) -> Decl {
        let begin = loc_of(text, begin, 0);
        let name = loc_of(text, name, begin.offset);
        let open = loc_of(text, open, name.offset);
        let close_at = open.offset + text[open.offset..].find("}\n").unwrap();
        let close = crate::ast::Loc { offset: close_at, tok_len: 1, ..open.clone() };
        Decl {
            kind: kind.into(),
            name: text[name.offset..name.offset + name.tok_len].into(),
            begin: Some(begin),
            loc: Some(name),
            end: Some(close.clone()),
            has_body: true,
            body: Some((open, close)),
            redeclaration,
            ..Decl::default()
        }
    }

    fn template_of(pattern: Decl) -> Decl {
        let begin = pattern.begin.clone().map(|b| crate::ast::Loc { offset: 0, ..b });
        Decl { kind: "FunctionTemplateDecl".into(), begin, end: pattern.end.clone(), children: vec![pattern], ..Decl::default() }
    }

    /// Explicit instantiation definitions need a definition of the template: a host function
    /// template keeps one whose body never runs, an out-of-line member template too; a
    /// constructor template and plain functions keep their former cuts.
    #[test]
    fn host_function_templates_stay_defined_for_explicit_instances() {
        let free = "template <typename T>\nvoid launch(T* x, hipStream_t s) {\n  k<<<1, 1, 0, s>>>(x);\n}\n";
        let pattern = host_function(free, "FunctionDecl", "void", "launch", "{", false);
        let cut = host_function_cut(&template_of(pattern.clone()), &pattern).unwrap();
        assert_eq!(cut.kind, CutKind::TemplateBody);
        assert_eq!(applied(free, &[cut]), "template <typename T> void launch(T* x, hipStream_t s) { __builtin_unreachable(); }");

        // Out of line (a redeclaration), and a body whose first line holds the whole stub.
        let member = "template <typename T>\nint S::count(T v) const {   return helper(v);             }\n";
        let pattern = host_function(member, "CXXMethodDecl", "int", "count", "{", true);
        let cut = host_function_cut(&Decl { redeclaration: true, ..template_of(pattern.clone()) }, &pattern).unwrap();
        assert_eq!(cut.kind, CutKind::TemplateBody);
        let out = String::from_utf8(apply_cuts(member.as_bytes().to_vec(), &[cut])).unwrap();
        assert_eq!(out.len(), member.len(), "written over the blanked body: {out:?}");
        assert_eq!(
            out.split_whitespace().collect::<Vec<_>>().join(" "),
            "template <typename T> int S::count(T v) const { __builtin_unreachable(); }"
        );

        let ctor = "template <typename T>\nS::S(T v) : m(v) {\n  run();\n}\n";
        let pattern = host_function(ctor, "CXXConstructorDecl", "S::S", "S(", "{", false);
        let cut = host_function_cut(&template_of(pattern.clone()), &pattern).unwrap();
        assert!(matches!(cut.kind, CutKind::ConstructorBody { .. }), "{cut:?}");

        // A return type its body deduces: the template stays whole (a stub would deduce `void`).
        let deduced = Decl { qual_type: "decltype(auto) (T)".into(), ..host_function(free, "FunctionDecl", "void", "launch", "{", false) };
        assert!(host_function_cut(&template_of(deduced.clone()), &deduced).is_none());

        let plain = "int S::count(int v) const {\n  return helper(v);\n}\n";
        let function = host_function(plain, "CXXMethodDecl", "int", "count", "{", true);
        assert_eq!(host_function_cut(&function, &function).unwrap().kind, CutKind::Whole, "a plain out-of-line definition still goes whole");
    }

    /// The device source of ggml's pattern compiles on a host compiler (the worker's oracle):
    /// a host template in a header with `extern` instances, the instances defined after it.
    #[test]
    fn explicit_instances_of_host_templates_compile() {
        let Some(cxx) = ["c++", "g++", "clang++"].into_iter().find(|c| Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()))
        else {
            transport_core::test_skip::skip("no host C++ compiler to compile the device source with");
            return;
        };
        let text = "typedef struct stream* hipStream_t;\n\
                    template <typename T, int N>\nvoid launch(T* x, hipStream_t s) {\n  host_only_api(x, N, s);\n}\n\
                    struct S { template <typename T> int count(T v) const; };\n\
                    template <typename T>\nint S::count(T v) const {\n  return host_only_api(v);\n}\n\
                    #define DECL_CASE(T, N) template void launch<T, N>(T* x, hipStream_t s)\n\
                    extern DECL_CASE(float, 2);\nextern template int S::count<int>(int) const;\n\
                    DECL_CASE(float, 2);\ntemplate int S::count<int>(int) const;\n";
        let launch = host_function(text, "FunctionDecl", "void", "launch", "{", false);
        let count = host_function(text, "CXXMethodDecl", "int S::count", "count", "{", true);
        let launch_start = text.find("template <typename T, int N>").unwrap();
        let count_start = text.rfind("template <typename T>\nint").unwrap();
        let templates = [(launch, launch_start), (count, count_start)].map(|(pattern, start)| {
            let mut decl = template_of(pattern.clone());
            decl.begin.as_mut().unwrap().offset = start;
            decl.redeclaration = pattern.redeclaration;
            host_function_cut(&decl, &pattern).unwrap()
        });
        let source = String::from_utf8(apply_cuts(text.as_bytes().to_vec(), &templates)).unwrap();
        assert!(!source.contains("host_only_api"), "{source}");
        let dir = std::env::temp_dir().join(format!("hipcc-explicit-instances-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("device_source.cpp");
        std::fs::write(&file, &source).unwrap();
        let out = Command::new(cxx).args(["-std=c++17", "-fsyntax-only"]).arg(&file).output().unwrap();
        std::fs::remove_dir_all(&dir).ok();
        assert!(out.status.success(), "{cxx} rejects the device source:\n{source}\n{}", String::from_utf8_lossy(&out.stderr));
    }

    #[test]
    fn a_leading_attribute_goes_with_its_declaration() {
        // clang's range of `[[noreturn]] void f()` (ggml_cuda_error) starts at `noreturn`.
        let text = "[[noreturn]]\nvoid fail(const char* m) {\n  abort();\n}\n__attribute__ (( cold )) void slow() { x(); }\nint keep;\n";
        let fail_from = text.find("noreturn").unwrap();
        let fail = Cut { range: fail_from..text.find("}\n").unwrap() + 1, ..cut_of(text, "noreturn", CutKind::Whole) };
        let slow_from = text.find("cold").unwrap();
        let slow = Cut { range: slow_from..text.find("); }").unwrap() + 4, ..cut_of(text, "cold", CutKind::Whole) };
        assert_eq!(applied(text, &[fail, slow]), "int keep;");
        assert_eq!(attribute_opening(b"int a; [[x]]", 9), 7);
        assert_eq!(attribute_opening(b"f((a)); int b;", 8), 8, "not an attribute");
        assert_eq!(attribute_opening(b"x", 0), 0);
    }

    #[test]
    fn a_whole_cut_covers_the_cuts_inside_it_and_macro_arguments() {
        let text = "TEST(\"a\", x) { body(); }\nREGISTER(thing, (1, 2));\nint keep;\n";
        let test = cut_of(text, "TEST(\"a\", x) { body(); }", CutKind::Whole);
        let inner = cut_of(text, "{ body(); }", CutKind::Body);
        // A declaration a macro writes: clang puts both its ends at the macro's name.
        let register = Cut { ends_in_macro: true, ..cut_of(text, "REGISTER", CutKind::Whole) };
        assert_eq!(applied(text, &[inner, test, register]), "; int keep;");
    }

    #[test]
    fn only_constant_scalars_stay_as_host_variables() {
        let var = |qual_type: &str, desugared: &str| Decl {
            kind: "VarDecl".into(),
            qual_type: qual_type.into(),
            desugared_type: desugared.into(),
            ..Decl::default()
        };
        assert!(usable_on_device(&var("const int", "")));
        assert!(usable_on_device(&var("const size_t", "const unsigned long")));
        assert!(usable_on_device(&var("const char *const", "")));
        assert!(usable_on_device(&Decl { constexpr: true, ..var("Foo", "") }));
        assert!(!usable_on_device(&var("int", "")));
        assert!(!usable_on_device(&var("const std::string", "const std::basic_string<char>")));
        assert!(!usable_on_device(&var("const char *", "")), "a pointer to const is not itself constant");
    }

    #[test]
    fn include_lines_are_recognised() {
        assert_eq!(include_target("#include \"a/b.h\"\n"), Some((true, "a/b.h")));
        assert_eq!(include_target("  #  include <vector>  // x\n"), Some((false, "vector")));
        assert_eq!(include_target("#define include \"x\"\n"), None);
        assert_eq!(include_target("int x; // #include \"y\"\n"), None);
    }

    #[test]
    fn function_addresses_in_template_arguments_are_names() {
        assert_eq!(
            function_addresses_as_names("k_bin_bcast<&op_add(float, float), __hip_bfloat16, __hip_bfloat16 const*>"),
            "k_bin_bcast<&op_add, __hip_bfloat16, __hip_bfloat16 const*>"
        );
        assert_eq!(function_addresses_as_names("k<&ns::f<int>(int (*)(int)), 3>"), "k<&ns::f<int>, 3>");
        assert_eq!(function_addresses_as_names("k<(ggml_type)2, true>"), "k<(ggml_type)2, true>");
        assert_eq!(function_addresses_as_names("k<&g>"), "k<&g>");
        assert_eq!(
            function_addresses_as_names(
                "k_get_rows_kq<__hip_bfloat16, &void dequantize_q2_K<__hip_bfloat16>(void const*, long, __hip_bfloat16*, int)>"
            ),
            "k_get_rows_kq<__hip_bfloat16, &dequantize_q2_K<__hip_bfloat16>>"
        );
        assert_eq!(function_addresses_as_names("c<&void one<a, b>(char const*, char*)>"), "c<&one<a, b>>");
        assert_eq!(
            function_addresses_as_names(
                "cpy_q_f32<&void cpy_blck_q_f32<&dequantize_q4_0(void const*, long, int, float2&), 32>(char const*, char*), 32>"
            ),
            "cpy_q_f32<&cpy_blck_q_f32<&dequantize_q4_0, 32>, 32>"
        );
        assert_eq!(template_arguments_as_cpp("k<&op_repeat(float, float), float, >"), "k<&op_repeat, float>");
        assert_eq!(template_arguments_as_cpp("k<a<int, >, >"), "k<a<int>>");
        let mangled = "_Z11k_bin_bcastIXadL_ZL6op_addffEEffPKfEvv";
        let got: Vec<Symbol> = expressions([(mangled.to_string(), ())].into_iter().collect());
        assert_eq!(got[0].expression, "k_bin_bcast<&op_add, float, float, float const*>");
    }
}
