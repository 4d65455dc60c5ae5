//! The client's headers, sent with the compile.
//!
//! A hiprtc program's `-I` directories (CuPy passes its own `cupy/_core/include`, `$ROCM_HOME/include`
//! and hipcc's search list) exist on the client, not on the worker. Before a compile this module
//! follows the program's `#include`s — in the source and in every header it sends, recursively,
//! both `"..."` (the including file's directory first) and `<...>` forms — through those
//! directories as a preprocessor would search them, and returns the files it found, each named
//! by its path relative to the directory it was found in (so the worker, which places headers
//! under one include directory, resolves the same spelling, and a header's own relative
//! includes, to the same file).
//!
//! Not sent: HIP's own headers (`hip/…`: the worker supplies its own, for its device), files
//! of the compiler's system directories (`/usr/include`, clang's and GCC's resource
//! directories: hipcc's search list names them, but the standard library is the worker's),
//! names the program already embeds, and includes no directory holds (left to the worker's
//! compiler, which reports them if they are really needed). Conditional compilation is not
//! evaluated: an include in any branch is sent when found. Totals are bounded by
//! [`MAX_RTC_HEADER_BYTES`] and [`MAX_RTC_HEADERS`]; past them the compile fails with a message
//! naming the limit.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

use proto_core::limits::{MAX_RTC_HEADERS, MAX_RTC_HEADER_BYTES, MAX_TEXT_LEN};

/// Include spellings the worker answers itself.
const WORKER_HEADER_PREFIXES: &[&str] = &["hip/"];
/// Directories whose files are the compiler's own (standard library, compiler builtins).
const SYSTEM_DIR_PREFIXES: &[&str] = &["/usr/include", "/usr/local/include"];
/// Path parts marking a compiler's resource or library directory.
const SYSTEM_DIR_PARTS: &[&str] = &["/lib/clang/", "/lib/gcc/", "/lib64/clang/", "/lib/llvm"];

/// The `-I` (and `-isystem`) directories among hiprtc options, in search order; system
/// directories are left out.
pub fn include_dirs<'a>(options: impl IntoIterator<Item = &'a str>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut options = options.into_iter().map(str::trim);
    while let Some(option) = options.next() {
        let dir = match option {
            "-I" | "-isystem" | "--include-path" => options.next().map(str::trim),
            _ => ["-I", "--include-path=", "-isystem"].iter().find_map(|p| option.strip_prefix(p)),
        };
        if let Some(dir) = dir.filter(|d| !d.is_empty()) {
            let dir = PathBuf::from(dir);
            if !is_system_dir(&dir) && !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    dirs
}

fn is_system_dir(dir: &Path) -> bool {
    let text = dir.to_string_lossy();
    SYSTEM_DIR_PREFIXES.iter().any(|p| text == *p || text.starts_with(&format!("{p}/"))) || SYSTEM_DIR_PARTS.iter().any(|p| text.contains(p))
}

/// One file to scan: its text, its name as sent, and where it lies on the client.
struct Pending {
    text: String,
    /// The name the worker will know it by (`None` for the program source).
    name: Option<String>,
    /// Its directory on the client (`None` for the source and embedded headers).
    dir: Option<PathBuf>,
}

/// The headers `source` (and the `embedded` headers) include from `dirs`, as `(name, text)`,
/// not repeating embedded names; the embedded headers count toward the limits.
pub fn resolve(source: &str, embedded: &[(&str, &str)], dirs: &[PathBuf]) -> Result<Vec<(String, String)>, String> {
    let mut known: HashSet<String> = embedded.iter().map(|(n, _)| n.to_string()).collect();
    let mut bytes: usize = embedded.iter().map(|(_, t)| t.len() + 1).sum();
    let mut found = Vec::new();
    if dirs.is_empty() {
        return Ok(found);
    }
    let mut pending = vec![Pending { text: source.to_string(), name: None, dir: None }];
    pending.extend(embedded.iter().map(|(n, t)| Pending { text: t.to_string(), name: Some(n.to_string()), dir: None }));
    while let Some(file) = pending.pop() {
        for (spelling, quoted) in directives(&file.text) {
            if WORKER_HEADER_PREFIXES.iter().any(|p| spelling.starts_with(p)) {
                continue;
            }
            let Some((name, path)) = locate(spelling, quoted, &file, dirs) else { continue };
            if !known.insert(name.clone()) {
                continue;
            }
            let text = read_header(&path)?;
            bytes += name.len() + text.len() + 2;
            if bytes > MAX_RTC_HEADER_BYTES || embedded.len() + found.len() + 1 > MAX_RTC_HEADERS {
                return Err(format!(
                    "hip-remote: the headers this program includes from its -I directories exceed what one \
                     compile can carry ({MAX_RTC_HEADER_BYTES} bytes, {MAX_RTC_HEADERS} headers; reached at \
                     {}): embed fewer headers or include less",
                    path.display()
                ));
            }
            pending.push(Pending { text: text.clone(), name: Some(name.clone()), dir: path.parent().map(Path::to_path_buf) });
            found.push((name, text));
        }
    }
    Ok(found)
}

/// Finds `spelling` as the preprocessor would: a quoted name next to the including file first,
/// then each directory in order. Returns the name to send and the client path.
fn locate(spelling: &str, quoted: bool, from: &Pending, dirs: &[PathBuf]) -> Option<(String, PathBuf)> {
    if quoted {
        if let (Some(dir), Some(name)) = (&from.dir, &from.name) {
            let path = dir.join(spelling);
            let parent = Path::new(name).parent().unwrap_or(Path::new(""));
            if let Some(name) = normalized(&parent.join(spelling)) {
                if path.is_file() {
                    return Some((name, path));
                }
            }
        }
    }
    let name = normalized(Path::new(spelling))?;
    dirs.iter().map(|d| d.join(spelling)).find(|p| p.is_file()).map(|p| (name, p))
}

/// `path` without `.` and `..` parts, as a relative name; `None` if it is absolute or leaves
/// its root.
fn normalized(path: &Path) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(p) => parts.push(p.to_str()?),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

fn read_header(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("hip-remote: cannot read included header {}: {e}", path.display()))?;
    if bytes.len() > MAX_TEXT_LEN {
        return Err(format!(
            "hip-remote: included header {} is {} bytes, more than the {MAX_TEXT_LEN} one header may be",
            path.display(),
            bytes.len()
        ));
    }
    let text = String::from_utf8(bytes).map_err(|_| format!("hip-remote: included header {} is not UTF-8 text", path.display()))?;
    if text.contains('\0') {
        return Err(format!("hip-remote: included header {} contains a NUL byte", path.display()));
    }
    Ok(text)
}

/// The `#include` directives of `text`: `(spelling, quoted)`. Comments are not parsed (an
/// include inside a block comment is sent too: harmless).
fn directives(text: &str) -> Vec<(&str, bool)> {
    text.lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix('#')?.trim_start();
            let rest = rest.strip_prefix("include_next").or_else(|| rest.strip_prefix("include"))?.trim_start();
            let (close, quoted) = match rest.chars().next()? {
                '"' => ('"', true),
                '<' => ('>', false),
                _ => return None,
            };
            let body = &rest[1..];
            let spelling = &body[..body.find(close)?];
            (!spelling.is_empty()).then_some((spelling, quoted))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    struct Scratch(PathBuf);
    impl Scratch {
        fn new(tag: &str) -> Self {
            let dir = std::env::temp_dir().join(format!("hiprtc-includes-{tag}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }
        fn write(&self, name: &str, text: &str) {
            let path = self.0.join(name);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
    }
    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn options_give_the_search_list_without_system_directories() {
        let dirs = include_dirs([
            "-I/site/cupy/_core/include",
            "-I",
            "/rocm/include",
            "-isystem/extra",
            "--include-path=/more",
            "-I/usr/include",
            "-I/usr/lib/llvm-15/lib/clang/15/include",
            "-I/usr/lib/gcc/x86_64-linux-gnu/12/include",
            "-DN=4",
            "-I/site/cupy/_core/include",
        ]);
        let expected: Vec<PathBuf> = ["/site/cupy/_core/include", "/rocm/include", "/extra", "/more"].iter().map(PathBuf::from).collect();
        assert_eq!(dirs, expected);
    }

    #[test]
    fn follows_angle_and_quoted_includes_recursively() {
        let s = Scratch::new("follow");
        s.write("inc/cupy/carray.cuh", "#pragma once\n#include \"cupy/complex.cuh\"\n#include <hip/hip_version.h>\n#include <cassert>\n");
        s.write("inc/cupy/complex.cuh", "  #  include \"complex/complex.h\"\n");
        s.write("inc/cupy/complex/complex.h", "#include \"../math.h\"\nint c;\n");
        s.write("inc/cupy/math.h", "int m;\n");
        s.write("other/extra.h", "#include <cupy/math.h>\nint e;\n");
        s.write("inc/hip/hip_version.h", "client's own HIP header: never sent\n");
        let dirs = include_dirs([format!("-I{}", s.0.join("inc").display()).as_str(), "-I", s.0.join("other").to_str().unwrap()]);
        let src = "#include <cupy/carray.cuh>\n#include \"extra.h\"\n#include \"missing.h\"\n__global__ void k() {}\n";
        let mut found = resolve(src, &[("mine.h", "#include <cupy/math.h>\n")], &dirs).unwrap();
        found.sort();
        let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["cupy/carray.cuh", "cupy/complex.cuh", "cupy/complex/complex.h", "cupy/math.h", "extra.h"]);
        assert_eq!(found[2].1, "#include \"../math.h\"\nint c;\n");
        assert_eq!(found[3].1, "int m;\n");
    }

    #[test]
    fn embedded_headers_win_and_nothing_is_searched_without_dirs() {
        let s = Scratch::new("embedded");
        s.write("inc/a.h", "from disk\n");
        let dirs = vec![s.0.join("inc")];
        assert!(resolve("#include <a.h>\n", &[("a.h", "embedded")], &dirs).unwrap().is_empty());
        assert!(resolve("#include <a.h>\n", &[], &[]).unwrap().is_empty());
        assert_eq!(resolve("#include <a.h>\n", &[], &dirs).unwrap(), [("a.h".to_string(), "from disk\n".to_string())]);
    }

    #[test]
    fn totals_are_bounded_with_a_clear_error() {
        let s = Scratch::new("bounded");
        let chunk = "x".repeat(MAX_TEXT_LEN / 3);
        for i in 0..4 {
            s.write(&format!("inc/big{i}.h"), &chunk);
        }
        let src: String = (0..4).map(|i| format!("#include <big{i}.h>\n")).collect();
        let err = resolve(&src, &[], &[s.0.join("inc")]).unwrap_err();
        assert!(err.contains("exceed what one compile can carry"), "{err}");
        s.write("inc/huge.h", &"y".repeat(MAX_TEXT_LEN + 1));
        let err = resolve("#include \"huge.h\"\n", &[], &[s.0.join("inc")]).unwrap_err();
        assert!(err.contains("more than the"), "{err}");
    }

    #[test]
    fn names_never_leave_the_include_root() {
        assert_eq!(normalized(Path::new("a/./b/../c.h")).as_deref(), Some("a/c.h"));
        assert_eq!(normalized(Path::new("../c.h")), None);
        assert_eq!(normalized(Path::new("/abs.h")), None);
    }
}
