//! Renders `docs/API_COVERAGE.md` from [`Coverage`] (used by `tests/api_coverage.rs`, which
//! also checks that the committed file is current). Needs `symbols` (tools/symbols.rs) in the
//! including crate.

use crate::evidence::{forwarded, test_sources, tests_naming, ResultTests};
use crate::symbols::{Coverage, OtherStatus};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The command that rewrites the document.
pub const REGENERATE: &str = "UPDATE_API_COVERAGE=1 cargo test -p client-capi --test api_coverage";

/// Families in table order.
pub const FAMILIES: &[&str] =
    &["device", "context", "error", "memory", "stream", "event", "module", "graph", "texture", "interop", "profiler", "other"];

/// The family of a function, by name (first matching rule).
pub fn family(name: &str) -> &'static str {
    let n = name.trim_start_matches('_');
    let any = |ps: &[&str]| ps.iter().any(|p| n.starts_with(p));
    const ERROR: &[&str] = &[
        "hipGetLastError",
        "hipPeekAtLastError",
        "hipExtGetLastError",
        "hipGetErrorName",
        "hipGetErrorString",
        "hipDrvGetErrorName",
        "hipDrvGetErrorString",
    ];
    if ERROR.contains(&n) {
        "error"
    } else if any(&["hipStream", "hipExtStream", "hipThreadExchangeStreamCaptureMode"]) {
        "stream"
    } else if any(&["hipEvent"]) {
        "event"
    } else if any(&["hipCtx", "hipDevicePrimaryCtx"]) {
        "context"
    } else if any(&["hipProfiler", "hipApiName", "hipKernelNameRef", "hipRegisterTracerCallback", "hipGetCmdName", "amd_dbgapi_"]) {
        "profiler"
    } else if any(&["hipGraphics", "hipGL", "hipExternal", "hipImportExternal", "hipDestroyExternal", "hipSignalExternal", "hipWaitExternal"]) {
        "interop"
    } else if n.contains("Graph") || any(&["hipUserObject"]) {
        "graph"
    } else if any(&[
        "hipTex",
        "hipBindTexture",
        "hipUnbindTexture",
        "hipGetTexture",
        "hipCreateTextureObject",
        "hipDestroyTextureObject",
        "hipCreateSurfaceObject",
        "hipDestroySurfaceObject",
        "hipGetChannelDesc",
        "hipCreateChannelDesc",
        "hipModuleGetTexRef",
        "hipRegisterTexture",
        "hipRegisterSurface",
    ]) {
        "texture"
    } else if any(&[
        "hipModule",
        "hipFunc",
        "hipLaunch",
        "hipExtLaunch",
        "hipExtModuleLaunch",
        "hipHccModuleLaunch",
        "hipDrvLaunch",
        "hipConfigureCall",
        "hipSetupArgument",
        "hipPushCallConfiguration",
        "hipPopCallConfiguration",
        "hipRegister",
        "hipUnregisterFatBinary",
        "hipGetPCH",
        "hipOccupancy",
        "hipLibrary",
        "hipKernel",
        "hipLink",
        "hipGetFuncBySymbol",
        "hipGetProcAddress",
        "hipGetDriverEntryPoint",
    ]) {
        "module"
    } else if n.contains("MemPool")
        || any(&[
            "hipMalloc",
            "hipFree",
            "hipMem",
            "hipHost",
            "hipExtMalloc",
            "hipExtHostAlloc",
            "hipPointer",
            "hipDrvPointer",
            "hipDrvMem",
            "hipArray",
            "hipMipmapped",
            "hipGetMipmappedArray",
            "hipIpc",
            "hipGetSymbol",
        ])
    {
        "memory"
    } else if any(&[
        "hipDevice",
        "hipGetDevice",
        "hipSetDevice",
        "hipChooseDevice",
        "hipInit",
        "hipDriverGetVersion",
        "hipRuntimeGetVersion",
        "hipSetValidDevices",
        "hipExtGetLinkTypeAndHopCount",
        "hipGetStreamDeviceId",
    ]) {
        "device"
    } else {
        "other"
    }
}

/// The whole document.
/// Why a function is not supported, from `symbols/not_supported_reasons.txt` (`name: reason`
/// per line, `#` comments): every exception to "real" says why in the report.
pub fn reasons(manifest_dir: &std::path::Path) -> BTreeMap<String, String> {
    let path = manifest_dir.join("symbols/not_supported_reasons.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (name, why) = l.split_once(':').unwrap_or_else(|| panic!("{}: no `name: reason` in {l:?}", path.display()));
            (name.trim().to_string(), why.trim().to_string())
        })
        .collect()
}

/// How the table names an implemented function that no result-checking test backs.
pub const EXPORTED_ONLY: &str = "exported";

/// How the table names an implemented function that has a not-supported reason: it checks its
/// arguments as ROCm does (ROCm's error codes for bad ones), then answers
/// `hipErrorNotSupported`.
pub const ARGUMENTS_ONLY: &str = "not supported, arguments checked";

pub fn render(cov: &Coverage, reasons: &BTreeMap<String, String>, manifest_dir: &std::path::Path) -> String {
    let repo_root = manifest_dir.join("..");
    let results = ResultTests::load(manifest_dir);
    let requests = forwarded(manifest_dir);
    let sources = test_sources(&repo_root);
    let names: Vec<&str> = cov.hip.iter().map(|(n, _)| n.as_str()).collect();
    let named_by = tests_naming(&sources, &names);
    let is_real = |name: &str, file: Option<&str>| file.is_some() && results.by_function.contains_key(name);

    let mut by_family: BTreeMap<&str, Vec<(&str, Option<&str>)>> = BTreeMap::new();
    for (name, real) in &cov.hip {
        by_family.entry(family(name)).or_default().push((name, real.as_deref()));
    }
    // A function implemented only to check its arguments (it has a not-supported reason) counts
    // as not supported.
    let implemented = |name: &str, file: Option<&str>| file.is_some() && !reasons.contains_key(name);
    let implemented_total = cov.hip.iter().filter(|(n, r)| implemented(n, r.as_deref())).count();
    let real_total = cov.hip.iter().filter(|(n, r)| is_real(n, r.as_deref())).count();
    let total = cov.hip.len();
    let untested = cov.hip.iter().filter(|(n, r)| implemented(n, r.as_deref()) && !named_by.contains_key(n.as_str())).count();

    let mut s = String::new();
    let _ = writeln!(
        s,
        "# HIP API coverage\n\n\
         <!-- @generated by client-capi/tests/api_coverage.rs; do not edit. Regenerate with:\n     \
         {REGENERATE} -->\n\n\
         What `libamdhip64.so.7` (client-capi) does with each function of ROCm 7.2's C API.\n\n\
         - **real**: implemented by a `#[no_mangle] extern \"C\" fn` under `client-capi/src/`, *and*\n  \
         a test checks its results (bytes, values, order, the error codes of negative cases)\n  \
         against an oracle on a host-backend worker (CI) and on a cuda-backend worker (the GPU\n  \
         machine): the C program named in `client-capi/symbols/result_tests.txt`, which\n  \
         `client-capi/tests/api_coverage.rs` checks exists, calls the function and is packed for\n  \
         the cuda run (`scripts/pack-device.sh`). The table's *host* and *cuda* columns say so.\n\
         - **{EXPORTED_ONLY}**: implemented, but no result-checking test is recorded for it: it may\n  \
         work (the *tests* column names every test source that calls it), but nothing here says it does.\n\
         - **not supported**: exported by `client-capi/src/api/unsupported.rs` (generated by\n  \
         `client-capi/build.rs`), returns `hipErrorNotSupported` (801) and records it as the\n  \
         thread's last error (with `HIP_REMOTE_DEBUG=1`, a note on stderr at the first call);\n  \
         *{ARGUMENTS_ONLY}*: implemented under `client-capi/src/` only to answer bad arguments\n  \
         with ROCm's error codes first, then 801 like the others.\n\n\
         *forwarded*: the wire requests the export's own body names (`wire::…`, `calls::…`; helpers it\n\
         calls are not followed, so `—` means answered in the client or through a helper). *hip*: the\n\
         hip backend serves what the cuda backend serves through ROCm's runtime; **validated on AMD\n\
         hardware: no** for every function (no AMD GPU has run these tests). ROCm's own hip-tests\n\
         results per family are in `docs/CONFORMANCE.md`.\n\n\
         Sources: `client-capi/symbols/hip_functions.txt` ({total} `hipError_t` functions),\n\
         `hip_other_functions.txt`, `hiprtc_functions.txt`.\n\n\
         **{real_total} real, {} {EXPORTED_ONLY} without a result-checking test ({untested} of them named by no test at all), {} not supported, {total} in all.**",
        implemented_total - real_total,
        total - implemented_total
    );

    s.push_str("\n## Summary\n\n| family | real | exported | not supported | total |\n| --- | ---: | ---: | ---: | ---: |\n");
    for fam in FAMILIES {
        let Some(fns) = by_family.get(fam) else {
            continue;
        };
        let implemented = fns.iter().filter(|(n, r)| implemented(n, *r)).count();
        let real = fns.iter().filter(|(n, r)| is_real(n, *r)).count();
        let _ = writeln!(s, "| [{fam}](#{fam}) | {real} | {} | {} | {} |", implemented - real, fns.len() - implemented, fns.len());
    }
    let _ =
        writeln!(s, "| **total** | **{real_total}** | **{}** | **{}** | **{total}** |", implemented_total - real_total, total - implemented_total);

    for fam in FAMILIES {
        let Some(fns) = by_family.get(fam) else {
            continue;
        };
        let real = fns.iter().filter(|(n, r)| is_real(n, *r)).count();
        let _ = writeln!(
            s,
            "\n## {fam}\n\n{real} of {} real.\n\n| function | status | implemented in | forwarded | host | cuda | hip | tests |\n| --- | --- | --- | --- | --- | --- | --- | --- |",
            fns.len()
        );
        for (name, file) in fns {
            let tests = named_by.get(*name).map_or("none".to_string(), |files| {
                let shown: Vec<String> = files.iter().take(3).map(|f| format!("`{}`", f.rsplit('/').next().unwrap_or(f))).collect();
                match files.len() {
                    n if n > 3 => format!("{} +{}", shown.join(", "), n - 3),
                    _ => shown.join(", "),
                }
            });
            match file {
                Some(file) => {
                    let fwd = requests.get(*name).filter(|r| !r.is_empty()).map_or("—".to_string(), |r| r.join(", "));
                    let (status, host, cuda) = match (results.by_function.get(*name), reasons.get(*name)) {
                        (Some(progs), _) => {
                            let progs: Vec<String> = progs.iter().map(|p| format!("`{}`", p.trim_start_matches("tests/c/"))).collect();
                            ("real".to_string(), format!("checked ({})", progs.join(", ")), "checked".to_string())
                        }
                        // Implemented only to check the arguments as ROCm does, then not supported.
                        (None, Some(why)) => (format!("{ARGUMENTS_ONLY}: {why}"), "—".to_string(), "—".to_string()),
                        (None, None) => (EXPORTED_ONLY.to_string(), "—".to_string(), "—".to_string()),
                    };
                    let _ = writeln!(s, "| `{name}` | {status} | `{file}` | {fwd} | {host} | {cuda} | validated on AMD hardware: no | {tests} |");
                }
                None => {
                    let why = reasons.get(*name).map_or(String::new(), |w| format!(": {w}"));
                    let _ = writeln!(s, "| `{name}` | not supported{why} | | | | | | {tests} |");
                }
            }
        }
    }

    s.push_str(
        "\n## Other C functions\n\n\
         `hip_other_functions.txt`: ROCm's exports that do not return `hipError_t`. Those not\n\
         implemented are exported with a safe value where one exists (**default**: no-op for\n\
         `void`, NULL for pointers, -1 for `hipGetStreamDeviceId`, 0 for `size_t`; no last error\n\
         recorded, since hipcc programs call the `__hipRegister*` ones at start-up) and otherwise\n\
         left **missing** (unexported), where any value would be wrong (half-float conversions,\n\
         `hipCreateChannelDesc`'s struct) — see `other_default` in `client-capi/tools/symbols.rs`.\n\
         `hiprtcGetErrorString` belongs to `libhiprtc.so.7`.\n\n\
         | function | C return type | status |\n| --- | --- | --- |\n",
    );
    for (name, ret, status) in &cov.other {
        let status = match status {
            OtherStatus::Real(file) => format!("real (`{file}`)"),
            OtherStatus::Default(value) => format!("default ({value})"),
            OtherStatus::Missing => "missing".to_string(),
        };
        let _ = writeln!(s, "| `{name}` | `{ret}` | {status} |");
    }

    let listed: Vec<&str> = cov
        .hip
        .iter()
        .map(|(n, _)| n.as_str())
        .chain(cov.other.iter().map(|(n, _, _)| n.as_str()))
        .chain(cov.hiprtc.iter().map(String::as_str))
        .collect();
    let extra: Vec<(&String, &String)> = cov.implemented.iter().filter(|(n, _)| !listed.contains(&n.as_str())).collect();
    s.push_str("\n## Exports outside ROCm 7.2's lists\n\n");
    if extra.is_empty() {
        s.push_str("None.\n");
    } else {
        s.push_str("| function | implemented in |\n| --- | --- |\n");
        for (name, file) in extra {
            let _ = writeln!(s, "| `{name}` | `{file}` |");
        }
    }

    let _ = writeln!(
        s,
        "\n## hiprtc\n\n\
         Not provided: the {} functions of `hiprtc_functions.txt` (and `hiprtcGetErrorString`) are\n\
         defined by ROCm's separate `libhiprtc.so.7`, which hip-remote does not ship; they are not\n\
         exported by this library.",
        cov.hiprtc.len()
    );
    s
}

/// The lists of `symbols/` that belong to `libamdhip64.so.7` itself (rendered above), not to a
/// library of their own.
const OWN_LISTS: &[&str] = &["hip", "hip_other", "hiprtc"];

/// The reason that says a function is provided after all (an exception to `*`).
const PROVIDED: &str = "provided";

/// One library's list: `symbols/<list>_functions.txt` and its reasons.
///
/// List format: the leading `#` lines describe the library and the first of them starts with
/// its file name and a colon (`# libhipsparse.so.4: ...`); then one function a line, `name` or
/// `name -> C return type`; `#` comments and blank lines anywhere. Reasons,
/// `<list>_not_supported_reasons.txt`: `name: reason` a line, and `*: reason` for every
/// function without a line of its own; a function with neither, or with the line
/// `name: provided`, is **provided** (implemented or forwarded).
pub struct LibraryList {
    pub list: String,
    pub title: String,
    pub description: String,
    pub functions: Vec<String>,
    pub reasons: BTreeMap<String, String>,
}

impl LibraryList {
    /// Every `symbols/<list>_functions.txt` but [`OWN_LISTS`], sorted by list name.
    pub fn all(manifest_dir: &std::path::Path) -> Vec<LibraryList> {
        let dir = manifest_dir.join("symbols");
        let mut lists: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter_map(|n| n.strip_suffix("_functions.txt").map(str::to_string))
            .filter(|l| !OWN_LISTS.contains(&l.as_str()))
            .collect();
        lists.sort();
        lists.into_iter().map(|list| Self::read(&dir, list)).collect()
    }

    fn read(dir: &std::path::Path, list: String) -> Self {
        let path = dir.join(format!("{list}_functions.txt"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let header: Vec<&str> = text.lines().map_while(|l| l.strip_prefix('#')).map(str::trim).collect();
        let title = header
            .first()
            .and_then(|l| l.split_once(':'))
            .map(|(t, _)| t.trim().to_string())
            .unwrap_or_else(|| panic!("{}: the first line must be `# <library file>: <description>`", path.display()));
        let description = header.join(" ").split_once(':').map(|(_, d)| d.trim().to_string()).unwrap_or_default();
        let functions = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| l.split_once("->").map_or(l, |(name, _)| name).trim().to_string())
            .collect();
        let reasons_path = dir.join(format!("{list}_not_supported_reasons.txt"));
        let reasons = std::fs::read_to_string(&reasons_path)
            .unwrap_or_default()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| {
                let (name, why) = l.split_once(':').unwrap_or_else(|| panic!("{}: no `name: reason` in {l:?}", reasons_path.display()));
                (name.trim().to_string(), why.trim().to_string())
            })
            .collect();
        Self { list, title, description, functions, reasons }
    }

    /// Why `name` is not supported, or `None` when it is provided.
    pub fn reason(&self, name: &str) -> Option<&str> {
        self.reasons.get(name).or_else(|| self.reasons.get("*")).map(String::as_str).filter(|why| *why != PROVIDED)
    }
}

/// The other libraries' sections: one per [`LibraryList`], after a summary.
pub fn render_libraries(libraries: &[LibraryList]) -> String {
    let mut s = String::from(
        "\n# Other ROCm libraries\n\n\
         Libraries hip-remote ships besides `libamdhip64.so.7` and `libhiprtc.so.7`, one section\n\
         each, from `client-capi/symbols/<list>_functions.txt` and\n\
         `<list>_not_supported_reasons.txt`. The stand-ins of `client-capi/shims/` load, export\n\
         every listed function and answer each with the library's own status (with\n\
         `HIP_REMOTE_DEBUG=1`, a line on stderr per call); **provided**: implemented or forwarded\n\
         to the worker.\n\n\
         | library | list | provided | not supported | total |\n| --- | --- | ---: | ---: | ---: |\n",
    );
    for lib in libraries {
        let unsupported = lib.functions.iter().filter(|f| lib.reason(f).is_some()).count();
        let _ = writeln!(
            s,
            "| [{}](#{}) | `{}_functions.txt` | {} | {unsupported} | {} |",
            lib.title,
            anchor(&lib.title),
            lib.list,
            lib.functions.len() - unsupported,
            lib.functions.len()
        );
    }
    for lib in libraries {
        let _ = writeln!(s, "\n## {}\n\n{}\n", lib.title, lib.description);
        let common = lib.reasons.get("*");
        if let Some(why) = common {
            let _ = writeln!(s, "Not supported unless the table says otherwise: {why}\n");
        }
        s.push_str("| function | status |\n| --- | --- |\n");
        for f in &lib.functions {
            let status = match (lib.reason(f), lib.reasons.get(f.as_str())) {
                (None, _) => PROVIDED.to_string(),
                (Some(why), Some(_)) => format!("not supported: {why}"),
                (Some(_), None) => "not supported".to_string(),
            };
            let _ = writeln!(s, "| `{f}` | {status} |");
        }
    }
    s
}

/// GitHub's heading anchor: lower case, spaces to `-`, punctuation but `-` and `_` dropped.
fn anchor(title: &str) -> String {
    title
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}
