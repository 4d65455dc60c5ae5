//! Streams and events on HIP: the runtime's `hipStream_t`s and `hipEvent_t`s.

use super::{lock, EventEntry, HipBackend, Raw, StreamEntry, EVENT_DISABLE_TIMING};
use crate::backend::{validate_event_flags, BackendError, DeviceIndex, EventBackend, EventHandle, HostFn, StreamBackend, StreamHandle};
use std::sync::Arc;

/// Appends what a `hipRemoteTakeKernelOutput` call hands over to the `Vec<u8>` at `ctx`.
unsafe extern "C" fn append_output(ctx: *mut std::ffi::c_void, text: *const std::ffi::c_char, len: usize) {
    // SAFETY: `ctx` is the `Vec` passed by `take_kernel_output` below, alive during the call;
    // `text` holds `len` bytes for the duration of the callback.
    unsafe { (*(ctx as *mut Vec<u8>)).extend_from_slice(std::slice::from_raw_parts(text as *const u8, len)) };
}

impl StreamBackend for HipBackend {
    /// On our own library (chained workers) what kernels printed, held there for us; AMD's
    /// runtime prints device output on the worker itself.
    fn account_stream(&self, stream: StreamHandle, account: Arc<crate::accounting::DeviceTime>) -> Result<(), BackendError> {
        let mut streams = lock(&self.streams);
        let entry = streams.get_mut(&stream.as_raw()).ok_or_else(|| BackendError::InvalidHandle(format!("stream {:#x}", stream.as_raw())))?;
        entry.account.get_or_insert_with(|| Arc::new(super::accounting::StreamAccount::new(Arc::clone(&self.api), account)));
        Ok(())
    }

    fn take_kernel_output(&self, _stream: StreamHandle) -> Vec<u8> {
        let mut text = Vec::new();
        if let Some(take) = self.api.hipRemoteTakeKernelOutput {
            // SAFETY: `append_output` copies into `text`, which outlives the call.
            unsafe { take(Some(append_output), &mut text as *mut Vec<u8> as *mut std::ffi::c_void) };
        }
        text
    }

    fn stream_create(&self, dev: DeviceIndex, flags: u32, priority: i32) -> Result<StreamHandle, BackendError> {
        use crate::backend::stream_flags::{NON_BLOCKING, SESSION_DEFAULT, SUPPORTED};
        if flags & !(SUPPORTED | SESSION_DEFAULT) != 0 {
            return Err(BackendError::InvalidValue(format!("unknown stream flags {flags:#x}")));
        }
        // A session's stand-in for the null stream must not synchronize with the null
        // stream, which every session of the process shares.
        let flags = if flags & SESSION_DEFAULT != 0 { NON_BLOCKING } else { flags };
        let (least, greatest) = self.stream_priority_range(dev)?;
        let priority = priority.clamp(greatest.min(least), greatest.max(least));
        // The device is current (entered by the range query).
        let raw = self.api.stream_create_with_priority(flags, priority)?;
        let id = self.handle();
        lock(&self.streams).insert(id, StreamEntry { raw: Raw(raw), device: dev, account: None });
        Ok(StreamHandle::from_raw(id))
    }

    fn stream_destroy(&self, stream: StreamHandle) -> Result<(), BackendError> {
        let entry =
            lock(&self.streams).remove(&stream.as_raw()).ok_or_else(|| BackendError::InvalidHandle(format!("stream {:#x}", stream.as_raw())))?;
        self.enter(entry.device)?;
        lock(&self.last_completion).remove(&(entry.raw.0 as usize, entry.device));
        // Drain first, so completions queued for it (copies' buffers) are reached.
        if let Some(account) = &entry.account {
            account.close(entry.raw.0);
        }
        // A live stream we own.
        let drained = self.api.stream_synchronize(entry.raw.0).map_err(BackendError::from);
        if let Some(account) = &entry.account {
            account.release();
        }
        // Removed from the table: destroyed once.
        self.api.stream_destroy(entry.raw.0)?;
        // The stream's own failure (a kernel's assert) belongs to its synchronizations, as on
        // the other backends: destroying it succeeds. A client that posts its destroys would
        // otherwise meet that error on an unrelated later call.
        if let Err(e) = drained {
            tracing::debug!(%e, "a stream destroyed after its work failed");
        }
        Ok(())
    }

    fn stream_synchronize(&self, stream: StreamHandle) -> Result<(), BackendError> {
        let s = self.stream(Some(stream), 0)?;
        let account = lock(&self.streams).get(&stream.as_raw()).and_then(|e| e.account.clone());
        if let Some(account) = &account {
            account.close(s);
        }
        let synced = self.api.stream_synchronize(s);
        if let Some(account) = &account {
            account.settle();
        }
        synced?;
        // The stream's copies and host functions have run only once their completions have.
        self.progress.fence();
        Ok(())
    }

    fn stream_query(&self, stream: StreamHandle) -> Result<bool, BackendError> {
        let (s, device) = self.stream_and_device(Some(stream), 0)?;
        let last = lock(&self.last_completion).get(&(s as usize, device)).copied().unwrap_or(0);
        // Idle, and its own completions (copies' buffers, host functions) have run: another
        // session's work in flight does not make this stream busy.
        Ok(self.api.stream_query(s)? && self.progress.reached(last))
    }

    fn stream_wait_event(&self, stream: Option<StreamHandle>, event: EventHandle) -> Result<(), BackendError> {
        let (raw, device, recorded) = self.event_entry(event)?;
        if let Some(page) = self.event_page(event) {
            // Recorded by any process sharing it: the stream waits on its page.
            let s = self.stream(stream, device)?;
            return self.stream_wait_event_page(&page, s);
        }
        if !recorded {
            return Ok(());
        }
        let s = self.stream(stream, device)?;
        Ok(self.api.stream_wait_event(s, raw.0)?)
    }

    fn stream_priority_range(&self, dev: DeviceIndex) -> Result<(i32, i32), BackendError> {
        self.enter(dev)?;
        Ok(self.api.stream_priority_range()?)
    }

    fn stream_info(&self, stream: StreamHandle) -> Result<(u32, i32), BackendError> {
        let s = self.stream(Some(stream), 0)?;
        Ok((self.api.stream_flags(s)?, self.api.stream_priority(s)?))
    }

    fn stream_order_after(&self, waiter: StreamHandle, waited: StreamHandle) -> Result<(), BackendError> {
        let waiter = self.stream(Some(waiter), 0)?;
        let waited = self.stream(Some(waited), 0)?;
        // The waited stream's device is current (entered last): hipEventRecord wants the
        // event on the stream's device; the waiter may be of another device.
        let event = self.api.event_create_with_flags(EVENT_DISABLE_TIMING)?;
        let ordered = self.api.event_record(event, waited).and_then(|()| self.api.stream_wait_event(waiter, event));
        // Ours; the runtime keeps a recorded event alive until the wait is resolved.
        let _ = self.api.event_destroy(event);
        Ok(ordered?)
    }

    /// Runs `f` on the completion thread once the stream reaches this point; unlike
    /// `hipLaunchHostFunc`, later work on the stream does not wait for `f` (the trait asks
    /// only that `f` run after the earlier work).
    fn launch_host_func(&self, stream: StreamHandle, f: HostFn) -> Result<(), BackendError> {
        let (s, dev) = self.stream_and_device(Some(stream), 0)?;
        self.when_reached(s, dev, Box::new(move |_| f()))
    }
}

impl HipBackend {
    pub(super) fn event_entry(&self, event: EventHandle) -> Result<(Raw<super::Event>, DeviceIndex, bool), BackendError> {
        let events = lock(&self.events);
        let e = events.get(&event.as_raw()).ok_or_else(|| BackendError::InvalidHandle(format!("event {:#x}", event.as_raw())))?;
        Ok((e.raw, e.device, e.recorded))
    }
}

impl EventBackend for HipBackend {
    fn event_create(&self, dev: DeviceIndex, flags: u32) -> Result<EventHandle, BackendError> {
        validate_event_flags(flags)?;
        self.enter(dev)?;
        let timing = flags & crate::backend::event_flags::DISABLE_TIMING == 0;
        // Not hipEventInterprocess: the runtime's interprocess events live in /dev/shm, which
        // a confined session process cannot reach; sharing gives an event a page of its own
        // (`ipc.rs`), and the session keeps the flag.
        let flags = flags & !crate::backend::event_flags::INTERPROCESS;
        // The device is current; the flags are HIP's own.
        let raw = self.api.event_create_with_flags(flags)?;
        let id = self.handle();
        lock(&self.events).insert(id, EventEntry { raw: Raw(raw), device: dev, timing, recorded: false, completions_before: 0 });
        Ok(EventHandle::from_raw(id))
    }

    fn event_destroy(&self, event: EventHandle) -> Result<(), BackendError> {
        let e = lock(&self.events).remove(&event.as_raw()).ok_or_else(|| BackendError::InvalidHandle(format!("event {:#x}", event.as_raw())))?;
        self.drop_event_page(event, e.device);
        self.enter(e.device)?;
        // Removed from the table: destroyed once.
        Ok(self.api.event_destroy(e.raw.0)?)
    }

    fn event_record(&self, event: EventHandle, stream: Option<StreamHandle>) -> Result<(), BackendError> {
        let (raw, device, _) = self.event_entry(event)?;
        let (s, stream_device) = self.stream_and_device(stream, device)?;
        if stream_device != device {
            return Err(BackendError::InvalidHandle(format!("event of device {device} recorded into a stream of device {stream_device}")));
        }
        let completions_before = self.progress.queued();
        // A client's event ends a batch of device time: what follows may come after a wait.
        if let Some(account) = stream.and_then(|h| lock(&self.streams).get(&h.as_raw()).and_then(|e| e.account.clone())) {
            account.close(s);
            account.settle();
        }
        self.api.event_record(raw.0, s)?;
        if let Some(page) = self.event_page(event) {
            self.record_event_page(&page, s)?;
        }
        if let Some(e) = lock(&self.events).get_mut(&event.as_raw()) {
            e.recorded = true;
            e.completions_before = completions_before;
        }
        Ok(())
    }

    fn event_synchronize(&self, event: EventHandle) -> Result<(), BackendError> {
        let (raw, device, recorded) = self.event_entry(event)?;
        if let Some(page) = self.event_page(event) {
            // Recorded by any process sharing it: its page says when.
            page.page.wait();
            return Ok(());
        }
        if !recorded {
            return Ok(());
        }
        self.enter(device)?;
        self.api.event_synchronize(raw.0)?;
        self.progress.fence();
        Ok(())
    }

    fn event_query(&self, event: EventHandle) -> Result<bool, BackendError> {
        let (raw, device, recorded) = self.event_entry(event)?;
        if let Some(page) = self.event_page(event) {
            return Ok(page.page.complete());
        }
        if !recorded {
            return Ok(true);
        }
        let completions_before = lock(&self.events).get(&event.as_raw()).map_or(0, |e| e.completions_before);
        self.enter(device)?;
        // Reached, and the completions queued before it ran: another session's later work in
        // flight does not make this event pending.
        Ok(self.api.event_query(raw.0)? && self.progress.reached(completions_before))
    }

    fn event_elapsed_ms(&self, start: EventHandle, end: EventHandle) -> Result<f32, BackendError> {
        let timing = |h: EventHandle| -> Result<(Raw<super::Event>, DeviceIndex), BackendError> {
            let events = lock(&self.events);
            let e = events.get(&h.as_raw()).ok_or_else(|| BackendError::InvalidHandle(format!("event {:#x}", h.as_raw())))?;
            if !e.timing || !e.recorded {
                return Err(BackendError::InvalidHandle("event not recorded or created with hipEventDisableTiming".into()));
            }
            Ok((e.raw, e.device))
        };
        let (a, dev) = timing(start)?;
        let (b, _) = timing(end)?;
        self.enter(dev)?;
        // Two live, recorded timing events.
        Ok(self.api.event_elapsed_ms(a.0, b.0)?)
    }
}
