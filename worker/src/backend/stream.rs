//! Streams: in-order queues of device work.

use super::{BackendError, DeviceIndex, EventHandle, StreamHandle};

/// `hipStreamCreateWithFlags` flags.
pub mod stream_flags {
    /// `hipStreamDefault`: a blocking stream, implicitly synchronized with the null stream.
    pub const DEFAULT: u32 = 0x0;
    /// `hipStreamNonBlocking`: no implicit synchronization with the null stream.
    pub const NON_BLOCKING: u32 = 0x1;
    /// Every flag a client may ask for.
    pub const SUPPORTED: u32 = NON_BLOCKING;
    /// Internal, never from a client: the stream a session uses in place of the null stream
    /// of a device, so sessions never share one (one client's queued null-stream work must
    /// not delay another client's synchronous call). It does not synchronize with other
    /// streams by itself; the session orders it after its own blocking streams, and them
    /// after it, with [`StreamBackend::stream_order_after`](super::StreamBackend::stream_order_after).
    /// The host backend runs its work on the caller's thread, as its null stream does; GPU
    /// backends create a non-blocking stream.
    pub const SESSION_DEFAULT: u32 = 0x8000_0000;
}

/// A host function queued on a stream (`hipLaunchHostFunc`). It runs on the stream's
/// executor once all earlier work on the stream is done and must not call back into the
/// backend for that stream (CUDA and HIP forbid runtime calls from host functions too).
pub type HostFn = Box<dyn FnOnce() + Send + 'static>;

/// The stream family: creating, synchronizing and querying streams, cross-stream waits and
/// host functions.
pub trait StreamBackend {
    /// Creates a stream on `dev`. `flags` are [`stream_flags`]; `priority` is clamped into
    /// [`StreamBackend::stream_priority_range`] as HIP does.
    fn stream_create(&self, dev: DeviceIndex, flags: u32, priority: i32) -> Result<StreamHandle, BackendError>;

    /// Adds the device time of `stream`'s work from now on to `account` (the session's, see
    /// [`crate::accounting`]). Default: not accounted (a backend that cannot measure).
    fn account_stream(&self, stream: StreamHandle, account: std::sync::Arc<crate::accounting::DeviceTime>) -> Result<(), BackendError> {
        let _ = (stream, account);
        Ok(())
    }

    /// What kernels on `stream` printed (`printf`) since the last call, in launch order, for
    /// the client's standard output. Default: nothing (a GPU runtime prints device output
    /// itself, on the worker's standard output).
    fn take_kernel_output(&self, stream: StreamHandle) -> Vec<u8> {
        let _ = stream;
        Vec::new()
    }

    /// Drains the stream's queued work, then destroys it.
    fn stream_destroy(&self, stream: StreamHandle) -> Result<(), BackendError>;

    /// Waits for all work queued so far; returns the first error any queued operation of
    /// this stream hit (latched until the stream is destroyed).
    fn stream_synchronize(&self, stream: StreamHandle) -> Result<(), BackendError>;

    /// Whether all queued work is done (the session maps `false` to `hipErrorNotReady`); a
    /// latched error is returned as `Err`.
    fn stream_query(&self, stream: StreamHandle) -> Result<bool, BackendError>;

    /// Makes later work on `stream` wait until `event`'s latest record is reached. An event
    /// never recorded imposes no wait. `None` blocks the null stream, i.e. the caller.
    fn stream_wait_event(&self, stream: Option<StreamHandle>, event: EventHandle) -> Result<(), BackendError>;

    /// `(least, greatest)` priority as `hipDeviceGetStreamPriorityRange` reports it; a lower
    /// number is a higher priority. `(0, 0)` means priorities are not supported.
    fn stream_priority_range(&self, dev: DeviceIndex) -> Result<(i32, i32), BackendError>;

    /// `(flags, priority)` of a created stream: the flags it was created with and its
    /// priority after clamping (`hipStreamGetFlags`, `hipStreamGetPriority`).
    fn stream_info(&self, stream: StreamHandle) -> Result<(u32, i32), BackendError>;

    /// Makes later work on `waiter` wait until `waited` has run everything submitted to it
    /// so far (an event recorded on `waited` and waited for on `waiter`, without the
    /// event). Sessions use it for the legacy null stream's implicit synchronization with
    /// their own blocking streams.
    fn stream_order_after(&self, waiter: StreamHandle, waited: StreamHandle) -> Result<(), BackendError>;

    /// Queues `f` to run on the stream's executor after earlier work (`hipLaunchHostFunc`).
    fn launch_host_func(&self, stream: StreamHandle, f: HostFn) -> Result<(), BackendError>;
}
