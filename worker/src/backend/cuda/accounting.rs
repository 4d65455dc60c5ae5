//! Device time of accounted streams ([`crate::accounting`]), measured in brackets: an event
//! recorded before the first operation of a batch and one after its last, their elapsed
//! time added to the stream's account once both are reached. A batch ends when the backend
//! waits for the stream (a synchronize, a blocking copy), when the client records an event on
//! it, or after [`BRACKET_OPS`]
//! operations; so the launch path pays one uncontended lock and a counter, and two event
//! records per batch, not per launch. What a bracket counts is the stream's time from its
//! batch's first operation to its last: idle gaps inside a batch (a client submitting more
//! slowly than the GPU runs its work, without synchronizing) count too.

use super::{lock, read, result, sys, CudaBackend, Raw};
use crate::accounting::DeviceTime;
use crate::backend::{BackendError, StreamHandle};
use cudarc::driver::sys::{CUevent, CUstream};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// Operations in one bracket at most (a stream never synchronized still gets its time).
pub const BRACKET_OPS: u32 = 256;
/// Brackets waiting for their events; past it the open bracket grows instead.
pub const MAX_PENDING_BRACKETS: usize = 32;

/// The brackets of one stream.
pub(super) struct StreamAccount {
    device_time: Arc<DeviceTime>,
    brackets: Mutex<Brackets>,
}

#[derive(Default)]
struct Brackets {
    /// The open bracket's start event and how many operations it holds.
    open: Option<(Raw<CUevent>, u32)>,
    /// Closed brackets (start, end), oldest first.
    closed: VecDeque<(Raw<CUevent>, Raw<CUevent>)>,
    /// Events to reuse.
    spare: Vec<Raw<CUevent>>,
}

impl Brackets {
    fn event(&mut self) -> Result<Raw<CUevent>, BackendError> {
        if let Some(event) = self.spare.pop() {
            return Ok(event);
        }
        // The stream's context is current (the caller entered it).
        Ok(Raw(result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT as u32)?))
    }

    /// Records the end of the open bracket on `s`.
    fn close(&mut self, s: CUstream) {
        let Some((start, _)) = self.open.take() else { return };
        match self.event() {
            Ok(end) => {
                if result::event::record(end.0, s).is_ok() {
                    self.closed.push_back((start, end));
                    return;
                }
                self.spare.extend([start, end]);
            }
            Err(_) => self.spare.push(start),
        }
    }

    /// Adds the closed brackets whose end was reached to `account`, oldest first.
    fn settle(&mut self, account: &DeviceTime) {
        while let Some(&(start, end)) = self.closed.front() {
            // Live events of the current context, both recorded.
            match result::event::query(end.0) {
                Ok(false) => return,
                Ok(true) => {
                    // Both events completed.
                    if let Ok(ms) = result::event::elapsed_ms(start.0, end.0) {
                        account.add(std::time::Duration::from_secs_f64(f64::from(ms.max(0.0)) * 1e-3));
                    }
                }
                // The stream failed: its time is lost with its work.
                Err(_) => {}
            }
            self.closed.pop_front();
            self.spare.extend([start, end]);
        }
    }
}

impl StreamAccount {
    pub(super) fn new(device_time: Arc<DeviceTime>) -> Self {
        Self { device_time, brackets: Mutex::default() }
    }

    /// Before an operation is queued on `s` (context current): opens a bracket, or ends a
    /// full one and opens the next.
    pub(super) fn before_work(&self, s: CUstream) {
        self.device_time.pace_queued_op();
        let mut b = lock(&self.brackets);
        if b.open.is_some_and(|(_, ops)| ops >= BRACKET_OPS) && b.closed.len() < MAX_PENDING_BRACKETS {
            b.close(s);
            b.settle(&self.device_time);
        }
        if b.open.is_none() {
            let Ok(start) = b.event() else { return };
            if result::event::record(start.0, s).is_err() {
                b.spare.push(start);
                return;
            }
            b.open = Some((start, 0));
        }
        if let Some((_, ops)) = &mut b.open {
            *ops += 1;
        }
    }

    /// Before the backend waits for `s`: ends the open bracket.
    pub(super) fn close(&self, s: CUstream) {
        lock(&self.brackets).close(s);
    }

    /// After the backend waited for `s`: adds what the finished brackets measured.
    pub(super) fn settle(&self) {
        let mut b = lock(&self.brackets);
        b.settle(&self.device_time);
    }

    /// Destroys the events (the stream was synchronized and destroyed; context current).
    pub(super) fn release(&self) {
        let mut b = lock(&self.brackets);
        b.settle(&self.device_time);
        let Brackets { open, closed, spare } = std::mem::take(&mut *b);
        let events = open.map(|(start, _)| start).into_iter().chain(closed.into_iter().flat_map(|(s, e)| [s, e])).chain(spare);
        for event in events {
            // Ours, no longer recorded into a live stream's pending work.
            let _ = result::event::destroy(event.0);
        }
    }
}

impl CudaBackend {
    /// The stream an operation is queued on (see [`CudaBackend::stream`]), its bracket
    /// opened when the stream is accounted.
    pub(super) fn work_stream(&self, stream: Option<StreamHandle>, dev: crate::backend::DeviceIndex) -> Result<CUstream, BackendError> {
        let Some(handle) = stream else { return self.stream(None, dev) };
        let (raw, device, account) = {
            let streams = read(&self.streams);
            let e = streams.get(&handle.as_raw()).ok_or_else(|| BackendError::InvalidHandle(format!("stream {:#x}", handle.as_raw())))?;
            (e.raw, e.device, e.account.clone())
        };
        self.enter(device)?;
        if let Some(account) = account {
            account.before_work(raw.0);
        }
        Ok(raw.0)
    }

    fn stream_account(&self, stream: StreamHandle) -> Option<Arc<StreamAccount>> {
        read(&self.streams).get(&stream.as_raw()).and_then(|e| e.account.clone())
    }

    /// `cuStreamSynchronize(s)` of `stream` (resolved to `s`), ending its bracket before and
    /// settling after.
    pub(super) fn sync_raw(&self, stream: Option<StreamHandle>, s: CUstream) -> Result<(), BackendError> {
        let account = stream.and_then(|h| self.stream_account(h));
        if let Some(account) = &account {
            account.close(s);
        }
        // A live stream of the current context (the caller's contract).
        let result = result::stream::synchronize(s).map_err(BackendError::from);
        if let Some(account) = &account {
            account.settle();
        }
        result
    }
}
