//! A pragmatic scanner for HIP kernel source: enough C++ lexing to find, outside comments,
//! strings and preprocessor lines,
//!
//! * the barriers and warp operations that make the host backend run a program's blocks as
//!   fibers, with their lines,
//! * `extern __shared__` declarations, rewritten to the block's dynamic shared memory, and
//! * the `extern "C" __global__` kernels and the `__device__`/`__constant__` variables at
//!   namespace scope, for the generated kernel table.
//!
//! It is not a parser. Known limits (documented in `docs/HOST_MODULES.md`): kernels and
//! variables produced by macros are not seen; kernels with C++ linkage (and templates) are
//! reached only through name expressions; a variable declarator list is read up to its
//! initializers, not into them.

/// Identifiers that need the threads of a block to run as fibers (they wait for each other).
const FIBER_IDENTS: &[&str] = &[
    "__syncthreads",
    "__syncthreads_count",
    "__syncthreads_and",
    "__syncthreads_or",
    "__syncwarp",
    "__activemask",
    "__ballot",
    "__ballot64",
    "__any",
    "__all",
    "cooperative_groups",
];
/// Prefixes of such identifiers (`__shfl`, `__shfl_down_sync`, ...).
/// `__builtin_amdgcn_*` too: its lane reads and barriers (readlane, ds_bpermute, s_barrier)
/// are warp and block operations.
const FIBER_PREFIXES: &[&str] = &["__shfl", "__ballot_", "__any_", "__all_", "__match_", "__builtin_amdgcn_"];

/// Attribute-like identifiers followed by a parenthesised argument list that is not the
/// declarator's parameter list.
const ATTRIBUTE_CALLS: &[&str] = &["__launch_bounds__", "__attribute__", "alignas", "__align__", "__declspec", "decltype", "__attribute"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind<'a> {
    Ident(&'a str),
    /// A string literal's contents (escapes left as written).
    Str(&'a str),
    Punct(u8),
    /// Numbers and character literals: nothing the scanner looks at.
    Other,
}

#[derive(Debug, Clone, Copy)]
struct Token<'a> {
    kind: Kind<'a>,
    line: u32,
    /// Byte range in the source.
    start: usize,
    end: usize,
}

/// A use of a barrier or warp operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FiberUse {
    pub(crate) ident: String,
    pub(crate) line: u32,
}

/// The first barrier or warp operation in `source`, if any.
pub(crate) fn first_fiber_use(source: &str) -> Option<FiberUse> {
    tokenize(source).into_iter().find_map(|token| match token.kind {
        Kind::Ident(ident) if FIBER_IDENTS.contains(&ident) || FIBER_PREFIXES.iter().any(|p| ident.starts_with(p)) => {
            Some(FiberUse { ident: ident.to_string(), line: token.line })
        }
        _ => None,
    })
}

/// `source` with every `extern __shared__ T name[];` turned into a reference to the block's
/// dynamic shared memory (`static thread_local T* const& name = ...;`, valid at function and
/// namespace scope, read afresh per block), on the same lines; `None` when there is none.
pub(crate) fn rewrite_dynamic_shared(source: &str) -> Option<String> {
    let tokens = tokenize(source);
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    while i + 1 < tokens.len() {
        if !(tokens[i].kind == Kind::Ident("extern") && tokens[i + 1].kind == Kind::Ident("__shared__")) {
            i += 1;
            continue;
        }
        let Some(semicolon) = tokens[i + 2..].iter().position(|t| t.kind == Kind::Punct(b';')).map(|p| i + 2 + p) else {
            break;
        };
        // The declarator: the last identifier before `[`.
        let open = tokens[i + 2..semicolon].iter().position(|t| t.kind == Kind::Punct(b'[')).map(|p| i + 2 + p);
        let name_at = open.and_then(|open| (i + 2..open).rev().find(|&j| matches!(tokens[j].kind, Kind::Ident(_))));
        let (Some(name_at), Kind::Ident(name)) = (name_at, name_at.map_or(Kind::Other, |j| tokens[j].kind)) else {
            i = semicolon + 1;
            continue;
        };
        let element = source[tokens[i + 1].end..tokens[name_at].start].trim();
        let span = &source[tokens[i].start..tokens[semicolon].end];
        out.push_str(&source[copied..tokens[i].start]);
        out.push_str(&format!(
            "static thread_local {} * const& {name} = reinterpret_cast<decltype({name})>(::__hip_remote::state.dynamic_shared);",
            element
        ));
        out.extend(std::iter::repeat_n('\n', span.matches('\n').count() - element.matches('\n').count()));
        copied = tokens[semicolon].end;
        i = semicolon + 1;
    }
    (copied > 0).then(|| {
        out.push_str(&source[copied..]);
        out
    })
}

/// What the generated kernel table takes from the source.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Declarations {
    /// `extern "C" __global__` kernels: `(qualified name for `&`, symbol name)`.
    pub(crate) kernels: Vec<(String, String)>,
    /// `__device__`/`__constant__`/`__managed__` variables at namespace scope:
    /// `(qualified name, whether at global scope or in an extern "C" block)`.
    pub(crate) variables: Vec<(String, bool)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Scope {
    ExternC,
    /// `None`: an anonymous namespace.
    Namespace(Option<String>),
    /// A function body, class, initializer: nothing in it is at namespace scope.
    Other,
}

/// Finds the declarations the kernel table is built from.
///
/// Every branch of an `#if`/`#elif`/`#else` chain is read from the scopes in force at its
/// `#if` (the scanner does not evaluate conditions): alternatives that each open a brace, as
/// in `#if A struct __align__(8) s { #else struct s { #endif`, then open one scope, not two.
/// Tokens of an earlier branch are not part of a later branch's declarations.
pub(crate) fn declarations(source: &str) -> Declarations {
    let (tokens, conditionals) = lex(source);
    let mut conditionals = conditionals.into_iter().peekable();
    let mut out = Declarations::default();
    let mut scopes: Vec<Scope> = Vec::new();
    let mut decl_start = 0;
    // Per open `#if`: the scopes and declaration start at it, and where its current branch began.
    let mut open_ifs: Vec<(Vec<Scope>, usize, usize)> = Vec::new();
    // Token ranges of branches left behind by an `#elif`/`#else`.
    let mut left_branches: Vec<std::ops::Range<usize>> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        while let Some((_, conditional)) = conditionals.next_if(|&(at, _)| at <= i) {
            match conditional {
                Conditional::If => open_ifs.push((scopes.clone(), decl_start, i)),
                Conditional::Else => {
                    if let Some((saved_scopes, saved_start, branch_start)) = open_ifs.last_mut() {
                        left_branches.push(*branch_start..i);
                        *branch_start = i;
                        scopes = saved_scopes.clone();
                        decl_start = *saved_start;
                    }
                }
                Conditional::Endif => {
                    open_ifs.pop();
                }
            }
        }
        left_branches.retain(|r| r.end > decl_start);
        // The current declaration's tokens so far, without those of branches left behind.
        let prefix_tokens =
            || -> Vec<Token<'_>> { (decl_start..i).filter(|j| !left_branches.iter().any(|r| r.contains(j))).map(|j| tokens[j]).collect() };
        match tokens[i].kind {
            Kind::Punct(b'{') => {
                scopes.push(scope_kind(&prefix_tokens()));
                decl_start = i + 1;
            }
            Kind::Punct(b'}') => {
                scopes.pop();
                decl_start = i + 1;
            }
            Kind::Punct(b';') => decl_start = i + 1,
            Kind::Ident(word @ ("__global__" | "__device__" | "__constant__" | "__managed__")) if !scopes.contains(&Scope::Other) => {
                let prefix = &prefix_tokens();
                let templated = prefix.iter().any(|t| t.kind == Kind::Ident("template"));
                let extern_c_prefix = prefix.windows(2).any(|w| w[0].kind == Kind::Ident("extern") && w[1].kind == Kind::Str("C"));
                let extern_c = extern_c_prefix || scopes.contains(&Scope::ExternC);
                let qualify = |name: &str| {
                    let mut q = String::new();
                    for scope in &scopes {
                        if let Scope::Namespace(Some(ns)) = scope {
                            q.push_str("::");
                            q.push_str(ns);
                        }
                    }
                    q.push_str("::");
                    q.push_str(name);
                    q
                };
                if word == "__global__" {
                    if !templated && extern_c {
                        // Only definitions: taking the address of a kernel declared but
                        // never defined would not link.
                        if let Some((name, true)) = function_name(&tokens[i + 1..]) {
                            let entry = (qualify(name), name.to_string());
                            if !out.kernels.contains(&entry) {
                                out.kernels.push(entry);
                            }
                        }
                    }
                } else {
                    let declared_only = prefix.iter().any(|t| t.kind == Kind::Ident("extern"));
                    let unmangled = extern_c || !scopes.iter().any(|s| matches!(s, Scope::Namespace(Some(_))));
                    if !templated && !declared_only {
                        for name in variable_names(&tokens[i + 1..]) {
                            let entry = (qualify(name), unmangled);
                            if !out.variables.contains(&entry) {
                                out.variables.push(entry);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

fn scope_kind(prefix: &[Token<'_>]) -> Scope {
    let kinds: Vec<Kind<'_>> = prefix.iter().map(|t| t.kind).collect();
    match kinds.as_slice() {
        [Kind::Ident("extern"), Kind::Str("C")] => Scope::ExternC,
        [Kind::Ident("namespace")] | [Kind::Ident("inline"), Kind::Ident("namespace")] => Scope::Namespace(None),
        [Kind::Ident("namespace"), rest @ ..] | [Kind::Ident("inline"), Kind::Ident("namespace"), rest @ ..]
            if !rest.is_empty() && rest.iter().all(|k| matches!(k, Kind::Ident(_) | Kind::Punct(b':'))) =>
        {
            // `namespace a::b {` (C++17) opens both.
            let name: String = rest
                .iter()
                .map(|k| match k {
                    Kind::Ident(s) => *s,
                    _ => ":",
                })
                .collect();
            Scope::Namespace(Some(name))
        }
        _ => Scope::Other,
    }
}

/// Index just past the parenthesised group starting at `tokens[open]`.
fn skip_group(tokens: &[Token<'_>], open: usize) -> usize {
    let mut depth = 0usize;
    for (j, t) in tokens.iter().enumerate().skip(open) {
        match t.kind {
            Kind::Punct(b'(' | b'[' | b'{') => depth += 1,
            Kind::Punct(b')' | b']' | b'}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
    }
    tokens.len()
}

/// The declarator name of a function declaration (the identifier before the first `(` that
/// is not an attribute's argument list) and whether a body follows. `None` for anything else.
fn function_name<'a>(tokens: &[Token<'a>]) -> Option<(&'a str, bool)> {
    let mut j = 0;
    let mut last_ident: Option<&'a str> = None;
    while j < tokens.len() {
        match tokens[j].kind {
            Kind::Ident(word) if ATTRIBUTE_CALLS.contains(&word) => {
                if matches!(tokens.get(j + 1).map(|t| t.kind), Some(Kind::Punct(b'('))) {
                    j = skip_group(tokens, j + 1);
                    last_ident = None;
                    continue;
                }
                j += 1;
            }
            Kind::Ident("operator") => return None,
            Kind::Ident(word) => {
                last_ident = Some(word);
                j += 1;
            }
            Kind::Punct(b'(') => {
                // `void ns::k(` defines a function declared elsewhere.
                let qualified = j >= 2 && tokens[j - 2].kind == Kind::Punct(b':');
                let name = last_ident.filter(|_| !qualified)?;
                let body = tokens[skip_group(tokens, j)..]
                    .iter()
                    .find_map(|t| match t.kind {
                        Kind::Punct(b'{') => Some(true),
                        Kind::Punct(b';' | b'=' | b'}') => Some(false),
                        _ => None,
                    })
                    .unwrap_or(false);
                return Some((name, body));
            }
            Kind::Punct(b';' | b'{' | b'=' | b'}') => return None,
            _ => {
                last_ident = None;
                j += 1;
            }
        }
    }
    None
}

/// Declarator names of a variable declaration (`int a, b[4] = {..}, c;`); empty for a
/// function.
fn variable_names<'a>(tokens: &[Token<'a>]) -> Vec<&'a str> {
    let mut names = Vec::new();
    let mut j = 0;
    let mut last_ident: Option<&'a str> = None;
    let mut angle = 0usize;
    while j < tokens.len() {
        match tokens[j].kind {
            Kind::Ident(word) if ATTRIBUTE_CALLS.contains(&word) => {
                if matches!(tokens.get(j + 1).map(|t| t.kind), Some(Kind::Punct(b'('))) {
                    j = skip_group(tokens, j + 1);
                    continue;
                }
                j += 1;
            }
            Kind::Ident(word) => {
                last_ident = Some(word);
                j += 1;
            }
            Kind::Punct(b'<') => {
                angle += 1;
                j += 1;
            }
            Kind::Punct(b'>') => {
                angle = angle.saturating_sub(1);
                j += 1;
            }
            Kind::Punct(b',') if angle > 0 => j += 1,
            // A parameter list before any declarator ends: a function.
            Kind::Punct(b'(') if names.is_empty() => return Vec::new(),
            Kind::Punct(b'(') => j = skip_group(tokens, j),
            Kind::Punct(b'[') => {
                names.extend(last_ident.take());
                j = skip_group(tokens, j);
            }
            Kind::Punct(b'=' | b'{') => {
                names.extend(last_ident.take());
                // Skip the initializer up to the next declarator or the end.
                let mut depth = 0usize;
                while j < tokens.len() {
                    match tokens[j].kind {
                        Kind::Punct(b'(' | b'[' | b'{') => depth += 1,
                        Kind::Punct(b')' | b']' | b'}') => depth = depth.saturating_sub(1),
                        Kind::Punct(b',' | b';') if depth == 0 => break,
                        _ => {}
                    }
                    j += 1;
                }
            }
            Kind::Punct(b',') => {
                names.extend(last_ident.take());
                j += 1;
            }
            Kind::Punct(b';') => {
                names.extend(last_ident.take());
                break;
            }
            Kind::Punct(b'*' | b'&' | b':') => j += 1,
            _ => {
                last_ident = None;
                j += 1;
            }
        }
    }
    names.dedup();
    names
}

/// A conditional-inclusion directive (`#if`/`#ifdef`/`#ifndef`, `#elif`/`#else`, `#endif`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conditional {
    If,
    Else,
    Endif,
}

/// Lexes `source` into identifiers, string literals and punctuation, dropping comments,
/// preprocessor lines, numbers and character literals.
fn tokenize(source: &str) -> Vec<Token<'_>> {
    lex(source).0
}

/// [`tokenize`], plus each conditional directive with the number of tokens before it.
fn lex(source: &str) -> (Vec<Token<'_>>, Vec<(usize, Conditional)>) {
    let bytes = source.as_bytes();
    let mut tokens = Vec::new();
    let mut conditionals = Vec::new();
    let mut i = 0;
    let mut line = 1u32;
    let mut line_start = true;
    while i < bytes.len() {
        let c = bytes[i];
        let (token_start, pushed) = (i, tokens.len());
        match c {
            b'\n' => {
                line += 1;
                line_start = true;
                i += 1;
            }
            b' ' | b'\t' | b'\r' | b'\x0c' | b'\x0b' => i += 1,
            b'\\' if bytes.get(i + 1) == Some(&b'\n') => {
                line += 1;
                i += 2;
            }
            b'#' if line_start => {
                if let Some(conditional) = conditional_directive(&source[i + 1..]) {
                    conditionals.push((tokens.len(), conditional));
                }
                // A directive, with its continuation lines.
                while i < bytes.len() && bytes[i] != b'\n' {
                    if bytes[i] == b'\\' && bytes.get(i + 1) == Some(&b'\n') {
                        line += 1;
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    if bytes[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i = (i + 2).min(bytes.len());
            }
            b'"' => {
                let (end, lines) = quoted(bytes, i, b'"');
                tokens.push(Token { kind: Kind::Str(&source[i + 1..end.saturating_sub(1).max(i + 1)]), line, start: 0, end: 0 });
                line += lines;
                i = end;
                line_start = false;
            }
            b'\'' => {
                let (end, lines) = quoted(bytes, i, b'\'');
                tokens.push(Token { kind: Kind::Other, line, start: 0, end: 0 });
                line += lines;
                i = end;
                line_start = false;
            }
            c if c.is_ascii_digit() => {
                // pp-number: digits, letters, `.`, digit separators, exponent signs.
                i += 1;
                while i < bytes.len() {
                    let d = bytes[i];
                    let exponent_sign = matches!(d, b'+' | b'-') && matches!(bytes[i - 1], b'e' | b'E' | b'p' | b'P');
                    if d.is_ascii_alphanumeric() || d == b'_' || d == b'.' || d == b'\'' || exponent_sign {
                        i += 1;
                    } else {
                        break;
                    }
                }
                tokens.push(Token { kind: Kind::Other, line, start: 0, end: 0 });
                line_start = false;
            }
            c if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] >= 0x80) {
                    i += 1;
                }
                let word = &source[start..i];
                line_start = false;
                match (word, bytes.get(i)) {
                    ("R" | "u8R" | "uR" | "UR" | "LR", Some(b'"')) => {
                        let (end, lines) = raw_string(bytes, i);
                        tokens.push(Token { kind: Kind::Other, line, start: 0, end: 0 });
                        line += lines;
                        i = end;
                    }
                    ("u8" | "u" | "U" | "L", Some(q @ (b'"' | b'\''))) => {
                        let (end, lines) = quoted(bytes, i, *q);
                        tokens.push(Token { kind: Kind::Other, line, start: 0, end: 0 });
                        line += lines;
                        i = end;
                    }
                    _ => tokens.push(Token { kind: Kind::Ident(word), line, start: 0, end: 0 }),
                }
            }
            c => {
                tokens.push(Token { kind: Kind::Punct(c), line, start: 0, end: 0 });
                line_start = false;
                i += 1;
            }
        }
        if let Some(token) = tokens.get_mut(pushed) {
            token.start = token_start;
            token.end = i;
        }
    }
    (tokens, conditionals)
}

/// The conditional directive whose name starts `rest` (the text after `#`), if it is one.
fn conditional_directive(rest: &str) -> Option<Conditional> {
    let rest = rest.trim_start_matches([' ', '\t']);
    let name_len = rest.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(rest.len());
    match &rest[..name_len] {
        "if" | "ifdef" | "ifndef" => Some(Conditional::If),
        "elif" | "elifdef" | "elifndef" | "else" => Some(Conditional::Else),
        "endif" => Some(Conditional::Endif),
        _ => None,
    }
}

/// End (past the closing quote) of the literal opened at `bytes[open]`, and newlines inside.
fn quoted(bytes: &[u8], open: usize, quote: u8) -> (usize, u32) {
    let mut i = open + 1;
    let mut lines = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => {
                if bytes.get(i + 1) == Some(&b'\n') {
                    lines += 1;
                }
                i += 2;
            }
            b'\n' => return (i, lines), // unterminated: stop at the line's end
            c if c == quote => return (i + 1, lines),
            _ => i += 1,
        }
    }
    (bytes.len(), lines)
}

/// End of the raw string literal whose `"` is at `bytes[open]`, and newlines inside.
fn raw_string(bytes: &[u8], open: usize) -> (usize, u32) {
    let Some(paren) = bytes[open..].iter().position(|&b| b == b'(').map(|p| open + p) else {
        return (bytes.len(), 0);
    };
    let delimiter = &bytes[open + 1..paren];
    let mut i = paren + 1;
    let mut lines = 0;
    while i < bytes.len() {
        if bytes[i] == b')' && bytes[i + 1..].starts_with(delimiter) && bytes.get(i + 1 + delimiter.len()) == Some(&b'"') {
            return (i + 2 + delimiter.len(), lines);
        }
        if bytes[i] == b'\n' {
            lines += 1;
        }
        i += 1;
    }
    (bytes.len(), lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_extern_c_kernels_in_every_spelling() {
        let source = r#"
#include <hip/hip_runtime.h>
#define K(name) extern "C" __global__ void name(int* p)
// extern "C" __global__ void commented(int* p);
/* extern "C" __global__ void block_commented(); */
const char* s = "extern \"C\" __global__ void in_string()";
extern "C" __global__ void plain(float* x, int n) { x[0] = n; }
extern "C" __global__ __launch_bounds__(256, 2) void bounded(const float* __restrict__ x) {}
extern "C" {
__global__ void in_block(double d) { }
__global__ void declared(int);
}
__global__ void cpp_linkage(int* p) {}
template <typename T> __global__ void templated(T* p) {}
namespace ns { extern "C" __global__ void namespaced(int) {} }
extern "C" __global__ void plain(float* x, int n);
"#;
        let d = declarations(source);
        let names: Vec<&str> = d.kernels.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(names, ["plain", "bounded", "in_block", "namespaced"]);
        assert_eq!(d.kernels[3].0, "::ns::namespaced");
        assert_eq!(d.kernels[0].0, "::plain");
    }

    #[test]
    fn finds_device_variables_at_namespace_scope() {
        let source = r#"
__device__ int counter;
__device__ float table[4] = {1, 2, 3, 4}, scale = 2.0f;
__constant__ double coefficients[2][3];
__device__ float helper(float x) { __device__ int not_at_namespace_scope; return x; }
__host__ __device__ inline int both(int a) { return a; }
extern __device__ int declared_elsewhere;
namespace ns { __device__ unsigned long long ticks = 0; }
extern "C" { __device__ int c_linkage; }
__device__ __attribute__((aligned(16))) int aligned_var;
__device__ std::array<int, 3> templ;
"#;
        let d = declarations(source);
        let names: Vec<(&str, bool)> = d.variables.iter().map(|(n, u)| (n.as_str(), *u)).collect();
        assert_eq!(
            names,
            [
                ("::counter", true),
                ("::table", true),
                ("::scale", true),
                ("::coefficients", true),
                ("::ns::ticks", false),
                ("::c_linkage", true),
                ("::aligned_var", true),
                ("::templ", true),
            ]
        );
    }

    #[test]
    fn finds_the_first_barrier_or_warp_operation() {
        let source = "// __syncthreads() in a comment is fine\n\
                      __global__ void k(float* x) {\n\
                      \x20 __shared__ float tile[64];\n\
                      \x20 x[0] = __shfl_down(x[0], 1);\n\
                      \x20 __syncthreads();\n\
                      }\n";
        assert_eq!(first_fiber_use(source), Some(FiberUse { ident: "__shfl_down".into(), line: 4 }));
        assert_eq!(first_fiber_use("const char* s = \"__syncthreads\"; __shared__ int t[2];"), None);
        assert_eq!(first_fiber_use("auto s = R\"x(__syncthreads)x\";"), None);
        // Cooperative groups and AMD's lane builtins wait for other threads too.
        let cg = "namespace cg = cooperative_groups;";
        assert_eq!(first_fiber_use(cg), Some(FiberUse { ident: "cooperative_groups".into(), line: 1 }));
        let perm = "int v = __builtin_amdgcn_ds_bpermute(4, x);";
        assert_eq!(first_fiber_use(perm), Some(FiberUse { ident: "__builtin_amdgcn_ds_bpermute".into(), line: 1 }));
        assert_eq!(first_fiber_use("unsigned long long b = __ballot64(1);").map(|u| u.ident), Some("__ballot64".into()));
    }

    #[test]
    fn extern_shared_becomes_dynamic_shared_memory_on_the_same_lines() {
        let source = "extern __shared__ float everywhere[];\n\
                      __global__ void k() {\n\
                      \x20 extern __shared__ __align__(16)\n  unsigned int\n  words[];\n\
                      \x20 words[0] = 1;\n\
                      }\n";
        let out = rewrite_dynamic_shared(source).unwrap();
        assert_eq!(out.lines().count(), source.lines().count(), "{out}");
        assert!(out.starts_with("static thread_local float * const& everywhere = reinterpret_cast<decltype(everywhere)>("), "{out}");
        assert!(out.contains("static thread_local __align__(16)\n  unsigned int * const& words ="), "{out}");
        assert_eq!(out.lines().nth(5), Some("  words[0] = 1;"), "{out}");
        assert_eq!(rewrite_dynamic_shared("__shared__ int t[4]; extern int x[];"), None);
    }

    #[test]
    fn alternative_branches_open_one_scope() {
        // CuPy's cupy/complex/complex.h: one struct head per branch, one closing brace.
        let source = r#"
namespace thrust {
template <typename T>
#if defined(__CUDACC__)
struct __align__(sizeof(T)*2) complex {
#elif defined(OTHER)
struct alignas(8) complex {
#else
// ROCm (hipcc) does not support `__align__`
struct complex {
#endif
  T re, im;
};
}
#ifdef USE_NS
namespace a {
#else
  # ifndef NESTED
namespace b {
  # endif
#endif
extern "C" __global__ void in_namespace(int* p) {}
}
extern "C" __global__ void cupy_kernel(const float in0, CArray<float, 1, 1, 1> out) {}
"#;
        let d = declarations(source);
        let names: Vec<&str> = d.kernels.iter().map(|(q, _)| q.as_str()).collect();
        assert_eq!(names, ["::b::in_namespace", "::cupy_kernel"]);
    }

    #[test]
    fn lexer_survives_odd_input() {
        for source in ["\"unterminated", "/* open", "R\"(open", "'", "#", "\\", "1'000'000e+5", "\u{e9}t\u{e9}", "#else\n}\n#endif\n#endif", "#if\n{"]
        {
            let _ = declarations(source);
            let _ = first_fiber_use(source);
            let _ = rewrite_dynamic_shared(source);
        }
    }
}
