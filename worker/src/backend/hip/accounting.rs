//! Device time of accounted streams on HIP ([`crate::accounting`]), as on the cuda backend
//! (`backend/cuda/accounting.rs`), measured in brackets: an event
//! recorded before the first operation of a batch and one after its last, their elapsed
//! time added to the stream's account once both are reached. A batch ends when the backend
//! waits for the stream (a synchronize, a blocking copy), when the client records an event on
//! it, or after [`BRACKET_OPS`]
//! operations; so the launch path pays one uncontended lock and a counter, and two event
//! records per batch, not per launch. What a bracket counts is the stream's time from its
//! batch's first operation to its last: idle gaps inside a batch (a client submitting more
//! slowly than the GPU runs its work, without synchronizing) count too.

use super::api::{Event, HipApi, Stream};
use super::{lock, HipBackend, Raw};
use crate::accounting::DeviceTime;
use crate::backend::{BackendError, StreamHandle};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// Operations in one bracket at most (a stream never synchronized still gets its time).
pub const BRACKET_OPS: u32 = 256;
/// Brackets waiting for their events; past it the open bracket grows instead.
pub const MAX_PENDING_BRACKETS: usize = 32;

/// The brackets of one stream.
pub(super) struct StreamAccount {
    api: Arc<HipApi>,
    device_time: Arc<DeviceTime>,
    brackets: Mutex<Brackets>,
}

#[derive(Default)]
struct Brackets {
    /// The open bracket's start event and how many operations it holds.
    open: Option<(Raw<Event>, u32)>,
    /// Closed brackets (start, end), oldest first.
    closed: VecDeque<(Raw<Event>, Raw<Event>)>,
    /// Events to reuse.
    spare: Vec<Raw<Event>>,
}

impl Brackets {
    fn event(&mut self, api: &HipApi) -> Result<Raw<Event>, BackendError> {
        if let Some(event) = self.spare.pop() {
            return Ok(event);
        }
        // The stream's device is current (the caller entered it); flags 0: a timing event.
        Ok(Raw(api.event_create_with_flags(0)?))
    }

    /// Records the end of the open bracket on `s`.
    fn close(&mut self, api: &HipApi, s: Stream) {
        let Some((start, _)) = self.open.take() else { return };
        match self.event(api) {
            Ok(end) => {
                if api.event_record(end.0, s).is_ok() {
                    self.closed.push_back((start, end));
                    return;
                }
                self.spare.extend([start, end]);
            }
            Err(_) => self.spare.push(start),
        }
    }

    /// Adds the closed brackets whose end was reached to `account`, oldest first.
    fn settle(&mut self, api: &HipApi, account: &DeviceTime) {
        while let Some(&(start, end)) = self.closed.front() {
            // Live events, both recorded.
            match api.event_query(end.0) {
                Ok(false) => return,
                Ok(true) => {
                    // Both events recorded and completed.
                    if let Ok(ms) = api.event_elapsed_ms(start.0, end.0) {
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
    pub(super) fn new(api: Arc<HipApi>, device_time: Arc<DeviceTime>) -> Self {
        Self { api, device_time, brackets: Mutex::default() }
    }

    /// Before an operation is queued on `s` (its device current): opens a bracket, or ends a
    /// full one and opens the next.
    pub(super) fn before_work(&self, s: Stream) {
        self.device_time.pace_queued_op();
        let mut b = lock(&self.brackets);
        if b.open.is_some_and(|(_, ops)| ops >= BRACKET_OPS) && b.closed.len() < MAX_PENDING_BRACKETS {
            b.close(&self.api, s);
            b.settle(&self.api, &self.device_time);
        }
        if b.open.is_none() {
            let Ok(start) = b.event(&self.api) else { return };
            // SAFETY: live event and stream of the current device.
            if self.api.event_record(start.0, s).is_err() {
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
    pub(super) fn close(&self, s: Stream) {
        lock(&self.brackets).close(&self.api, s);
    }

    /// After the backend waited for `s`: adds what the finished brackets measured.
    pub(super) fn settle(&self) {
        let mut b = lock(&self.brackets);
        b.settle(&self.api, &self.device_time);
    }

    /// Destroys the events (the stream was synchronized and destroyed; device current).
    pub(super) fn release(&self) {
        let mut b = lock(&self.brackets);
        b.settle(&self.api, &self.device_time);
        let Brackets { open, closed, spare } = std::mem::take(&mut *b);
        let events = open.map(|(start, _)| start).into_iter().chain(closed.into_iter().flat_map(|(s, e)| [s, e])).chain(spare);
        for event in events {
            // Ours, no longer recorded into a live stream's pending work.
            let _ = self.api.event_destroy(event.0);
        }
    }
}

impl HipBackend {
    /// The stream an operation is queued on (see [`HipBackend::stream_and_device`]), its
    /// bracket opened when the stream is accounted.
    pub(super) fn work_stream(
        &self,
        stream: Option<StreamHandle>,
        dev: crate::backend::DeviceIndex,
    ) -> Result<(Stream, crate::backend::DeviceIndex), BackendError> {
        let Some(handle) = stream else { return self.stream_and_device(None, dev) };
        let (raw, device, account) = {
            let streams = lock(&self.streams);
            let e = streams.get(&handle.as_raw()).ok_or_else(|| BackendError::InvalidHandle(format!("stream {:#x}", handle.as_raw())))?;
            (e.raw, e.device, e.account.clone())
        };
        self.enter(device)?;
        if let Some(account) = account {
            account.before_work(raw.0);
        }
        Ok((raw.0, device))
    }

    /// The account of the stream whose raw handle is `s` (the null stream has none).
    pub(super) fn account_of_raw(&self, s: Stream) -> Option<Arc<StreamAccount>> {
        if s.is_null() {
            return None;
        }
        lock(&self.streams).values().find(|e| e.raw.0 == s).and_then(|e| e.account.clone())
    }
}
