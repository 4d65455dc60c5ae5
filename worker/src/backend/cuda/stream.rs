//! Streams on CUDA: `CUstream`s of the device's primary context.

use super::{lock, result, sys, write, CudaBackend, Raw, StreamEntry};
use crate::backend::{BackendError, DeviceIndex, EventHandle, HostFn, StreamBackend, StreamHandle};

impl StreamBackend for CudaBackend {
    fn stream_create(&self, dev: DeviceIndex, flags: u32, priority: i32) -> Result<StreamHandle, BackendError> {
        use crate::backend::stream_flags::{NON_BLOCKING, SESSION_DEFAULT, SUPPORTED};
        if flags & !(SUPPORTED | SESSION_DEFAULT) != 0 {
            return Err(BackendError::InvalidValue(format!("unknown stream flags {flags:#x}")));
        }
        // A session's stand-in for the null stream must not synchronize with the legacy
        // stream, which every session of the process shares.
        let flags = if flags & SESSION_DEFAULT != 0 { NON_BLOCKING } else { flags };
        self.enter(dev)?;
        let (least, greatest) = self.stream_priority_range(dev)?;
        let priority = priority.clamp(greatest.min(least), greatest.max(least));
        let raw = result::stream::create_with_priority(flags, priority)?;
        let id = self.handle();
        write(&self.streams).insert(id, StreamEntry { raw: Raw(raw), device: dev, account: None });
        Ok(StreamHandle::from_raw(id))
    }

    fn stream_destroy(&self, stream: StreamHandle) -> Result<(), BackendError> {
        let entry =
            write(&self.streams).remove(&stream.as_raw()).ok_or_else(|| BackendError::InvalidHandle(format!("stream {:#x}", stream.as_raw())))?;
        self.enter(entry.device)?;
        // Drain first so host functions referencing this backend finish; the device logs
        // are read, so their modules know the stream's kernels are done (the text is lost
        // with the stream, as its latched error is).
        let sync = self.synchronize_stream_accounted(stream, entry.raw.0, entry.account.as_deref());
        lock(&self.outputs).forget(stream.as_raw());
        // The log reads may have entered another device.
        self.enter(entry.device)?;
        if let Some(account) = &entry.account {
            account.release();
        }
        // Removed from the table: destroyed once.
        result::stream::destroy(entry.raw.0)?;
        match sync {
            // A kernel's failed assert is for synchronizes to report, as on the host backend.
            Err(BackendError::Assert(_)) => Ok(()),
            other => other,
        }
    }

    fn stream_synchronize(&self, stream: StreamHandle) -> Result<(), BackendError> {
        let s = self.stream(Some(stream), 0)?;
        self.synchronize_stream(stream, s)
    }

    fn account_stream(&self, stream: StreamHandle, account: std::sync::Arc<crate::accounting::DeviceTime>) -> Result<(), BackendError> {
        let mut streams = write(&self.streams);
        let entry = streams.get_mut(&stream.as_raw()).ok_or_else(|| BackendError::InvalidHandle(format!("stream {:#x}", stream.as_raw())))?;
        entry.account.get_or_insert_with(|| std::sync::Arc::new(super::accounting::StreamAccount::new(account)));
        Ok(())
    }

    fn take_kernel_output(&self, stream: StreamHandle) -> Vec<u8> {
        lock(&self.outputs).take(stream.as_raw())
    }

    fn stream_query(&self, stream: StreamHandle) -> Result<bool, BackendError> {
        let s = self.stream(Some(stream), 0)?;
        self.latched(stream.as_raw())?;
        Ok(result::stream::query(s)?)
    }

    fn stream_wait_event(&self, stream: Option<StreamHandle>, event: EventHandle) -> Result<(), BackendError> {
        let (raw, device, recorded) = {
            let events = lock(&self.events);
            let e = events.get(&event.as_raw()).ok_or_else(|| BackendError::InvalidHandle(format!("event {:#x}", event.as_raw())))?;
            (e.raw, e.device, e.recorded)
        };
        if let Some(page) = self.event_page(event) {
            // Recorded by any process sharing it: the stream waits on its page.
            let s = self.stream(stream, device)?;
            return self.stream_wait_event_page(&page, s);
        }
        if !recorded {
            return Ok(());
        }
        let s = self.stream(stream, device)?;
        Ok(result::stream::wait_event(s, raw.0)?)
    }

    fn stream_priority_range(&self, dev: DeviceIndex) -> Result<(i32, i32), BackendError> {
        self.enter(dev)?;
        Ok(result::stream::priority_range()?)
    }

    fn stream_info(&self, stream: StreamHandle) -> Result<(u32, i32), BackendError> {
        let s = self.stream(Some(stream), 0)?;
        Ok((result::stream::flags(s)?, result::stream::priority(s)?))
    }

    fn stream_order_after(&self, waiter: StreamHandle, waited: StreamHandle) -> Result<(), BackendError> {
        let waiter = self.stream(Some(waiter), 0)?;
        let waited = self.stream(Some(waited), 0)?;
        // The waited stream's context is current (entered last): cuEventRecord wants the
        // event in the stream's context; the waiter may be of another device.
        let event = result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32)?;
        let ordered = result::event::record(event, waited).and_then(|()| result::stream::wait_event(waiter, event));
        // Ours; the driver keeps a recorded event alive until the wait is resolved.
        let _ = result::event::destroy(event);
        Ok(ordered?)
    }

    fn launch_host_func(&self, stream: StreamHandle, f: HostFn) -> Result<(), BackendError> {
        let s = self.stream(Some(stream), 0)?;
        self.launch_host(s, f)
    }
}
