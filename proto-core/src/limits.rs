//! Every limit of the protocol, in one place. Receivers check these *before* allocating or
//! reading; senders check them before writing. A peer that exceeds one gets
//! [`DecodeError::TooLarge`](crate::DecodeError::TooLarge) or
//! [`Status::FRAME_TOO_LARGE`](crate::Status::FRAME_TOO_LARGE).

/// Largest control part (payload minus bulk data) of any frame: 1 MiB. hiprtc sources and
/// compile logs are the biggest control parts; everything else is far smaller.
pub const MAX_CONTROL_LEN: usize = 1 << 20;

/// Largest control part a connection may send before it is authenticated: a HELLO with the
/// longest client name and a short token blob, or an AUTHENTICATE. A larger header is refused
/// before its payload is read.
pub const MAX_PREAUTH_CONTROL_LEN: usize = 8 << 10;

/// Largest bulk section of one frame: 64 MiB. Larger copies are split into chunks by the
/// sender (see [`DEFAULT_COPY_CHUNK`]), so a receiver never buffers more than this.
pub const MAX_BULK_LEN: usize = 64 << 20;

/// Largest whole frame: header + control + bulk.
pub const MAX_FRAME_LEN: usize = crate::header::HEADER_LEN + MAX_CONTROL_LEN + MAX_BULK_LEN;

/// Copy size clients split host↔device transfers into (4 MiB): large enough to amortise the
/// per-frame cost, small enough that the worker overlaps receiving one chunk with copying
/// the previous one.
pub const DEFAULT_COPY_CHUNK: usize = 4 << 20;

/// Longest length-prefixed string (names, kernel symbols, client names).
pub const MAX_NAME_LEN: usize = 4096;

/// Longest source text or compile log carried in a control part.
pub const MAX_TEXT_LEN: usize = 512 << 10;

/// Longest packed kernel-argument blob (CUDA and HIP allow 32 764 bytes of parameters).
pub const MAX_KERNEL_ARGS_LEN: usize = 32 << 10;

/// Most parameters one kernel may report.
pub const MAX_KERNEL_PARAMS: usize = 1024;

/// Longest opaque blob in control parts (ping payloads, authentication tokens).
pub const MAX_BLOB_LEN: usize = 64 << 10;

/// Most items in a string list (hiprtc options, headers, name expressions).
pub const MAX_LIST_ITEMS: usize = 1024;

/// Most bytes of header text (packed, terminators included) one hiprtc compile carries: the
/// embedded headers plus those libhiprtc resolves from the program's client-side `-I`
/// directories travel as one string list, which the wire bounds by [`MAX_TEXT_LEN`].
pub const MAX_RTC_HEADER_BYTES: usize = MAX_TEXT_LEN;

/// Most headers one hiprtc compile carries (embedded plus resolved): one list's item limit.
pub const MAX_RTC_HEADERS: usize = MAX_LIST_ITEMS;
/// Most bytes of program text (source and headers together) one session may stage with
/// `RtcStage` for an `RtcCompileStaged`: programs beyond one control frame (a device source of
/// megabytes). Checked by the worker before it keeps anything.
pub const MAX_RTC_STAGED_BYTES: usize = 32 << 20;

/// Capacity of fixed-size device-name strings (as `hipDeviceProp_t::name`).
pub const DEVICE_NAME_CAP: usize = 256;

/// Capacity of the architecture name (as `hipDeviceProp_t::gcnArchName`).
pub const ARCH_NAME_CAP: usize = 256;

/// Most devices in a client's device list of several workers (`SessionDeviceBase`): per-thread
/// stream ids carry a device in 8 bits (`wire::PER_THREAD_STREAM_TAG`).
pub const MAX_CLIENT_DEVICES: u32 = 256;
/// Largest `SessionDeviceBase` a worker accepts: its device 0 must still fit the list.
pub const MAX_DEVICE_BASE: u32 = MAX_CLIENT_DEVICES - 1;
/// Length of a session's resume secret (WELCOME's `resume_secret`, `features::RESUME`).
pub const RESUME_SECRET_LEN: usize = 32;
