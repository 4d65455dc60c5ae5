//! Which devices of the device list the application sees: `ROCR_VISIBLE_DEVICES`, then
//! `HIP_VISIBLE_DEVICES` (or `CUDA_VISIBLE_DEVICES` when that is unset or empty), applied as
//! ROCm 7 applies them in the application's process (docs/CLIENT.md, "Visible devices").
//!
//! Each variable is a comma-separated list of indices into the devices left by the one
//! before it, or of device UUIDs (`GPU-` and the start of the UUID: AMD's `GPU-` and 16
//! characters, NVIDIA's `GPU-` and the dashed hex form); the list's order is the application's
//! numbering. As clr reads it: an entry that is not a plain decimal index of an existing
//! device, nor a UUID one has, ends the list (what follows is ignored), a device given twice
//! counts once. An empty `HIP_VISIBLE_DEVICES` or
//! `CUDA_VISIBLE_DEVICES` selects nothing (every device stays); `ROCR_VISIBLE_DEVICES` set
//! but empty hides every device, as ROCr does.

/// The variables that choose the visible devices.
pub const ROCR_VISIBLE_DEVICES: &str = "ROCR_VISIBLE_DEVICES";
pub const HIP_VISIBLE_DEVICES: &str = "HIP_VISIBLE_DEVICES";
pub const CUDA_VISIBLE_DEVICES: &str = "CUDA_VISIBLE_DEVICES";

/// The visibility variables of the process, read once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Visibility {
    /// `ROCR_VISIBLE_DEVICES` when set (even empty).
    rocr: Option<String>,
    /// `HIP_VISIBLE_DEVICES` when set and not empty, else `CUDA_VISIBLE_DEVICES` when so.
    hip: Option<String>,
}

impl Visibility {
    /// From the process's environment.
    pub fn from_env() -> Self {
        let var = |name| std::env::var(name).ok();
        Self::from_values(var(ROCR_VISIBLE_DEVICES), var(HIP_VISIBLE_DEVICES), var(CUDA_VISIBLE_DEVICES))
    }

    /// From the variables' values (`None`: unset).
    pub fn from_values(rocr: Option<String>, hip: Option<String>, cuda: Option<String>) -> Self {
        let hip = hip.filter(|v| !v.is_empty()).or_else(|| cuda.filter(|v| !v.is_empty()));
        Self { rocr, hip }
    }

    /// Whether any variable restricts or reorders the devices.
    pub fn is_set(&self) -> bool {
        self.rocr.is_some() || self.hip.is_some()
    }

    /// Whether an entry names a device by UUID (the caller then learns every device's).
    pub fn names_uuids(&self) -> bool {
        [&self.rocr, &self.hip].into_iter().flatten().any(|spec| spec.contains(UUID_PREFIX))
    }

    /// The devices the application sees, of a device list of `total`: entry `i` is the list
    /// index of the application's device `i`. `uuids[d]` is list device `d`'s UUID (may be
    /// empty when [`Self::names_uuids`] is false: a UUID entry then matches nothing).
    pub fn select(&self, total: u32, uuids: &[[u8; 16]]) -> Vec<u32> {
        let mut devices: Vec<u32> = (0..total).collect();
        if let Some(spec) = &self.rocr {
            devices = select_from(ROCR_VISIBLE_DEVICES, spec, &devices, uuids);
        }
        if let Some(spec) = &self.hip {
            devices = select_from(HIP_VISIBLE_DEVICES, spec, &devices, uuids);
        }
        devices
    }
}

/// How a UUID entry starts.
const UUID_PREFIX: &str = "GPU-";

/// Whether the UUID entry `entry` (`GPU-...`) names a device of UUID `uuid`: its hex digits
/// (dashes left out, any case) start the UUID's hex form (NVIDIA: 16 bytes) or its text
/// (AMD's HIP reports the 16 characters of `GPU-XXXXXXXXXXXXXXXX` as the UUID's bytes).
fn uuid_matches(entry: &str, uuid: &[u8; 16]) -> bool {
    let Some(body) = entry.strip_prefix(UUID_PREFIX) else { return false };
    let wanted: String = body.chars().filter(|&c| c != '-').collect::<String>().to_ascii_lowercase();
    if wanted.is_empty() || !wanted.chars().all(|c| c.is_ascii_hexdigit()) {
        return false;
    }
    let hex: String = uuid.iter().map(|b| format!("{b:02x}")).collect();
    let text = std::str::from_utf8(uuid).map(str::to_ascii_lowercase).unwrap_or_default();
    hex.starts_with(&wanted) || text.starts_with(&wanted)
}

/// The entries of `spec` that name devices of `devices` (by index into it, or by UUID), up
/// to the first that does not; a device given twice counts once.
fn select_from(variable: &str, spec: &str, devices: &[u32], uuids: &[[u8; 16]]) -> Vec<u32> {
    let mut chosen: Vec<u32> = Vec::new();
    if spec.is_empty() {
        return chosen;
    }
    // A trailing comma ends the list without an empty entry, as in clr.
    for entry in spec.strip_suffix(',').unwrap_or(spec).split(',') {
        let index = if entry.starts_with(UUID_PREFIX) {
            let found = devices.iter().position(|&d| uuids.get(d as usize).is_some_and(|u| uuid_matches(entry, u)));
            if found.is_none() {
                eprintln!("hip-remote: {variable}: no device has UUID {entry}; the list ends there");
            }
            found
        } else {
            entry.parse::<usize>().ok().filter(|i| i.to_string() == entry && *i < devices.len())
        };
        let Some(index) = index else { break };
        if !chosen.contains(&devices[index]) {
            chosen.push(devices[index]);
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn visible(rocr: Option<&str>, hip: Option<&str>, cuda: Option<&str>, total: u32) -> Vec<u32> {
        Visibility::from_values(rocr.map(Into::into), hip.map(Into::into), cuda.map(Into::into)).select(total, &[])
    }

    #[test]
    fn uuids_name_devices_in_amd_and_nvidia_forms() {
        // An NVIDIA UUID (raw bytes) and an AMD one (the text after `GPU-`).
        let nvidia = [0x89, 0x32, 0xf9, 0x37, 0xd7, 0x2c, 0x41, 0x06, 0xc1, 0x2f, 0x20, 0xbd, 0x9f, 0xae, 0xd9, 0xf6];
        let amd: [u8; 16] = *b"4b5d3f6e1a2c7b8d";
        let uuids = [nvidia, amd, [0; 16]];
        let pick = |hip: &str| Visibility::from_values(None, Some(hip.into()), None).select(3, &uuids);
        assert!(Visibility::from_values(None, Some("GPU-4b5d".into()), None).names_uuids());
        assert_eq!(pick("GPU-8932f937-d72c-4106-c12f-20bd9faed9f6"), [0]);
        assert_eq!(pick("GPU-4B5D3F6E1A2C7B8D,GPU-8932f937"), [1, 0]);
        assert_eq!(pick("2,GPU-4b5d3f6e1a2c7b8d,0"), [2, 1, 0]);
        assert_eq!(pick("1,GPU-4b5d"), [1], "the same device twice counts once");
        assert_eq!(pick("1,GPU-ffff,0"), [1], "an unknown UUID ends the list");
        assert_eq!(pick("GPU-"), Vec::<u32>::new());
        // ROCr first: the UUID is looked for among the devices it left.
        let both = Visibility::from_values(Some("2,1".into()), Some("GPU-8932".into()), None).select(3, &uuids);
        assert_eq!(both, Vec::<u32>::new());
    }

    #[test]
    fn unset_or_empty_hip_and_cuda_leave_every_device() {
        assert!(!Visibility::from_values(None, None, None).is_set());
        assert!(!Visibility::from_values(None, Some(String::new()), Some(String::new())).is_set());
        assert_eq!(visible(None, None, None, 3), [0, 1, 2]);
        assert_eq!(visible(None, Some(""), None, 3), [0, 1, 2]);
    }

    #[test]
    fn the_order_renumbers_and_duplicates_count_once() {
        assert_eq!(visible(None, Some("2,0"), None, 3), [2, 0]);
        assert_eq!(visible(None, Some("1,1,0,1"), None, 3), [1, 0]);
        assert_eq!(visible(None, Some("0,"), None, 3), [0]);
    }

    #[test]
    fn a_bad_entry_ends_the_list() {
        assert_eq!(visible(None, Some("1,3,0"), None, 3), [1]);
        assert_eq!(visible(None, Some("1,-1,0"), None, 3), [1]);
        assert_eq!(visible(None, Some("01,2"), None, 3), Vec::<u32>::new());
        assert_eq!(visible(None, Some(" 1"), None, 3), Vec::<u32>::new());
        assert_eq!(visible(None, Some("0,,1"), None, 3), [0]);
        assert_eq!(visible(None, Some("-1"), None, 3), Vec::<u32>::new());
        assert_eq!(visible(None, Some("GPU-1234,0"), None, 3), Vec::<u32>::new(), "no device has that UUID");
    }

    #[test]
    fn hip_wins_over_cuda_and_applies_after_rocr() {
        assert_eq!(visible(None, Some("1"), Some("2"), 3), [1]);
        assert_eq!(visible(None, Some(""), Some("2"), 3), [2]);
        // ROCr first: HIP's index 0 is ROCr's second choice.
        assert_eq!(visible(Some("2,1"), Some("1"), None, 3), [1]);
        assert_eq!(visible(Some("2,1"), None, None, 3), [2, 1]);
        assert_eq!(visible(Some(""), None, None, 3), Vec::<u32>::new());
    }
}
