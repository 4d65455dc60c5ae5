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
    let mut blanks: Blanks = HashMap::new();
    let mut kernels = BTreeMap::new();
    let mut variables = BTreeMap::new();
    let mut resolve_cache = by_clang_name;
    let mut in_user_file = |file: &Rc<str>| -> Option<PathBuf> {
        let path = resolve_cache.entry(file.clone()).or_insert_with(|| canonical(Path::new(file.as_ref())));
        files.contains(path).then(|| path.clone())
    };
    visit(tu, &mut |decl: &Decl, in_template: bool| {
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
            if !targets.on_device() && !in_template {
                blank(decl, &mut in_user_file, &mut blanks);
            }
        } else if function && !in_template {
            if decl.targets.global && decl.has_body && !decl.mangled.is_empty() {
                add_kernel(&mut kernels, &decl.mangled);
            }
            // A host declaration without a body stays when its type names no HIP runtime
            // type: kept class templates' host members may call it (ggml's
            // `ggml_cuda_pool_alloc<T>` calls `ggml_abort` and `ggml_cuda_pool::alloc`).
            if !decl.targets.on_device() && (decl.has_body || decl.qual_type.contains("hip")) {
                blank(decl, &mut in_user_file, &mut blanks);
            }
        } else if decl.kind == "VarDecl" {
            if decl.targets.device || decl.targets.constant {
                let name = if decl.mangled.is_empty() { decl.name.clone() } else { decl.mangled.clone() };
                if decl.begin.as_ref().is_some_and(|l| in_user_file(&l.file).is_some()) {
                    let expression = demangled(&name).unwrap_or_else(|| name.clone()).replace("(anonymous namespace)::", "");
                    variables.insert(name.clone(), Symbol { registered: name, expression });
                }
            } else if !decl.targets.on_device() && decl.qual_type.contains("hip") {
                blank(decl, &mut in_user_file, &mut blanks);
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
        if let Some(ranges) = blanks.get_mut(file) {
            for (r, ends_in_macro) in ranges.iter_mut() {
                if *ends_in_macro {
                    r.end = macro_use_end(&bytes, r.end);
                }
            }
            let mut ranges: Vec<_> = ranges.iter().map(|(r, _)| r.clone()).collect();
            ranges.sort_by_key(|r| r.start);
            for r in ranges.iter() {
                for b in bytes.iter_mut().take(r.end).skip(r.start) {
                    if *b != b'\n' {
                        *b = b' ';
                    }
                }
            }
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

/// Calls `f` on every declaration under `decl` (namespaces, linkage specifications and
/// classes are entered; the members of a class template, and of a class holding one, are "in
/// a template": kept whole).
fn visit(decl: &Decl, f: &mut impl FnMut(&Decl, bool)) {
    fn walk(decl: &Decl, in_template: bool, f: &mut impl FnMut(&Decl, bool)) {
        for child in &decl.children {
            f(child, in_template);
            match child.kind.as_str() {
                "NamespaceDecl" | "LinkageSpecDecl" => walk(child, in_template, f),
                // A class with a nested class template: that template's members are kept whole
                // and may call any member of the class, so its members are kept whole too.
                "CXXRecordDecl" => walk(child, in_template || child.children.iter().any(|c| c.kind == "ClassTemplateDecl"), f),
                "ClassTemplateDecl" => walk(child, true, f),
                _ => {}
            }
        }
    }
    walk(decl, false, f)
}

/// Blanks `decl`'s extent when it lies in one of the program's files.
/// Byte ranges to blank per file, each marked when it ends at a macro's name (to be widened
/// over the macro's arguments once the file's text is read).
type Blanks = HashMap<PathBuf, Vec<(std::ops::Range<usize>, bool)>>;

fn blank(decl: &Decl, in_user_file: &mut impl FnMut(&Rc<str>) -> Option<PathBuf>, blanks: &mut Blanks) {
    if let Some((file, range)) = decl.extent() {
        if let Some(path) = in_user_file(&file) {
            blanks.entry(path).or_default().push((range, decl.ends_in_macro()));
        }
    }
}

/// The end of a macro's use whose name ends at `name_end`: past its balanced argument list
/// when one follows (`GGML_DEPRECATED(int f(int), "hint")`), else the name itself. Quotes and
/// character literals are skipped so parentheses inside them do not count; an unbalanced list
/// leaves the name alone (better a compile error naming the line than a blanked file).
fn macro_use_end(text: &[u8], name_end: usize) -> usize {
    let mut i = name_end;
    while i < text.len() && text[i].is_ascii_whitespace() {
        i += 1;
    }
    if text.get(i) != Some(&b'(') {
        return name_end;
    }
    let mut depth = 0usize;
    while i < text.len() {
        match text[i] {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            quote @ (b'"' | b'\'') => {
                i += 1;
                while i < text.len() && text[i] != quote {
                    if text[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    name_end
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

    #[test]
    fn a_macro_use_ends_after_its_arguments() {
        let text = b"DEP(int f(int a,\n int b), \"use g()\");\nATTR int h;";
        // `DEP` ends at 3: its balanced list (a parenthesis inside the string ignored) ends at `)`.
        assert_eq!(macro_use_end(text, 3), text.iter().position(|&c| c == b';').unwrap());
        // An object-like macro (no list follows): the name alone.
        let attr = text.windows(4).position(|w| w == b"ATTR").unwrap() + 4;
        assert_eq!(macro_use_end(text, attr), attr);
        // An unbalanced list: the name alone.
        assert_eq!(macro_use_end(b"DEP(int f(", 3), 3);
        assert_eq!(macro_use_end(b"DEP  (x)", 3), 8);
    }

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
        visit(&tu, &mut |d: &Decl, in_template| {
            seen.insert(d.name.clone(), in_template);
        });
        assert!(seen["parse"] && seen["arg_parse"], "members of a class holding a template are kept: {seen:?}");
        assert!(!seen["host_only"], "other classes' host-only members are not: {seen:?}");
    }

    #[test]
    fn include_lines_are_recognised() {
        assert_eq!(include_target("#include \"a/b.h\"\n"), Some((true, "a/b.h")));
        assert_eq!(include_target("  #  include <vector>  // x\n"), Some((false, "vector")));
        assert_eq!(include_target("#define include \"x\"\n"), None);
        assert_eq!(include_target("int x; // #include \"y\"\n"), None);
    }
}
