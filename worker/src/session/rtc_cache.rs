//! Compiled hiprtc programs, kept by content: a program compiled once for a device (a
//! hipcc fat binary's device source on its first launch, or any hiprtc program) is answered
//! from here the next time the same tenant asks for the same thing on the same kind of device.
//!
//! The key is a SHA-256 over everything a compile depends on: the backend and device
//! architecture, the worker's version and output format, and the request (name, source, headers, options, name
//! expressions), each length-prefixed. Only successful compiles are kept.
//!
//! Two tiers: memory (shared by the sessions of one process, bounded by bytes, oldest out
//! first) and, when configured, a directory with one subdirectory per tenant (the only part
//! a confined session process may write, so one tenant's sessions can never plant code that
//! another's load). Files are written whole and renamed into place; a file that does not
//! parse is ignored and replaced.

use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use proto_core::limits::{MAX_BULK_LEN, MAX_NAME_LEN, MAX_TEXT_LEN};
use sha2::{Digest, Sha256};

use crate::backend::{RtcOutput, RtcRequest};

/// Default bound of the in-memory tier.
pub const DEFAULT_RTC_CACHE_BYTES: usize = 256 << 20;
/// Most bytes one tenant's directory may hold; the oldest files go first.
pub const MAX_RTC_CACHE_DIR_BYTES: u64 = 1 << 30;
/// Largest cached entry: a module plus its log and names.
const MAX_ENTRY_BYTES: usize = MAX_BULK_LEN + 2 * MAX_TEXT_LEN;
/// Magic number of a cache file.
const FILE_MAGIC: &[u8; 8] = b"HRRTC\0\0\x01";

/// What a compile's output holds beyond the compiler's bytes, in the key so that entries of
/// a worker producing other output are not answered: the host backend's modules carry the
/// note listing their kernels and layouts (`hip_code_object::kernel_names`).
const OUTPUT_FORMAT: &str = "host-kernel-note-1";

/// A cache key.
pub type Key = [u8; 32];

/// The key of `request` compiled by `backend` for `arch`.
pub fn key(backend: &str, arch: &str, request: &RtcRequest<'_>) -> Key {
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(env!("CARGO_PKG_VERSION").as_bytes());
    field(OUTPUT_FORMAT.as_bytes());
    field(backend.as_bytes());
    field(arch.as_bytes());
    field(request.name.as_bytes());
    field(request.source.as_bytes());
    field(&(request.headers.len() as u64).to_le_bytes());
    for (name, text) in &request.headers {
        field(name.as_bytes());
        field(text.as_bytes());
    }
    field(&(request.options.len() as u64).to_le_bytes());
    for option in &request.options {
        field(option.as_bytes());
    }
    field(&(request.name_expressions.len() as u64).to_le_bytes());
    for expr in &request.name_expressions {
        field(expr.as_bytes());
    }
    h.finalize().into()
}

/// The directory of `tenant`'s entries under `root` (a hash: tenant names are not paths).
pub fn tenant_dir(root: &Path, tenant: Option<&str>) -> PathBuf {
    let digest = Sha256::digest(tenant.unwrap_or("").as_bytes());
    root.join(hex(&digest[..12]))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Default)]
struct Memory {
    entries: HashMap<Key, RtcOutput>,
    order: VecDeque<Key>,
    bytes: usize,
}

fn size_of(out: &RtcOutput) -> usize {
    out.code.len() + out.log.len() + out.lowered_names.iter().map(|n| n.len() + 1).sum::<usize>()
}

/// The cache (see the module documentation).
pub struct RtcCache {
    memory: Mutex<Memory>,
    max_bytes: usize,
}

impl std::fmt::Debug for RtcCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RtcCache").field("max_bytes", &self.max_bytes).finish()
    }
}

impl Default for RtcCache {
    fn default() -> Self {
        Self::new(DEFAULT_RTC_CACHE_BYTES)
    }
}

impl RtcCache {
    /// A cache whose memory tier holds at most `max_bytes`.
    pub fn new(max_bytes: usize) -> Self {
        Self { memory: Mutex::default(), max_bytes }
    }

    /// The entry for `key`: from memory, else from `dir` (then kept in memory too).
    pub fn get(&self, key: &Key, dir: Option<&Path>) -> Option<RtcOutput> {
        if let Some(hit) = self.lock().entries.get(key) {
            return Some(hit.clone());
        }
        let out = read_file(&dir?.join(hex(key)))?;
        self.remember(*key, out.clone());
        Some(out)
    }

    /// Keeps a successful compile, in memory and in `dir`.
    pub fn put(&self, key: &Key, out: &RtcOutput, dir: Option<&Path>) {
        if !out.success || size_of(out) > MAX_ENTRY_BYTES {
            return;
        }
        self.remember(*key, out.clone());
        if let Some(dir) = dir {
            if let Err(e) = write_file(dir, &hex(key), out) {
                tracing::debug!(dir = %dir.display(), %e, "compile cache entry not written");
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.memory.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn remember(&self, key: Key, out: RtcOutput) {
        let size = size_of(&out);
        if size > self.max_bytes {
            return;
        }
        let mut m = self.lock();
        if let Some(old) = m.entries.insert(key, out) {
            m.bytes -= size_of(&old);
            m.order.retain(|k| *k != key);
        }
        m.bytes += size;
        m.order.push_back(key);
        while m.bytes > self.max_bytes {
            let Some(oldest) = m.order.pop_front() else { break };
            if let Some(gone) = m.entries.remove(&oldest) {
                m.bytes -= size_of(&gone);
            }
        }
    }
}

fn write_file(dir: &Path, name: &str, out: &RtcOutput) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut bytes = FILE_MAGIC.to_vec();
    bytes.extend_from_slice(&(out.lowered_names.len() as u32).to_le_bytes());
    for n in &out.lowered_names {
        bytes.extend_from_slice(&(n.len() as u32).to_le_bytes());
        bytes.extend_from_slice(n.as_bytes());
    }
    bytes.extend_from_slice(&(out.log.len() as u32).to_le_bytes());
    bytes.extend_from_slice(out.log.as_bytes());
    bytes.extend_from_slice(&(out.code.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&out.code);
    trim_dir(dir, bytes.len() as u64);
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, &bytes)?;
    std::fs::rename(&tmp, dir.join(name))
}

/// Removes the oldest files until `incoming` more bytes fit [`MAX_RTC_CACHE_DIR_BYTES`].
fn trim_dir(dir: &Path, incoming: u64) {
    let Ok(list) = std::fs::read_dir(dir) else { return };
    let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = list
        .filter_map(Result::ok)
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            meta.is_file().then(|| (meta.modified().unwrap_or(std::time::UNIX_EPOCH), meta.len(), e.path()))
        })
        .collect();
    let mut total: u64 = files.iter().map(|f| f.1).sum::<u64>() + incoming;
    files.sort();
    for (_, len, path) in files {
        if total <= MAX_RTC_CACHE_DIR_BYTES {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total -= len;
        }
    }
}

/// A cache file, or `None` when it is missing, too large or malformed.
fn read_file(path: &Path) -> Option<RtcOutput> {
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_ENTRY_BYTES as u64 + 64).read_to_end(&mut bytes).ok()?;
    let mut rest = bytes.strip_prefix(FILE_MAGIC.as_slice())?;
    let mut take = |n: usize| -> Option<&[u8]> {
        let (head, tail) = (rest.get(..n)?, rest.get(n..)?);
        rest = tail;
        Some(head)
    };
    let u32_at = |b: &[u8]| u32::from_le_bytes(b.try_into().unwrap_or([0xff; 4])) as usize;
    let count = u32_at(take(4)?);
    if count > proto_core::limits::MAX_LIST_ITEMS {
        return None;
    }
    let mut lowered_names = Vec::with_capacity(count);
    for _ in 0..count {
        let len = u32_at(take(4)?);
        if len > MAX_NAME_LEN {
            return None;
        }
        lowered_names.push(String::from_utf8(take(len)?.to_vec()).ok()?);
    }
    let log_len = u32_at(take(4)?);
    let log = String::from_utf8(take(log_len)?.to_vec()).ok()?;
    let code_len = u64::from_le_bytes(take(8)?.try_into().ok()?) as usize;
    let code = take(code_len)?.to_vec();
    rest.is_empty().then_some(RtcOutput { success: true, log, code, lowered_names })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request<'a>(source: &'a str) -> RtcRequest<'a> {
        RtcRequest { name: "p", source, headers: vec![("a.h", "x")], options: vec!["-DN=1"], name_expressions: vec!["k<float>"] }
    }

    fn output(code: &[u8]) -> RtcOutput {
        RtcOutput { success: true, log: "ok\n".into(), code: code.to_vec(), lowered_names: vec!["_Z1kIfEvv".into()] }
    }

    #[test]
    fn keys_change_with_every_input() {
        let base = key("host", "host", &request("s"));
        assert_eq!(base, key("host", "host", &request("s")));
        assert_ne!(base, key("cuda", "host", &request("s")));
        assert_ne!(base, key("host", "sm_90", &request("s")));
        assert_ne!(base, key("host", "host", &request("t")));
        let mut r = request("s");
        r.headers = vec![("a.h", "y")];
        assert_ne!(base, key("host", "host", &r));
        let mut r = request("s");
        r.options = vec!["-DN=2"];
        assert_ne!(base, key("host", "host", &r));
        // Length prefixes: moving bytes between fields changes the key.
        let mut r = request("s");
        r.headers = vec![("a.hx", "")];
        assert_ne!(base, key("host", "host", &r));
    }

    #[test]
    fn memory_tier_keeps_the_newest_within_its_bound() {
        let cache = RtcCache::new(2 * size_of(&output(&[0; 100])));
        let keys: Vec<Key> = (0..3u8).map(|i| [i; 32]).collect();
        for k in &keys {
            cache.put(k, &output(&[k[0]; 100]), None);
        }
        assert!(cache.get(&keys[0], None).is_none(), "the oldest went");
        assert_eq!(cache.get(&keys[2], None).unwrap().code, [2; 100]);
        let mut failed = output(b"x");
        failed.success = false;
        cache.put(&[9; 32], &failed, None);
        assert!(cache.get(&[9; 32], None).is_none(), "failed compiles are not kept");
    }

    #[test]
    fn directory_tier_survives_the_process_and_refuses_damage() {
        let root = tempfile::tempdir().unwrap();
        let dir = tenant_dir(root.path(), Some("team-a"));
        assert_ne!(dir, tenant_dir(root.path(), Some("team-b")));
        let k = [7; 32];
        RtcCache::default().put(&k, &output(b"module"), Some(&dir));
        let fresh = RtcCache::default();
        assert_eq!(fresh.get(&k, Some(&dir)), Some(output(b"module")));
        // Every truncation of the file is refused, never a panic.
        let file = dir.join(hex(&k));
        let bytes = std::fs::read(&file).unwrap();
        for cut in 0..bytes.len() {
            std::fs::write(&file, &bytes[..cut]).unwrap();
            assert!(RtcCache::default().get(&k, Some(&dir)).is_none(), "cut at {cut}");
        }
        std::fs::write(&file, [&bytes[..], b"junk"].concat()).unwrap();
        assert!(RtcCache::default().get(&k, Some(&dir)).is_none());
    }
}
