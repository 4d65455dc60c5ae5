//! The application's stream callbacks a session's worker may ask for (`hipStreamAddCallback`,
//! `hipLaunchHostFunc`, graph host nodes), by the token the worker names them with, and the
//! state of the session's callback channel. Tokens are the session's own: a worker can only
//! name callbacks queued on it, never another worker's of the same device list.
//!
//! This crate only keeps them, whatever they are (`C`: the layer above's callback, the
//! application's function and its arguments); the driver's owner runs them on its callback
//! thread.

use crate::error::CallError;
use std::collections::BTreeMap;

/// The session's callback channel: a second connection, opened on the first callback.
#[derive(Debug, Clone, Default)]
pub enum CallbackChannel {
    /// Not opened yet.
    #[default]
    Unopened,
    /// Open, its thread serving.
    Open,
    /// It could not be opened, or it ended: every later callback fails with this.
    Failed(CallError),
}

/// The session's callbacks by token: those queued once (run and forgotten) and those of graph
/// host nodes (run at every launch; kept for the session's life, since an executable graph
/// may outlive its graph).
#[derive(Debug)]
pub struct CallbackBook<C> {
    next_token: u64,
    once: BTreeMap<u64, C>,
    persistent: BTreeMap<u64, C>,
}

impl<C> Default for CallbackBook<C> {
    fn default() -> Self {
        Self { next_token: 1, once: BTreeMap::new(), persistent: BTreeMap::new() }
    }
}

impl<C: Clone> CallbackBook<C> {
    fn token(&mut self) -> u64 {
        let token = self.next_token;
        self.next_token += 1;
        token
    }

    /// Keeps `callback` to run once, when the worker names the returned token.
    pub fn register_once(&mut self, callback: C) -> u64 {
        let token = self.token();
        self.once.insert(token, callback);
        token
    }

    /// Forgets a callback registered once that the worker never got (its request failed).
    pub fn withdraw(&mut self, token: u64) {
        self.once.remove(&token);
    }

    /// Keeps `callback` to run each time the worker names the returned token.
    pub fn register_persistent(&mut self, callback: C) -> u64 {
        let token = self.token();
        self.persistent.insert(token, callback);
        token
    }

    /// The persistent callback `token` names (`hipGraphHostNodeGetParams`).
    pub fn persistent(&self, token: u64) -> Option<&C> {
        self.persistent.get(&token)
    }

    /// The callback the worker asks to run: a once-only one (forgotten now), else a
    /// persistent one; `None` for a token the session never issued.
    pub fn take_to_run(&mut self, token: u64) -> Option<C> {
        self.once.remove(&token).or_else(|| self.persistent.get(&token).cloned())
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn a_once_callback_runs_once_a_persistent_one_every_time_and_unknown_tokens_nothing() {
        let mut book = CallbackBook::default();
        let once = book.register_once("once");
        let kept = book.register_persistent("kept");
        let withdrawn = book.register_once("withdrawn");
        assert!(once != kept && kept != withdrawn && once != withdrawn, "tokens are distinct");
        book.withdraw(withdrawn);
        assert_eq!(book.take_to_run(once), Some("once"));
        assert_eq!(book.take_to_run(once), None, "ran once");
        assert_eq!(book.take_to_run(withdrawn), None);
        assert_eq!(book.take_to_run(999), None);
        for _ in 0..2 {
            assert_eq!(book.take_to_run(kept), Some("kept"));
        }
        assert_eq!(book.persistent(kept), Some(&"kept"));
        assert_eq!(book.persistent(once), None);
    }
}
