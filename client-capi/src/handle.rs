//! Handles crossing the C boundary: the one place where HIP's handle types (`hipStream_t`,
//! `hipEvent_t`, `hipModule_t`, `hipFunction_t`, graphs, nodes and executable graphs, arrays,
//! texture and surface objects, memory pools, user objects, libraries, kernels, link states,
//! physical allocations) turn into ids (the worker's, or this library's tables') and back, and
//! where out-parameters are written (`try_out!`). A test fails on a cast to a handle type
//! anywhere else in the crate.
//!
//! A handle is an id dressed as a pointer: it is never dereferenced, so a stale or made-up one
//! is an unknown id (`hipErrorInvalidHandle` from whoever looks it up), never a crash; a null
//! one is refused here ([`Handle::checked_id`]).

use crate::abi::{
    hipArray_const_t, hipArray_t, hipEvent_t, hipFunction_t, hipGraphExec_t, hipGraphNode_t, hipGraph_t, hipKernel_t, hipLibrary_t, hipLinkState_t,
    hipMemGenericAllocationHandle_t, hipMemPool_t, hipMipmappedArray_const_t, hipMipmappedArray_t, hipModule_t, hipStream_t, hipSurfaceObject_t,
    hipTextureObject_t, hipUserObject_t, HipError,
};
use client_core::CallError;

/// A C handle type that carries a 64-bit id.
pub trait Handle: Sized + Copy {
    /// HIP's name of the type, for errors.
    const NAME: &'static str;
    /// The id the handle carries (lossless: pointers are at most 64 bits).
    fn id(self) -> u64;
    /// The handle for `id`; fails where a pointer cannot hold it (a 32-bit target).
    fn from_id(id: u64) -> Result<Self, CallError>;
    /// The id of a handle that must name an object: NULL is `hipErrorInvalidHandle`, as ROCm
    /// answers it.
    fn checked_id(self) -> Result<u64, CallError> {
        match self.id() {
            0 => Err(CallError::new(HipError::INVALID_HANDLE, format!("{} is NULL", Self::NAME))),
            id => Ok(id),
        }
    }
}

/// The id of any handle, as the wire carries it.
pub fn id<H: Handle>(handle: H) -> u64 {
    handle.id()
}

/// The handle for a wire id (an out-parameter's value).
pub fn from_id<H: Handle>(id: u64) -> Result<H, CallError> {
    H::from_id(id)
}

macro_rules! handles {
    (routed: $($routed:ident),*; local: $($local:ident),* $(;)?) => {
        $( handles!(@one $routed, |id| crate::remote::note_handle(id)); )*
        $( handles!(@one $local, |_id| ()); )*
    };
    (@one $t:ident, $note:expr) => {
        impl Handle for $t {
            const NAME: &'static str = stringify!($t);
            fn id(self) -> u64 {
                let id = self as usize as u64;
                ($note)(id);
                id
            }
            fn from_id(id: u64) -> Result<Self, CallError> {
                // An integer-to-pointer cast: the value is an id, never dereferenced.
                usize::try_from(id).map(|addr| addr as Self).map_err(|_| {
                    CallError::new(HipError::UNKNOWN, format!("{} id {id:#x} does not fit a pointer", stringify!($t)))
                })
            }
        }
    };
}
handles! {
    // With several workers, a call naming one of these goes to the handle's worker.
    routed: hipStream_t, hipEvent_t, hipModule_t, hipFunction_t;
    local: hipGraph_t, hipGraphExec_t, hipGraphNode_t, hipArray_t, hipArray_const_t, hipMipmappedArray_t, hipMipmappedArray_const_t,
        hipTextureObject_t, hipSurfaceObject_t, hipMemPool_t, hipUserObject_t, hipLibrary_t, hipKernel_t, hipLinkState_t,
        hipMemGenericAllocationHandle_t;
}

/// The same object under another handle type (a library's kernel is its function).
pub fn convert<From: Handle, To: Handle>(handle: From) -> Result<To, CallError> {
    To::from_id(handle.id())
}

/// The worker's id for `stream`: the null stream and `hipStreamLegacy` are the device's
/// legacy default stream (0); `hipStreamPerThread` is the calling thread's own default
/// stream of its current device ([`per_thread_stream_id`]).
pub fn stream_id(stream: hipStream_t) -> u64 {
    match stream.id() {
        1 => 0, // hipStreamLegacy
        2 => {
            let id = per_thread_stream_id(crate::state::devices::current_device());
            crate::remote::note_handle(id);
            id
        }
        id => id,
    }
}

/// The calling thread's per-thread default stream on `device`: an id of the worker's
/// per-thread range (`wire::PER_THREAD_STREAM_TAG | thread << 8 | device`), which the worker
/// creates on first sight as a blocking stream (so it synchronises with the legacy null
/// stream, as HIP and CUDA define) and this library destroys when the thread exits.
pub fn per_thread_stream_id(device: u32) -> u64 {
    use proto_core::wire::PER_THREAD_STREAM_TAG;
    let thread = PER_THREAD.with(|t| {
        t.used.borrow_mut().insert(device);
        t.index
    });
    PER_THREAD_STREAM_TAG | (thread << 8) | u64::from(device & 0xff)
}

/// This thread's index among the threads that used `hipStreamPerThread`, and the devices it
/// used it on; dropped at thread exit, destroying those streams on the worker.
struct PerThread {
    index: u64,
    used: std::cell::RefCell<std::collections::BTreeSet<u32>>,
}

impl Drop for PerThread {
    fn drop(&mut self) {
        if !crate::remote::is_open() {
            return;
        }
        let streams: Vec<u64> =
            self.used.borrow().iter().map(|&device| proto_core::wire::PER_THREAD_STREAM_TAG | (self.index << 8) | u64::from(device & 0xff)).collect();
        // Best effort, and never a panic out of a thread-local destructor (that aborts): the
        // session's end frees what this misses.
        let _ = std::panic::catch_unwind(|| {
            for stream in streams {
                // On the stream's device's worker (several workers).
                let device = (stream & 0xff) as u32;
                let _ = crate::remote::on_device(device, || {
                    crate::remote::with_conn(|c| proto_core::Calls::stream_destroy(c, proto_core::wire::StreamRef { stream }).map(drop))
                });
            }
        });
    }
}

thread_local! {
    static PER_THREAD: PerThread = {
        static NEXT_THREAD: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        // 40 bits of thread index: ids stay inside the tag's range.
        let index = NEXT_THREAD.fetch_add(1, std::sync::atomic::Ordering::Relaxed) & 0xff_ffff_ffff;
        PerThread { index, used: Default::default() }
    };
}

/// The stream a `_spt` (per-thread default stream) entry point means: its null stream is
/// `hipStreamPerThread`. Every `_spt` variant goes through this and then [`stream_id`].
pub fn spt(stream: hipStream_t) -> hipStream_t {
    if stream.is_null() {
        crate::abi::hipStreamPerThread
    } else {
        stream
    }
}

/// Writes `$value` through the out-parameter `$out`, or fails the call with
/// `hipErrorInvalidValue` when `$out` is NULL: `try_out!(count, n)`.
macro_rules! try_out {
    ($out:expr, $value:expr) => {{
        let out = $out;
        if out.is_null() {
            return Err(::client_core::CallError::new($crate::abi::HipError::INVALID_VALUE, concat!(stringify!($out), " is NULL")));
        }
        let value = $value;
        // SAFETY: checked non-null above; HIP's contract for out-parameters is that a non-null
        // one points at writable memory of its type.
        unsafe { out.write(value) };
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_default_streams_map_to_their_ids() {
        let e = hipEvent_t::from_id(0x1234).expect("fits");
        assert_eq!(e.id(), 0x1234);
        assert_eq!(stream_id(hipStream_t::from_id(1).expect("fits")), 0);
        let per_thread = stream_id(hipStream_t::from_id(2).expect("fits"));
        assert_eq!(per_thread & proto_core::wire::PER_THREAD_STREAM_TAG_MASK, proto_core::wire::PER_THREAD_STREAM_TAG);
        let other = std::thread::spawn(|| stream_id(crate::abi::hipStreamPerThread)).join().expect("thread");
        assert_ne!(per_thread, other, "each thread has its own");
        assert_eq!(stream_id(hipStream_t::from_id(77).expect("fits")), 77);
    }

    fn write_to(out: *mut u32) -> Result<(), CallError> {
        try_out!(out, 7);
        Ok(())
    }

    #[test]
    fn null_handles_are_refused_and_every_type_round_trips() {
        let e = hipGraph_t::from_id(0).expect("fits").checked_id().unwrap_err();
        assert_eq!(e.code, HipError::INVALID_HANDLE);
        assert!(e.message.contains("hipGraph_t is NULL"), "{}", e.message);
        fn round_trip<H: Handle>() {
            let h = H::from_id(0xfeed_0042).expect("fits");
            assert_eq!(h.checked_id().expect("non-null"), 0xfeed_0042, "{}", H::NAME);
        }
        round_trip::<hipArray_t>();
        round_trip::<hipMemPool_t>();
        round_trip::<hipUserObject_t>();
        round_trip::<hipMemGenericAllocationHandle_t>();
        let kernel: hipKernel_t = convert(hipFunction_t::from_id(9).expect("fits")).expect("fits");
        assert_eq!(kernel.id(), 9);
    }

    /// Casts to handle types (or to pointers to their pointee types) live in this module only:
    /// everywhere else goes through [`Handle`], so each conversion is one checked function.
    #[test]
    fn no_bare_handle_casts_outside_this_module() {
        const TYPES: &[&str] = &[
            "hipStream_t",
            "hipEvent_t",
            "hipModule_t",
            "hipFunction_t",
            "hipGraph_t",
            "hipGraphExec_t",
            "hipGraphNode_t",
            "hipArray_t",
            "hipArray_const_t",
            "hipMipmappedArray_t",
            "hipMipmappedArray_const_t",
            "hipTextureObject_t",
            "hipSurfaceObject_t",
            "hipMemPool_t",
            "hipUserObject_t",
            "hipLibrary_t",
            "hipKernel_t",
            "hipLinkState_t",
            "hipMemGenericAllocationHandle_t",
        ];
        const POINTEES: &[&str] = &[
            "ihipStream_t",
            "ihipEvent_t",
            "ihipModule_t",
            "ihipModuleSymbol_t",
            "ihipGraph",
            "hipGraphNode",
            "hipGraphExec",
            "hipArray",
            "hipMipmappedArray",
            "__hip_texture",
            "__hip_surface",
            "ihipMemPoolHandle_t",
            "hipUserObject",
            "ihipLibrary_t",
            "ihipKernel_t",
            "ihipLinkState_t",
            "ihipMemGenericAllocationHandle",
            "T",
        ];
        let is_ident = |c: char| c.is_alphanumeric() || c == '_';
        let word_at = |line: &str, at: usize, words: &[&str]| {
            let rest = &line[at..];
            words.iter().any(|w| rest.starts_with(w) && !rest[w.len()..].starts_with(is_ident))
        };
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut found = Vec::new();
        let mut dirs = vec![root.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).expect("source dir") {
                let path = entry.expect("entry").path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                // The handle module, and the C types' own definitions.
                if path.ends_with("handle.rs") || path.starts_with(root.join("abi")) || path.extension().is_none_or(|e| e != "rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).expect("source");
                for (n, line) in text.lines().enumerate() {
                    let code = line.split("//").next().unwrap_or("");
                    for (at, _) in code.match_indices(" as ") {
                        let after = code[at + 4..].trim_start();
                        let at = code.len() - after.len();
                        let bare = word_at(code, at, TYPES)
                            || ["*mut ", "*const "].iter().any(|p| after.starts_with(p) && word_at(code, at + p.len(), POINTEES));
                        if bare {
                            found.push(format!("{}:{}: {}", path.strip_prefix(&root).unwrap().display(), n + 1, line.trim()));
                        }
                    }
                }
            }
        }
        assert!(found.is_empty(), "bare casts to HIP handle types (use crate::handle::Handle):\n{}", found.join("\n"));
    }

    #[test]
    fn try_out_writes_or_refuses_null() {
        let mut v = 0u32;
        write_to(&mut v).expect("non-null");
        assert_eq!(v, 7);
        assert_eq!(write_to(std::ptr::null_mut()).unwrap_err().code, HipError::INVALID_VALUE);
    }
}
