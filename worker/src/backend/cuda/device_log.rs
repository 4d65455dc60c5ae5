//! Kernel `printf` and `assert` on CUDA: modules compiled by hip-remote define the device log
//! ([`crate::backend::device_log`]); after each wait for a stream, an event or a device, the
//! logs of the modules whose kernels that wait covered are read, their text kept for the
//! stream's client ([`StreamBackend::take_kernel_output`](crate::backend::StreamBackend)) and
//! a failed assert latched on the stream as `hipErrorAssert`, as the host backend does. The
//! device side ends an asserting thread without a trap, so the shared context stays usable.

use super::{lock, read, result, sys, CudaBackend, Raw};
use crate::backend::device_log::{Delivery, DeviceLog, LogMemory, Waited, HEADER_BYTES, NULL_STREAM, SYMBOL};
use crate::backend::{BackendError, DeviceIndex, StreamHandle};
use cudarc::driver::sys::{CUmodule, CUstream};
use std::ffi::CString;

/// Device memory as [`DeviceLog`] reads it: copies on a non-blocking stream of the worker's
/// own per device, so a read neither waits for other work (the legacy stream would wait for
/// every blocking stream of every session) nor is queued behind it.
pub(super) struct CudaLogMemory<'a>(pub(super) &'a CudaBackend);

impl LogMemory for CudaLogMemory<'_> {
    fn read(&mut self, device: DeviceIndex, address: u64, out: &mut [u8]) -> Result<(), BackendError> {
        let s = self.0.log_stream(device)?;
        // SAFETY: `out` is writable for its length and the copy is finished (synchronized
        // below) before this returns; `address` is a module global of at least the bytes read
        // (DeviceLog keeps every read inside the global it opened).
        unsafe { result::mem::copy_dtoh_async(out.as_mut_ptr(), address, out.len(), s) }?;
        Ok(result::stream::synchronize(s)?)
    }

    fn zero(&mut self, device: DeviceIndex, address: u64, len: u64) -> Result<(), BackendError> {
        let s = self.0.log_stream(device)?;
        // A range inside a module global (see `read`), written while no kernel writes the log
        // (DeviceLog resets only a settled log).
        result::mem::set_d8_async(address, 0, len as usize, s)?;
        Ok(result::stream::synchronize(s)?)
    }
}

/// Bytes of a log header.
const HEADER: usize = HEADER_BYTES as usize;

/// The log's key for a stream argument.
pub(super) fn stream_key(stream: Option<StreamHandle>) -> u64 {
    stream.map_or(NULL_STREAM, |s| s.as_raw())
}

impl CudaBackend {
    /// `device`'s stream for log reads, created on first use; enters the device.
    pub(super) fn log_stream(&self, device: DeviceIndex) -> Result<CUstream, BackendError> {
        self.enter(device)?;
        let mut streams = lock(&self.log_streams);
        if let Some(s) = streams.get(&device) {
            return Ok(s.0);
        }
        // The device's context is current; destroyed in Drop.
        let raw = result::stream::create(sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32)?;
        streams.insert(device, Raw(raw));
        Ok(raw)
    }

    /// Finds a freshly loaded module's device log, if it has one, and starts tracking it.
    pub(super) fn open_device_log(&self, module: u64, raw: CUmodule, device: DeviceIndex) {
        let name = CString::new(SYMBOL).expect("no NUL");
        let Ok((address, size)) = result::module::global(raw, &name) else {
            // Not compiled by hip-remote (or without printf support): kernel printf, if any,
            // goes to the driver's own FIFO and the worker's stdout.
            return;
        };
        match DeviceLog::open(&mut CudaLogMemory(self), device, address, size as u64) {
            Ok(Some(log)) => lock(&self.logs).add_module(module, log),
            Ok(None) => {}
            Err(e) => tracing::warn!(%e, "reading a module's device log header failed: its kernels' printf output is not forwarded"),
        }
    }

    /// Queues a launch of `module`'s kernels on `stream` with `launch` and records it for
    /// the log reads, both inside the log gate (see [`Waited`]): shared, so the launches of
    /// several sessions reach the driver side by side.
    pub(super) fn launch_logged(
        &self,
        module: u64,
        stream: Option<StreamHandle>,
        launch: impl FnOnce() -> Result<(), BackendError>,
    ) -> Result<(), BackendError> {
        if !lock(&self.logs).has_log(module) {
            return launch();
        }
        let _gate = self.log_gate.read().unwrap_or_else(|p| p.into_inner());
        launch()?;
        lock(&self.logs).launched(module, stream_key(stream));
        Ok(())
    }

    /// Which launches a wait covers (`before`), taken with no launch between its queueing
    /// and its recording.
    fn waited(&self, before: impl FnOnce(&crate::backend::device_log::LogBook) -> Waited) -> Waited {
        let _gate = self.log_gate.write().unwrap_or_else(|p| p.into_inner());
        before(&lock(&self.logs))
    }

    /// Like [`CudaBackend::launch_logged`] for a graph launch.
    pub(super) fn graph_launch_logged(
        &self,
        exec: u64,
        stream: Option<StreamHandle>,
        launch: impl FnOnce() -> Result<(), BackendError>,
    ) -> Result<(), BackendError> {
        if !lock(&self.logs).graph_has_logs(exec) {
            return launch();
        }
        let _gate = self.log_gate.read().unwrap_or_else(|p| p.into_inner());
        launch()?;
        lock(&self.logs).graph_launched(exec, stream_key(stream));
        Ok(())
    }

    /// Like [`CudaBackend::synchronize_stream`] for a copy that waits for its stream: the logs
    /// are read (text kept, asserts latched for the next synchronize), the copy's own result
    /// returned.
    pub(super) fn copy_waiting_for_stream(
        &self,
        stream: Option<StreamHandle>,
        copy: impl FnOnce() -> Result<(), BackendError>,
    ) -> Result<(), BackendError> {
        let waited = self.waited(|logs| logs.before_stream_wait(stream_key(stream)));
        let result = copy();
        self.read_logs(waited);
        result
    }

    /// Like [`CudaBackend::synchronize_stream`] for an event recorded on `stream`: later work
    /// may still run, so the logs are read but not reset.
    pub(super) fn wait_for_event(&self, stream: u64, wait: impl FnOnce() -> Result<(), BackendError>) -> Result<(), BackendError> {
        let waited = self.waited(|logs| logs.before_event_wait(stream));
        let result = wait();
        self.read_logs(waited);
        result.and_then(|()| self.latched(stream))
    }

    /// Like [`CudaBackend::synchronize_stream`] for all of `device`'s work; an assert found
    /// makes it fail, its text going to the stream of the module's latest launch.
    pub(super) fn wait_for_device(&self, device: DeviceIndex, wait: impl FnOnce() -> Result<(), BackendError>) -> Result<(), BackendError> {
        let waited = self.waited(|logs| logs.before_device_wait(device));
        let result = wait();
        let asserts = self.read_logs(waited);
        result?;
        if asserts > 0 {
            return Err(assert_error(asserts));
        }
        Ok(())
    }

    /// Synchronizes `s` (the live stream `stream`), reading the logs of the modules launched
    /// on it. Their headers are copied on `s` itself before the wait, into pinned memory, so
    /// the common case — nothing printed — costs no round trip of its own.
    pub(super) fn synchronize_stream(&self, stream: StreamHandle, s: CUstream) -> Result<(), BackendError> {
        let account = read(&self.streams).get(&stream.as_raw()).and_then(|e| e.account.clone());
        self.synchronize_stream_accounted(stream, s, account.as_deref())
    }

    /// [`synchronize_stream`](Self::synchronize_stream) with the stream's account (a stream
    /// being destroyed is no longer in the table).
    pub(super) fn synchronize_stream_accounted(
        &self,
        stream: StreamHandle,
        s: CUstream,
        account: Option<&super::accounting::StreamAccount>,
    ) -> Result<(), BackendError> {
        let waited = self.waited(|logs| logs.before_stream_wait(stream.as_raw()));
        let mut prefetch = self.prefetch_headers(&waited, s);
        if let Some(account) = account {
            account.close(s);
        }
        let result = result::stream::synchronize(s).map_err(BackendError::from);
        if let Some(account) = account {
            account.settle();
        }
        let mut headers = Vec::new();
        if let Some((pinned, count)) = prefetch.as_mut() {
            if result.is_ok() {
                let bytes = pinned.slice(*count * HEADER);
                headers = waited.headers()[..*count]
                    .iter()
                    .zip(bytes.chunks_exact(HEADER))
                    .map(|(&(module, _), header)| (module, header.try_into().expect("HEADER bytes")))
                    .collect();
            }
        }
        if let Some((pinned, _)) = prefetch {
            self.return_staging(pinned);
        }
        self.read_logs_with(waited, &headers);
        result.and_then(|()| self.latched(stream.as_raw()))
    }

    /// Queues copies of `waited`'s log headers on `s` into a staging buffer; `None` when
    /// there are none or the copies could not be queued (the headers are then read after).
    fn prefetch_headers(&self, waited: &Waited, s: CUstream) -> Option<(super::Pinned, usize)> {
        let logs = waited.headers();
        if logs.is_empty() {
            return None;
        }
        let mut pinned = self.take_staging().ok()?;
        let count = logs.len().min(super::STAGING_BYTES / HEADER);
        let base = pinned.slice(count * HEADER).as_mut_ptr();
        for (i, &(_, address)) in logs[..count].iter().enumerate() {
            // SAFETY: the pinned buffer holds `count` headers, untouched until the stream is
            // synchronized; the header of a live module's log.
            let queued = unsafe { result::mem::copy_dtoh_async(base.wrapping_add(i * HEADER), address, HEADER, s) };
            if queued.is_err() {
                // The copies already queued finish with the synchronize; the buffer is
                // given back only after it.
                let _ = result::stream::synchronize(s);
                self.return_staging(pinned);
                return None;
            }
        }
        Some((pinned, count))
    }

    /// Reads the logs `waited` covers; returns the asserts found.
    fn read_logs(&self, waited: Waited) -> u32 {
        self.read_logs_with(waited, &[])
    }

    /// [`CudaBackend::read_logs`] with headers already copied.
    fn read_logs_with(&self, waited: Waited, headers: &[(u64, [u8; HEADER])]) -> u32 {
        let deliveries = lock(&self.logs).after_wait(waited, &mut CudaLogMemory(self), headers);
        deliveries.into_iter().map(|d| self.deliver(d)).sum()
    }

    /// Keeps a delivery's text for its stream and latches its asserts there; a stream gone
    /// since (or the legacy null stream, which no client synchronizes by handle) loses them.
    /// Returns the asserts.
    pub(super) fn deliver(&self, delivery: Delivery) -> u32 {
        let asserts = delivery.asserts;
        if delivery.stream != NULL_STREAM && read(&self.streams).contains_key(&delivery.stream) {
            lock(&self.outputs).deliver(delivery);
        } else if !delivery.text.is_empty() {
            tracing::debug!(bytes = delivery.text.len(), "kernel printf output of a stream no longer there dropped");
        }
        asserts
    }

    /// The error latched on `stream`, until it is destroyed.
    pub(super) fn latched(&self, stream: u64) -> Result<(), BackendError> {
        lock(&self.outputs).latched(stream)
    }
}

fn assert_error(asserts: u32) -> BackendError {
    BackendError::Assert(format!("{asserts} device-side assert(s) failed in kernels of this device (their messages are in the kernel output)"))
}
