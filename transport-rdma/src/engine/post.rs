//! The send path of the shared state: posting a filled send slot as a SEND once a receive
//! credit allows it, taking free send slots, and the DONE that releases a peer's remote bulk.

use super::shared::{timed_out, Shared};
use super::{Broken, CONTROL_SQ_DEPTH};
use crate::credit::SendPurpose;
use crate::fabric::{Fabric, SendWr};
use crate::tx::Ready;
use crate::wire::{Imm, SegKind};
use transport_core::TransportError;

impl<F: Fabric> Shared<F> {
    /// Posts a filled send slot as one SEND, waiting for a credit.
    pub(super) fn post_data(&self, ready: Ready) -> Result<(), TransportError> {
        self.post_seg(ready, SegKind::Data)
    }

    /// Posts a filled send slot as one SEND of `kind` (data or remote descriptor).
    pub(super) fn post_seg(&self, ready: Ready, kind: SegKind) -> Result<(), TransportError> {
        let mut stalled = false;
        let st = self.lock();
        let (mut st, ()) = self.wait(st, "a receive credit from the peer", |sh, st| {
            Self::check_usable(st)?;
            if !st.credits.may_send(SendPurpose::Data) {
                if !stalled {
                    stalled = true;
                    st.stats.credit_stalls += 1;
                }
                return Ok(None);
            }
            let grant = st.credits.on_send(SendPurpose::Data);
            let imm = Imm { kind, grant }.encode();
            let wr = SendWr::Data { slot: ready.slot, len: ready.len as u32, imm };
            if let Err(e) = sh.fabric.post_send(wr) {
                st.slots.put(ready.slot);
                sh.fail(st, Broken::Failed(e.to_string()));
                return Err(st.broken.as_ref().map_or_else(|| timed_out("post"), Broken::to_error));
            }
            Ok(Some(()))
        })?;
        st.stats.data_sends += 1;
        st.stats.bytes_sent += ready.len as u64;
        Ok(())
    }

    /// Tells the peer its last remote bulk section is released (waits for a control credit).
    pub(super) fn send_done(&self) -> Result<(), TransportError> {
        let st = self.lock();
        let (mut st, ()) = self.wait(st, "a control credit for DONE", |sh, st| {
            Self::check_usable(st)?;
            if st.control_in_flight >= CONTROL_SQ_DEPTH || !st.credits.may_send(SendPurpose::Done) {
                return Ok(None);
            }
            let grant = st.credits.on_send(SendPurpose::Done);
            let imm = Imm { kind: SegKind::Done, grant }.encode();
            if let Err(e) = sh.fabric.post_send(SendWr::Control { imm }) {
                sh.fail(st, Broken::Failed(e.to_string()));
                return Err(st.broken.as_ref().map_or_else(|| timed_out("post"), Broken::to_error));
            }
            st.control_in_flight += 1;
            Ok(Some(()))
        })?;
        st.stats.remote_received += 1;
        Ok(())
    }

    pub(super) fn take_slot(&self) -> Result<u32, TransportError> {
        let st = self.lock();
        let (_guard, slot) = self.wait(st, "a free send slot", |_, st| {
            Self::check_usable(st)?;
            Ok(st.slots.take())
        })?;
        Ok(slot)
    }
}
