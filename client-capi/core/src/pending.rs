//! The replies and landings a session still expects, by request id.
//!
//! Every waiting call inserts one entry and removes it when its reply comes, so this sits on
//! the round-trip path. Ids rise and the worker answers a connection's requests in order, so
//! entries are kept sorted in a ring: a new id goes at the back, the answered one is almost
//! always the front. No hashing, no tree rebalancing; an out-of-order id (a reply put back
//! after a broken read, replies to a batch in any order) is found by binary search.

use std::collections::VecDeque;

/// Request id → `T`, sorted by id.
#[derive(Debug, Clone)]
pub(crate) struct PendingTable<T> {
    entries: VecDeque<(u64, T)>,
}

impl<T> Default for PendingTable<T> {
    fn default() -> Self {
        Self { entries: VecDeque::new() }
    }
}

impl<T> PendingTable<T> {
    fn position(&self, id: u64) -> Result<usize, usize> {
        self.entries.binary_search_by_key(&id, |(key, _)| *key)
    }

    /// Adds (or replaces) `id`'s entry.
    pub(crate) fn insert(&mut self, id: u64, value: T) {
        if self.entries.back().is_none_or(|(last, _)| *last < id) {
            self.entries.push_back((id, value));
            return;
        }
        match self.position(id) {
            Ok(i) => self.entries[i].1 = value,
            Err(i) => self.entries.insert(i, (id, value)),
        }
    }

    /// Takes `id`'s entry out.
    pub(crate) fn remove(&mut self, id: u64) -> Option<T> {
        if self.entries.front().is_some_and(|(first, _)| *first == id) {
            return self.entries.pop_front().map(|(_, value)| value);
        }
        let i = self.position(id).ok()?;
        self.entries.remove(i).map(|(_, value)| value)
    }

    /// Whether `id` has an entry.
    pub(crate) fn contains_key(&self, id: u64) -> bool {
        self.position(id).is_ok()
    }

    /// The lowest id with an entry.
    pub(crate) fn first_id(&self) -> Option<u64> {
        self.entries.front().map(|(id, _)| *id)
    }

    /// The entries, lowest id first.
    pub(crate) fn values(&self) -> impl Iterator<Item = &T> {
        self.entries.iter().map(|(_, value)| value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn in_order_use_and_out_of_order_ids_agree_with_a_map() {
        // A scripted mix: ids submitted in order, answered mostly in order, some put back,
        // some answered out of order; checked against a BTreeMap after every step.
        let mut table = PendingTable::default();
        let mut oracle = BTreeMap::new();
        let check = |table: &PendingTable<u64>, oracle: &BTreeMap<u64, u64>| {
            assert_eq!(table.first_id(), oracle.keys().next().copied());
            assert_eq!(table.values().copied().collect::<Vec<_>>(), oracle.values().copied().collect::<Vec<_>>());
        };
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut next_id = 1u64;
        for _ in 0..5000 {
            match next() % 6 {
                0..=2 => {
                    table.insert(next_id, next_id * 10);
                    oracle.insert(next_id, next_id * 10);
                    next_id += 1;
                }
                3 => {
                    let first = oracle.keys().next().copied();
                    if let Some(id) = first {
                        assert_eq!(table.remove(id), oracle.remove(&id));
                    }
                }
                4 => {
                    let id = next() % (next_id + 2);
                    assert_eq!(table.contains_key(id), oracle.contains_key(&id));
                    assert_eq!(table.remove(id), oracle.remove(&id));
                }
                _ => {
                    // Put back an id below the newest (a reply whose bulk read broke).
                    let id = next() % next_id.max(1);
                    table.insert(id, 7);
                    oracle.insert(id, 7);
                }
            }
            check(&table, &oracle);
        }
    }
}
