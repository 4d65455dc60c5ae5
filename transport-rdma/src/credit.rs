//! Receive-credit flow control, as a state machine without I/O.
//!
//! Each side posts `depth + CONTROL_CREDITS` receives before connecting and announces `depth`
//! in the private data. Receive work requests are consumed in order by whatever SEND comes
//! next, so credits are counts, in two pools:
//!
//! - **data credits** (`depth` of them): a data SEND takes one; its receive slot stays
//!   occupied until the application has read the bytes, then it is re-posted and the credit
//!   returned;
//! - **control credits** ([`CONTROL_CREDITS`]): a pure credit update or FIN takes one; the
//!   receiver re-posts such a slot as soon as it sees the completion (no application
//!   involvement) and returns the credit.
//!
//! Every SEND's immediate data returns all credits of both pools owed so far. Since a sender
//! never has more SENDs outstanding than data plus control credits, a SEND can never find
//! the peer's receive queue empty: no RNR NAK, no retry storm, and the receive ring (pinned
//! memory) is the only buffer, fixed in size.
//!
//! Why two pools: if credit updates spent data credits, a peer whose ring is full of bytes
//! its application has not read yet (it is busy *sending*) could never be told that its own
//! SENDs were consumed, and both sides would wait forever; TCP avoids this because ACKs and
//! window updates need no buffer. Control credits play that role. They cannot run out for
//! good either: the last control credit may only be spent on a message that returns control
//! credits (`owed_ctrl > 0`), and a side owing [`CTRL_UPDATE_THRESHOLD`] or more sends an
//! update. The threshold of 2 keeps updates from answering updates forever (one update makes
//! its receiver owe exactly one control credit).

/// Control receives each side posts beyond its data ring (credits for updates and FIN).
pub const CONTROL_CREDITS: u32 = 8;
/// Owed control credits from which a pure update is sent.
pub const CTRL_UPDATE_THRESHOLD: u32 = 2;

/// One side's view of the credits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credits {
    /// Data SENDs we may still post.
    data: u32,
    /// Control SENDs we may still post.
    ctrl: u32,
    /// The peer's data ring depth (a grant above it is a protocol error).
    peer_depth: u32,
    /// Data slots we re-posted and have not announced.
    owed_data: u32,
    /// Control slots we re-posted and have not announced.
    owed_ctrl: u32,
    /// Our data ring depth.
    depth: u32,
}

/// What a SEND is for, as far as credits are concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendPurpose {
    /// Stream bytes (a data credit).
    Data,
    /// Credits only (a control credit).
    Update,
    /// The last SEND of the connection (a control credit).
    Fin,
    /// A remote bulk section released (a control credit; never the last one unless it
    /// returns control credits, like an update).
    Done,
}

/// A grant the peer's rings cannot back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("peer granted {grant} {pool} credits with {have} held, above its {depth} slots")]
pub struct CreditOverflow {
    /// Which pool.
    pub pool: &'static str,
    /// The grant.
    pub grant: u32,
    /// Credits held before it.
    pub have: u32,
    /// The pool's size.
    pub depth: u32,
}

/// Credits returned by one SEND.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Grant {
    /// Data credits.
    pub data: u16,
    /// Control credits.
    pub ctrl: u16,
}

impl Credits {
    /// Credits at connection start: the peer's data ring holds `peer_depth` slots, ours
    /// `depth`; both sides posted [`CONTROL_CREDITS`] more.
    pub fn new(peer_depth: u32, depth: u32) -> Self {
        Self { data: peer_depth, ctrl: CONTROL_CREDITS, peer_depth, owed_data: 0, owed_ctrl: 0, depth }
    }

    /// Data credits held.
    pub fn available(&self) -> u32 {
        self.data
    }

    /// Control credits held.
    pub fn control_available(&self) -> u32 {
        self.ctrl
    }

    /// Re-posted data slots not yet announced.
    pub fn owed(&self) -> u32 {
        self.owed_data
    }

    /// Owed data credits from which a pure update is sent: a quarter of the ring.
    pub fn update_threshold(&self) -> u32 {
        (self.depth / 4).max(1)
    }

    /// Whether a SEND for `purpose` may be posted now.
    pub fn may_send(&self, purpose: SendPurpose) -> bool {
        match purpose {
            SendPurpose::Data => self.data >= 1,
            SendPurpose::Update => (self.owed_data > 0 || self.owed_ctrl > 0) && (self.ctrl >= 2 || (self.ctrl == 1 && self.owed_ctrl > 0)),
            SendPurpose::Fin => self.ctrl >= 1,
            SendPurpose::Done => self.ctrl >= 2 || (self.ctrl == 1 && self.owed_ctrl > 0),
        }
    }

    /// Records a SEND for `purpose` being posted; returns the grant its immediate data must
    /// carry. Call only after [`may_send`](Self::may_send) said yes.
    pub fn on_send(&mut self, purpose: SendPurpose) -> Grant {
        let pool = if purpose == SendPurpose::Data { &mut self.data } else { &mut self.ctrl };
        debug_assert!(*pool > 0, "SEND without a credit");
        *pool = pool.saturating_sub(1);
        let grant = Grant { data: self.owed_data.min(u16::MAX as u32) as u16, ctrl: self.owed_ctrl.min(u16::MAX as u32) as u16 };
        self.owed_data -= u32::from(grant.data);
        self.owed_ctrl -= u32::from(grant.ctrl);
        grant
    }

    /// Records a grant received from the peer.
    pub fn on_grant(&mut self, grant: Grant) -> Result<(), CreditOverflow> {
        let (data, ctrl) = (u32::from(grant.data), u32::from(grant.ctrl));
        if self.data + data > self.peer_depth {
            return Err(CreditOverflow { pool: "data", grant: data, have: self.data, depth: self.peer_depth });
        }
        if self.ctrl + ctrl > CONTROL_CREDITS {
            return Err(CreditOverflow { pool: "control", grant: ctrl, have: self.ctrl, depth: CONTROL_CREDITS });
        }
        self.data += data;
        self.ctrl += ctrl;
        Ok(())
    }

    /// Records a consumed data slot re-posted.
    pub fn on_repost_data(&mut self) {
        self.owed_data = (self.owed_data + 1).min(self.depth);
    }

    /// Records a control slot re-posted.
    pub fn on_repost_ctrl(&mut self) {
        self.owed_ctrl = (self.owed_ctrl + 1).min(CONTROL_CREDITS);
    }

    /// Whether a pure credit update should go out now (nothing else is about to carry it).
    pub fn wants_update(&self) -> bool {
        (self.owed_data >= self.update_threshold() || self.owed_ctrl >= CTRL_UPDATE_THRESHOLD) && self.may_send(SendPurpose::Update)
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use std::collections::VecDeque;

    #[test]
    fn data_and_control_pools_are_separate() {
        let mut c = Credits::new(4, 4);
        for _ in 0..4 {
            assert!(c.may_send(SendPurpose::Data));
            assert_eq!(c.on_send(SendPurpose::Data), Grant::default());
        }
        assert!(!c.may_send(SendPurpose::Data));
        assert!(!c.may_send(SendPurpose::Update), "nothing to announce");
        assert!(c.may_send(SendPurpose::Fin));
        c.on_repost_data();
        assert!(c.wants_update(), "a quarter of a 4-slot ring is owed");
        assert_eq!(c.on_send(SendPurpose::Update), Grant { data: 1, ctrl: 0 });
        assert_eq!(c.control_available(), CONTROL_CREDITS - 1);
        assert_eq!(c.available(), 0);
    }

    #[test]
    fn last_control_credit_needs_a_control_grant() {
        let mut c = Credits::new(4, 64);
        for _ in 0..CONTROL_CREDITS - 1 {
            c.on_repost_data();
            assert!(c.may_send(SendPurpose::Update));
            c.on_send(SendPurpose::Update);
        }
        assert_eq!(c.control_available(), 1);
        c.on_repost_data();
        assert!(!c.may_send(SendPurpose::Update), "the last control credit is reserved");
        c.on_repost_ctrl();
        assert!(c.may_send(SendPurpose::Update));
        assert!(!c.wants_update(), "one owed control credit and one data credit are below the thresholds");
        c.on_repost_ctrl();
        assert!(c.wants_update());
        assert_eq!(c.on_send(SendPurpose::Update), Grant { data: 1, ctrl: 2 });
    }

    #[test]
    fn grant_above_ring_is_refused() {
        let mut c = Credits::new(4, 4);
        assert!(c.on_grant(Grant { data: 1, ctrl: 0 }).is_err());
        assert!(c.on_grant(Grant { data: 0, ctrl: 1 }).is_err());
        c.on_send(SendPurpose::Data);
        assert_eq!(c.on_grant(Grant { data: 1, ctrl: 0 }), Ok(()));
        assert_eq!(c.on_grant(Grant { data: 1, ctrl: 0 }), Err(CreditOverflow { pool: "data", grant: 1, have: 4, depth: 4 }));
    }

    /// Two endpoints exchanging SENDs through rings of `depth` data slots (+ control slots),
    /// with applications that read only at random moments and, for long stretches, not at
    /// all while they send: no SEND ever finds the peer's receive queue empty (an RNR), and
    /// everything wanted is eventually sent and read (no deadlock).
    #[test]
    fn simulated_pair_never_overruns_and_never_deadlocks() {
        #[derive(Clone, Copy, PartialEq)]
        enum Msg {
            Data,
            Update,
        }
        struct Side {
            c: Credits,
            posted: u32,
            inbox: VecDeque<(Msg, Grant)>,
            to_send: u32,
            unread: u32,
            read: u32,
        }
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rand = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for depth in [1u32, 2, 4, 5, 8, 16] {
            let total = 400;
            let mk = || Side {
                c: Credits::new(depth, depth),
                posted: depth + CONTROL_CREDITS,
                inbox: VecDeque::new(),
                to_send: total,
                unread: 0,
                read: 0,
            };
            let mut s = [mk(), mk()];
            let mut steps = 0u64;
            while s[0].read < total || s[1].read < total {
                steps += 1;
                assert!(steps < 2_000_000, "deadlock with depth {depth}: {} / {} read", s[0].read, s[1].read);
                let i = (rand() % 2) as usize;
                let j = 1 - i;
                // Side 0 (a client) reads only after it sent everything; side 1 (the worker's
                // session loop) reads whenever it runs.
                let reads = s[i].to_send == 0 || (i == 1 && rand() % 8 == 0);
                match rand() % 4 {
                    0 => {
                        // the NIC delivers; the engine (leader) handles control at once
                        if let Some((m, g)) = s[i].inbox.pop_front() {
                            assert!(s[i].posted > 0, "RNR: SEND arrived with no posted receive (depth {depth})");
                            s[i].posted -= 1;
                            s[i].c.on_grant(g).unwrap();
                            match m {
                                Msg::Data => s[i].unread += 1,
                                Msg::Update => {
                                    s[i].posted += 1;
                                    s[i].c.on_repost_ctrl();
                                }
                            }
                        }
                    }
                    1 => {
                        if reads && s[i].unread > 0 {
                            s[i].unread -= 1;
                            s[i].read += 1;
                            s[i].posted += 1;
                            s[i].c.on_repost_data();
                        }
                    }
                    2 => {
                        if s[i].to_send > 0 && s[i].c.may_send(SendPurpose::Data) {
                            let g = s[i].c.on_send(SendPurpose::Data);
                            s[j].inbox.push_back((Msg::Data, g));
                            s[i].to_send -= 1;
                        }
                    }
                    _ => {
                        if s[i].c.wants_update() {
                            let g = s[i].c.on_send(SendPurpose::Update);
                            s[j].inbox.push_back((Msg::Update, g));
                        }
                    }
                }
            }
        }
    }
}
