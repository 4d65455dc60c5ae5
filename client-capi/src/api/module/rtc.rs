//! libhiprtc's entry point: compiles on the worker over this library's connection.

use super::*;
use proto_core::limits::{MAX_RTC_STAGED_BYTES, MAX_TEXT_LEN};
use proto_core::Bulk;

// ------------------------------------------------------------------------------------------------
// libhiprtc's entry point
// ------------------------------------------------------------------------------------------------

/// `(ptr, len)` as text.
///
/// # Safety
/// `ptr` must be valid for `len` bytes (or `len` 0).
pub(super) unsafe fn text<'a>(ptr: *const c_char, len: usize, what: &str) -> Result<&'a str, CallError> {
    if len == 0 {
        return Ok("");
    }
    if ptr.is_null() {
        return Err(CallError::new(HipError::INVALID_VALUE, format!("{what} is NULL")));
    }
    // SAFETY: caller contract.
    let bytes = unsafe { std::slice::from_raw_parts(ptr as *const u8, len) };
    std::str::from_utf8(bytes).map_err(|_| CallError::new(HipError::INVALID_VALUE, format!("{what} is not UTF-8")))
}

/// # Safety
/// As [`text`]; the list is packed NUL-terminated items.
pub(super) unsafe fn str_list<'a>(ptr: *const c_char, len: usize, what: &str) -> Result<StrList<'a>, CallError> {
    // SAFETY: forwarded caller contract.
    let packed = unsafe { text(ptr, len, what)? };
    StrList::from_packed(packed)
        .ok_or_else(|| CallError::new(HipError::INVALID_VALUE, format!("{what}: not NUL-terminated items, or more than the protocol's limits")))
}

/// **hip-remote internal entry point for libhiprtc** (not a HIP API): compiles a hiprtc program
/// on the worker over this library's connection, so a process that loads both
/// `libhiprtc.so.7` and `libamdhip64.so.7` keeps a single connection and session (and code
/// compiled for the worker's device is loaded by the same session). libhiprtc finds it with
/// `dlsym`.
///
/// Every string is `(pointer, byte length)`, UTF-8 without NUL; the four lists are packed
/// NUL-terminated items (`"a\0b\0"`): `header_names`/`header_sources` (same order), `options`,
/// `name_expressions`. Exactly one call of `on_result(ctx, ...)` happens before this returns:
/// `success` 1 with the code (a host module or code object for the worker's device), the
/// compiler's log and one lowered name per name expression (packed like the inputs); 0 when the
/// compiler failed (its log is `log`); -1 when no compilation happened (connection, limits,
/// worker refusal), with the reason as `log`, and then the result is that `hipError_t`.
/// Signature: [`proto_core::rtc_entry::RtcCompileFn`].
#[no_mangle]
pub unsafe extern "C" fn __hipRemoteRtcCompile(
    name: *const c_char,
    name_len: usize,
    source: *const c_char,
    source_len: usize,
    header_names: *const c_char,
    header_names_len: usize,
    header_sources: *const c_char,
    header_sources_len: usize,
    options: *const c_char,
    options_len: usize,
    name_expressions: *const c_char,
    name_expressions_len: usize,
    on_result: Option<RtcResultFn>,
    ctx: *mut c_void,
) -> c_int {
    let mut delivered = false;
    let mut failure = None;
    let result = hip_boundary!("__hipRemoteRtcCompile", {
        let Some(on_result) = on_result else {
            return Err(CallError::new(HipError::INVALID_VALUE, "on_result is NULL"));
        };
        let deliver = |out: &wire::RtcCompiled<'_>| {
            let (log, lowered, code) = (out.log.as_str(), out.lowered_names.packed(), out.code.0);
            // SAFETY: the callback copies what it keeps; the slices live until it returns.
            unsafe {
                on_result(
                    ctx,
                    c_int::from(out.success),
                    log.as_ptr() as *const c_char,
                    log.len(),
                    lowered.as_ptr() as *const c_char,
                    lowered.len(),
                    code.as_ptr() as *const c_void,
                    code.len(),
                )
            };
            delivered = true;
        };
        // SAFETY: (pointer, length) pairs per this function's contract.
        let compiled = unsafe {
            rtc_compile(
                [(name, name_len), (source, source_len)],
                [
                    (header_names, header_names_len),
                    (header_sources, header_sources_len),
                    (options, options_len),
                    (name_expressions, name_expressions_len),
                ],
                deliver,
            )
        };
        if let Err(e) = &compiled {
            failure = Some(e.message.clone());
        }
        compiled
    });
    if !delivered && result != HipError::SUCCESS {
        if let Some(on_result) = on_result {
            let why = format!(
                "hip-remote: compilation on the worker did not happen: {} ({})",
                failure.as_deref().unwrap_or("internal error"),
                result.name().to_string_lossy()
            );
            // SAFETY: as above; an empty list and no code.
            unsafe { on_result(ctx, -1, why.as_ptr() as *const c_char, why.len(), c"".as_ptr(), 0, std::ptr::null(), 0) };
        }
    }
    result.0
}

/// The definition above is checked against the one declaration of the private ABI.
const _: RtcCompileFn = __hipRemoteRtcCompile;

/// Sends one `RtcCompile` and hands its reply to `deliver`.
///
/// # Safety
/// Every `(pointer, length)` pair must be valid (see [`__hipRemoteRtcCompile`]).
pub(super) unsafe fn rtc_compile(
    [(name, name_len), (source, source_len)]: [(*const c_char, usize); 2],
    [(hn, hn_len), (hs, hs_len), (opts, opts_len), (ne, ne_len)]: [(*const c_char, usize); 4],
    deliver: impl FnOnce(&wire::RtcCompiled<'_>),
) -> Result<(), CallError> {
    // SAFETY: forwarded caller contract.
    let (name, source, header_sources) =
        unsafe { (wire_name(text(name, name_len, "name")?), text(source, source_len, "source")?, text(hs, hs_len, "header_sources")?) };
    // SAFETY: forwarded caller contract.
    let (header_names, options, name_expressions) =
        unsafe { (str_list(hn, hn_len, "header_names")?, str_list(opts, opts_len, "options")?, str_list(ne, ne_len, "name_expressions")?) };
    if source.len() + header_sources.len() <= MAX_TEXT_LEN {
        let req = wire::RtcCompile {
            device: current_device(),
            name: name.into(),
            source: source.into(),
            header_names,
            header_sources: StrList::from_packed(header_sources).ok_or_else(|| {
                CallError::new(HipError::INVALID_VALUE, "header_sources: not NUL-terminated items, or more than the protocol's limits")
            })?,
            options,
            name_expressions,
        };
        return with_conn(|c| c.rtc_compile(req).map(|out| deliver(&out)));
    }
    // A program beyond one control frame travels as bulk pieces staged on the worker (the
    // source, then each header), then compiles by name: as a device source of hipcc's does.
    let headers: Vec<&str> = header_sources.split_terminator('\0').collect();
    if !header_sources.is_empty() && !header_sources.ends_with('\0') {
        return Err(CallError::new(HipError::INVALID_VALUE, "header_sources: not NUL-terminated items"));
    }
    let staged = source.len() + headers.iter().map(|h| h.len()).sum::<usize>();
    if staged > MAX_RTC_STAGED_BYTES {
        return Err(CallError::new(
            HipError::INVALID_VALUE,
            format!("the program and its headers are {staged} bytes of text, more than the {MAX_RTC_STAGED_BYTES} a worker compiles"),
        ));
    }
    let req = wire::RtcCompileStaged { device: current_device(), name: name.into(), header_names, options, name_expressions };
    with_conn(|c| {
        for (part, text) in std::iter::once(source).chain(headers.iter().copied()).enumerate() {
            for piece in text.as_bytes().chunks(MAX_BULK_LEN) {
                c.rtc_stage(wire::RtcStage { part: part as u32, text: Bulk(piece) })?;
            }
        }
        c.rtc_compile_staged(req).map(|out| deliver(&out))
    })
}
