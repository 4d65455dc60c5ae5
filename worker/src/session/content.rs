//! The worker's content store (`features::CONTENT_STORE`, `proto_core::content`): large
//! uploads kept per tenant, so a client that uploads the same bytes again (the same weights
//! on its next run, another process of the same tenant) names them by hash instead of
//! sending them.
//!
//! Kept in worker memory, shared by the sessions of this worker process, keyed by the
//! authenticated tenant: a tenant never sees, or learns the presence of, another's content
//! (a lookup names the tenant, and a miss looks the same whoever holds the bytes). A worker
//! without authentication has no tenants and keeps nothing. Bounded per tenant and in all;
//! the least recently used entries make room.

use proto_core::content::{content_hash, CONTENT_HASH_LEN};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Bytes one tenant may keep (its least recently used content makes room).
pub const MAX_CONTENT_BYTES_PER_TENANT: u64 = 4 << 30;
/// Bytes all tenants together may keep.
pub const MAX_CONTENT_BYTES: u64 = 16 << 30;

type Hash = [u8; CONTENT_HASH_LEN];

struct Entry {
    bytes: Arc<[u8]>,
    last_used: u64,
}

#[derive(Default)]
struct Inner {
    /// Per tenant: content by hash.
    tenants: HashMap<String, HashMap<Hash, Entry>>,
    /// Bytes kept per tenant and in all.
    tenant_bytes: HashMap<String, u64>,
    total: u64,
    clock: u64,
}

/// Content kept per tenant.
pub struct ContentStore {
    per_tenant: u64,
    total: u64,
    inner: Mutex<Inner>,
}

impl Default for ContentStore {
    fn default() -> Self {
        Self::with_bounds(MAX_CONTENT_BYTES_PER_TENANT, MAX_CONTENT_BYTES)
    }
}

impl std::fmt::Debug for ContentStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        f.debug_struct("ContentStore").field("bytes", &inner.total).field("tenants", &inner.tenants.len()).finish()
    }
}

impl ContentStore {
    /// A store keeping at most `per_tenant` bytes for each tenant and `total` in all.
    pub fn with_bounds(per_tenant: u64, total: u64) -> Self {
        Self { per_tenant, total, inner: Mutex::default() }
    }

    /// `tenant`'s content named `hash`, if it is kept.
    pub fn get(&self, tenant: &str, hash: &[u8]) -> Option<Arc<[u8]>> {
        let hash: Hash = hash.try_into().ok()?;
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.clock += 1;
        let now = inner.clock;
        let entry = inner.tenants.get_mut(tenant)?.get_mut(&hash)?;
        entry.last_used = now;
        Some(entry.bytes.clone())
    }

    /// Keeps `bytes` as `tenant`'s content if they hash to `hash` and fit the bounds (older
    /// content of that tenant, then of anyone, makes room). Whether they are kept.
    pub fn put(&self, tenant: &str, hash: &[u8], bytes: Vec<u8>) -> bool {
        let len = bytes.len() as u64;
        if hash.len() != CONTENT_HASH_LEN || len > self.per_tenant || len > self.total || content_hash(&bytes)[..] != *hash {
            return false;
        }
        let hash: Hash = hash.try_into().expect("length checked");
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if inner.tenants.get(tenant).is_some_and(|m| m.contains_key(&hash)) {
            return true;
        }
        while inner.tenant_bytes.get(tenant).copied().unwrap_or(0) + len > self.per_tenant {
            evict_oldest(&mut inner, Some(tenant));
        }
        while inner.total + len > self.total {
            evict_oldest(&mut inner, None);
        }
        inner.clock += 1;
        let now = inner.clock;
        inner.tenants.entry(tenant.to_string()).or_default().insert(hash, Entry { bytes: bytes.into(), last_used: now });
        *inner.tenant_bytes.entry(tenant.to_string()).or_default() += len;
        inner.total += len;
        true
    }

    /// Bytes kept for `tenant`.
    pub fn tenant_bytes(&self, tenant: &str) -> u64 {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).tenant_bytes.get(tenant).copied().unwrap_or(0)
    }
}

/// Drops the least recently used entry of `tenant` (or of anyone).
fn evict_oldest(inner: &mut Inner, tenant: Option<&str>) {
    let oldest = inner
        .tenants
        .iter()
        .filter(|(t, _)| tenant.is_none_or(|want| t.as_str() == want))
        .flat_map(|(t, m)| m.iter().map(move |(h, e)| (e.last_used, t.clone(), *h)))
        .min();
    let Some((_, t, h)) = oldest else { return };
    if let Some(entry) = inner.tenants.get_mut(&t).and_then(|m| m.remove(&h)) {
        let len = entry.bytes.len() as u64;
        inner.total -= len;
        if let Some(b) = inner.tenant_bytes.get_mut(&t) {
            *b -= len;
        }
    }
    if inner.tenants.get(&t).is_some_and(HashMap::is_empty) {
        inner.tenants.remove(&t);
        inner.tenant_bytes.remove(&t);
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn content(seed: u8, len: usize) -> (Vec<u8>, Hash) {
        let bytes: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect();
        let hash = content_hash(&bytes);
        (bytes, hash)
    }

    #[test]
    fn content_is_never_shared_across_tenants() {
        let store = ContentStore::default();
        let (bytes, hash) = content(1, 4096);
        assert!(store.put("alice", &hash, bytes.clone()));
        assert_eq!(store.get("alice", &hash).as_deref(), Some(&bytes[..]));
        assert!(store.get("bob", &hash).is_none(), "bob must not see alice's content");
        // Bob uploading the same bytes keeps his own copy; alice's is untouched.
        assert!(store.put("bob", &hash, bytes.clone()));
        assert_eq!(store.tenant_bytes("alice"), 4096);
        assert_eq!(store.tenant_bytes("bob"), 4096);
    }

    #[test]
    fn bytes_that_do_not_match_their_hash_are_not_kept() {
        let store = ContentStore::default();
        let (bytes, _) = content(1, 100);
        let (_, other) = content(2, 100);
        assert!(!store.put("alice", &other, bytes));
        assert!(store.get("alice", &other).is_none());
        assert!(!store.put("alice", &[0u8; 5], vec![1, 2, 3]));
    }

    #[test]
    fn least_recently_used_content_makes_room() {
        let store = ContentStore::with_bounds(3000, 5000);
        let (a, ha) = content(1, 1000);
        let (b, hb) = content(2, 1000);
        let (c, hc) = content(3, 1000);
        let (d, hd) = content(4, 1000);
        for (bytes, h) in [(a, ha), (b, hb), (c, hc)] {
            assert!(store.put("alice", &h, bytes));
        }
        // `a` used again: `b` is now the oldest.
        assert!(store.get("alice", &ha).is_some());
        assert!(store.put("alice", &hd, d));
        assert!(store.get("alice", &hb).is_none());
        assert!(store.get("alice", &ha).is_some() && store.get("alice", &hc).is_some() && store.get("alice", &hd).is_some());
        assert_eq!(store.tenant_bytes("alice"), 3000);
        // The total bound: bob's content pushes alice's oldest out.
        let (e, he) = content(5, 2500);
        assert!(store.put("bob", &he, e));
        assert!(store.tenant_bytes("alice") + store.tenant_bytes("bob") <= 5000);
        assert!(store.get("bob", &he).is_some());
        // Larger than a tenant may keep: refused, nothing evicted for it.
        let (f, hf) = content(6, 3001);
        let before = store.tenant_bytes("alice");
        assert!(!store.put("alice", &hf, f));
        assert_eq!(store.tenant_bytes("alice"), before);
    }
}
