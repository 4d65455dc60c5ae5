//! Which devices of the device list the application sees: `ROCR_VISIBLE_DEVICES`, then
//! `HIP_VISIBLE_DEVICES` (or `CUDA_VISIBLE_DEVICES` when that is unset or empty), applied as
//! ROCm 7 applies them in the application's process (docs/CLIENT.md, "Visible devices").
//!
//! Each variable is a comma-separated list of indices into the devices left by the one
//! before it; the list's order is the application's numbering. As clr reads it: an entry
//! that is not a plain decimal index of an existing device ends the list (what follows is
//! ignored), an index given twice counts once. An empty `HIP_VISIBLE_DEVICES` or
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

    /// The devices the application sees, of a device list of `total`: entry `i` is the list
    /// index of the application's device `i`.
    pub fn select(&self, total: u32) -> Vec<u32> {
        let mut devices: Vec<u32> = (0..total).collect();
        if let Some(spec) = &self.rocr {
            devices = select_from(ROCR_VISIBLE_DEVICES, spec, &devices);
        }
        if let Some(spec) = &self.hip {
            devices = select_from(HIP_VISIBLE_DEVICES, spec, &devices);
        }
        devices
    }
}

/// The entries of `spec` that name devices of `devices` (by index into it), up to the first
/// that does not; an index given twice counts once.
fn select_from(variable: &str, spec: &str, devices: &[u32]) -> Vec<u32> {
    let mut chosen: Vec<u32> = Vec::new();
    if spec.is_empty() {
        return chosen;
    }
    // A trailing comma ends the list without an empty entry, as in clr.
    for entry in spec.strip_suffix(',').unwrap_or(spec).split(',') {
        let index = entry.parse::<usize>().ok().filter(|i| i.to_string() == entry && *i < devices.len());
        let Some(index) = index else {
            if entry.starts_with("GPU-") {
                eprintln!("hip-remote: {variable}: device UUIDs are not supported; the list ends before {entry}");
            }
            break;
        };
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
        Visibility::from_values(rocr.map(Into::into), hip.map(Into::into), cuda.map(Into::into)).select(total)
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
        assert_eq!(visible(None, Some("GPU-1234,0"), None, 3), Vec::<u32>::new());
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
