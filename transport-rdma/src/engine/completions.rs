//! Completion processing: sent work requests free their slots, received SENDs are decoded
//! (immediate data, credits) and handed to reassembly, offered landings are recorded; and the
//! receive-credit glue (re-posting consumed receive slots, pure credit updates).

use super::shared::{Shared, State};
use super::{Broken, Role, CONTROL_SQ_DEPTH, MAX_LANDINGS};
use crate::credit::SendPurpose;
use crate::fabric::{Completion, Fabric, SendKind, SendWr};
use crate::rx::Segment;
use crate::wire::{Imm, LandingDesc, SegKind, LANDING_DESC_LEN};
use std::time::Instant;

impl<F: Fabric> Shared<F> {
    /// Re-posts a receive slot: a consumed data slot (`data`) or a control one.
    pub(super) fn repost(&self, st: &mut State, slot: u32, data: bool) {
        if st.broken.is_some() {
            return;
        }
        match self.fabric.post_recv(slot) {
            Ok(()) if data => st.credits.on_repost_data(),
            Ok(()) => st.credits.on_repost_ctrl(),
            Err(e) => self.fail(st, Broken::Failed(e.to_string())),
        }
    }

    /// Sends a pure credit update when enough credits are owed.
    pub(super) fn maybe_update(&self, st: &mut State) {
        if st.broken.is_none() && st.control_in_flight < CONTROL_SQ_DEPTH && st.credits.wants_update() {
            let grant = st.credits.on_send(SendPurpose::Update);
            let imm = Imm { kind: SegKind::Update, grant }.encode();
            match self.fabric.post_send(SendWr::Control { imm }) {
                Ok(()) => {
                    st.control_in_flight += 1;
                    st.stats.updates += 1;
                }
                Err(e) => self.fail(st, Broken::Failed(e.to_string())),
            }
        }
    }

    /// Processes every ready completion.
    pub(super) fn progress(&self, st: &mut State) {
        let mut done = std::mem::take(&mut st.scratch);
        done.clear();
        if let Err(e) = self.fabric.poll(&mut done) {
            self.fail(st, Broken::Failed(e.to_string()));
        }
        let any = !done.is_empty();
        for c in done.drain(..) {
            match c {
                Completion::Sent(kind) => {
                    st.last_heard = Instant::now();
                    match kind {
                        SendKind::Data(slot) => st.slots.put(slot),
                        SendKind::Control => st.control_in_flight = st.control_in_flight.saturating_sub(1),
                        SendKind::Probe => {
                            st.control_in_flight = st.control_in_flight.saturating_sub(1);
                            st.probe_in_flight = false;
                        }
                        SendKind::Read(_) => st.reads_in_flight = st.reads_in_flight.saturating_sub(1),
                        SendKind::Write(_) => st.writes_in_flight = st.writes_in_flight.saturating_sub(1),
                    }
                }
                Completion::Received { slot, len, imm } => {
                    st.last_heard = Instant::now();
                    let imm = match Imm::decode(imm, len) {
                        Ok(imm) => imm,
                        Err(e) => {
                            self.fail(st, Broken::Failed(format!("peer violated the transport protocol: {e}")));
                            continue;
                        }
                    };
                    if let Err(e) = st.credits.on_grant(imm.grant) {
                        self.fail(st, Broken::Failed(format!("peer violated flow control: {e}")));
                        continue;
                    }
                    match imm.kind {
                        SegKind::Data => {
                            st.stats.segments_received += 1;
                            if st.rx.push(Segment { slot, len }).is_err() {
                                self.fail(st, Broken::Failed("peer sent data after FIN".into()));
                            }
                        }
                        SegKind::Update => self.repost(st, slot, false),
                        SegKind::Fin => st.rx.push_fin(),
                        SegKind::Remote => {
                            st.stats.segments_received += 1;
                            if st.rx.push_remote(slot).is_err() {
                                self.fail(st, Broken::Failed("peer sent data after FIN".into()));
                            }
                        }
                        SegKind::Done => {
                            if st.remote_outstanding == 0 {
                                self.fail(st, Broken::Failed("peer violated the transport protocol: DONE without a remote bulk".into()));
                                continue;
                            }
                            st.remote_outstanding -= 1;
                            st.dones_received += 1;
                            self.repost(st, slot, false);
                        }
                        SegKind::Landing => self.on_landing(st, slot),
                    }
                }
                Completion::Failed { what, status, flushed } => {
                    let why = format!("{what} completion: {status}");
                    self.fail(st, if flushed { Broken::PeerGone(why) } else { Broken::Failed(why) });
                }
            }
        }
        st.scratch = done;
        if any {
            self.maybe_update(st);
            self.cv.notify_all();
        }
    }

    /// A landing offered by the client (worker side): recorded for the reply to its request.
    pub(super) fn on_landing(&self, st: &mut State, slot: u32) {
        // SAFETY: the slot stays out of the device's hands until it is re-posted below.
        let bytes = unsafe { std::slice::from_raw_parts(self.fabric.recv_slot(slot), LANDING_DESC_LEN) };
        let parsed = LandingDesc::parse(bytes);
        self.repost(st, slot, true);
        let violation = match parsed {
            Err(e) => Some(e.to_string()),
            Ok(_) if self.role != Role::Worker || !self.fabric.landings_agreed() => Some("landing offered without agreement".into()),
            Ok(_) if st.landings.len() >= MAX_LANDINGS => Some(format!("more than {MAX_LANDINGS} landings outstanding")),
            Ok(d) => st.landings.insert(d.request_id, d).map(|_| format!("two landings for request {}", d.request_id)),
        };
        if let Some(why) = violation {
            self.fail(st, Broken::Failed(format!("peer violated the transport protocol: {why}")));
        }
    }
}
