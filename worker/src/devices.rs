//! Which devices a worker serves: `--devices 0,2`, `HIP_VISIBLE_DEVICES` and
//! `CUDA_VISIBLE_DEVICES`.
//!
//! A selection lists ordinals of the backend's devices; the worker serves those only and
//! numbers them from 0 in the order given, as `CUDA_VISIBLE_DEVICES` does (`--devices 2,0`:
//! client device 0 is the machine's device 2). Precedence:
//!
//! * `--devices` applies to every backend (the host backend: ordinals below `--host-devices`).
//! * `HIP_VISIBLE_DEVICES`, when `--devices` is absent, applies to GPU backends only: the host
//!   backend's emulated devices are not the machine's, and a variable meant for the machine's
//!   GPUs must not shrink a test worker.
//! * `CUDA_VISIBLE_DEVICES` is applied by the CUDA driver itself, underneath (so `--devices`
//!   and `HIP_VISIBLE_DEVICES` count in the driver's renumbered list); the worker only checks
//!   its syntax at start, so that a typo is refused with a message rather than silently
//!   leaving a worker with no GPU.
//!
//! Values are parsed like every other setting (`transport_core::config`): a bad one stops the
//! worker with a message naming where it came from and what is accepted.

use transport_core::config::{text, EnvError, Lookup};

/// The variable a GPU backend reads when `--devices` is absent.
pub const HIP_VISIBLE_DEVICES: &str = "HIP_VISIBLE_DEVICES";
/// The CUDA driver's own variable (checked, applied by the driver).
pub const CUDA_VISIBLE_DEVICES: &str = "CUDA_VISIBLE_DEVICES";

/// What a device list accepts, for messages.
const EXPECTED: &str = "device ordinals separated by commas, each at most once (e.g. 0,2)";

/// Devices chosen for the worker to serve, in the worker's numbering order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceSelection {
    /// Backend ordinals; the worker's device `i` is `ordinals[i]`.
    pub ordinals: Vec<u32>,
    /// Where the list came from (`--devices`, `HIP_VISIBLE_DEVICES`), for messages.
    pub source: &'static str,
}

impl DeviceSelection {
    /// Checks every ordinal against the `available` devices of the backend.
    pub fn check(&self, available: u32, what: &str) -> Result<(), String> {
        match self.ordinals.iter().find(|&&d| d >= available) {
            Some(d) => {
                Err(format!("{} names device {d}, but {what} has only {available} (ordinals 0 to {})", self.source, available.saturating_sub(1)))
            }
            None => Ok(()),
        }
    }
}

/// Parses `0,2` into `[0, 2]`: whole numbers, no repeats, at least one.
pub fn parse_device_list(value: &str) -> Result<Vec<u32>, String> {
    let mut ordinals: Vec<u32> = Vec::new();
    for item in value.split(',').map(str::trim) {
        match item.parse::<u32>() {
            Ok(d) if !ordinals.contains(&d) => ordinals.push(d),
            _ => return Err(format!("expected {EXPECTED}")),
        }
    }
    Ok(ordinals)
}

/// The selection for a backend: `flag` (`--devices`) first, else `HIP_VISIBLE_DEVICES` when
/// `gpu` (a GPU backend). `CUDA_VISIBLE_DEVICES` is checked when `gpu` but never returned:
/// the driver applies it. `None`: serve every device.
pub fn select(flag: Option<&str>, gpu: bool, lookup: &Lookup<'_>) -> Result<Option<DeviceSelection>, String> {
    if gpu {
        check_cuda_visible_devices(lookup).map_err(|e| e.to_string())?;
    }
    if let Some(flag) = flag {
        let ordinals = parse_device_list(flag).map_err(|e| format!("--devices {flag:?} is refused: {e}"))?;
        return Ok(Some(DeviceSelection { ordinals, source: "--devices" }));
    }
    if !gpu {
        return Ok(None);
    }
    let Some(value) = text(lookup, HIP_VISIBLE_DEVICES).map_err(|e| e.to_string())? else { return Ok(None) };
    let ordinals = parse_device_list(&value).map_err(|_| refused(HIP_VISIBLE_DEVICES, &value, EXPECTED).to_string())?;
    Ok(Some(DeviceSelection { ordinals, source: HIP_VISIBLE_DEVICES }))
}

/// `CUDA_VISIBLE_DEVICES` as the driver accepts it: ordinals or `GPU-…` / `MIG-…` identifiers.
fn check_cuda_visible_devices(lookup: &Lookup<'_>) -> Result<(), EnvError> {
    let Some(value) = text(lookup, CUDA_VISIBLE_DEVICES)? else { return Ok(()) };
    let valid = |item: &str| item.parse::<u32>().is_ok() || ["GPU-", "MIG-"].iter().any(|p| item.len() > p.len() && item.starts_with(p));
    if value.split(',').map(str::trim).all(valid) {
        Ok(())
    } else {
        Err(refused(CUDA_VISIBLE_DEVICES, &value, "device ordinals or GPU-/MIG- identifiers separated by commas"))
    }
}

fn refused(name: &str, value: &str, expected: &str) -> EnvError {
    EnvError { name: name.into(), value: value.into(), expected: expected.into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<Result<String, String>> + 'a {
        move |name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| Ok(v.to_string()))
    }

    #[test]
    fn lists_parse_in_order_and_refuse_junk() {
        assert_eq!(parse_device_list("0,2"), Ok(vec![0, 2]));
        assert_eq!(parse_device_list(" 3 , 1 "), Ok(vec![3, 1]));
        for bad in ["", "0,,1", "a", "-1", "1,1", "0;1", "99999999999"] {
            assert!(parse_device_list(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_flag_wins_and_the_host_backend_ignores_the_variables() {
        let env = [(HIP_VISIBLE_DEVICES, "1"), (CUDA_VISIBLE_DEVICES, "0,1")];
        let flag = select(Some("0,2"), true, &table(&env)).unwrap().unwrap();
        assert_eq!(flag, DeviceSelection { ordinals: vec![0, 2], source: "--devices" });
        let from_env = select(None, true, &table(&env)).unwrap().unwrap();
        assert_eq!(from_env, DeviceSelection { ordinals: vec![1], source: HIP_VISIBLE_DEVICES });
        assert_eq!(select(None, false, &table(&env)), Ok(None));
        assert_eq!(select(None, true, &table(&[])), Ok(None));
        assert_eq!(select(None, true, &table(&[(HIP_VISIBLE_DEVICES, " ")])), Ok(None), "blank is unset");
        let host = select(Some("1"), false, &table(&[(HIP_VISIBLE_DEVICES, "junk")])).unwrap().unwrap();
        assert_eq!(host.ordinals, [1]);
    }

    #[test]
    fn bad_values_are_refused_naming_their_source() {
        let err = select(Some("0,x"), false, &table(&[])).unwrap_err();
        assert!(err.starts_with("--devices \"0,x\" is refused"), "{err}");
        let err = select(None, true, &table(&[(HIP_VISIBLE_DEVICES, "0,0")])).unwrap_err();
        assert!(err.starts_with("HIP_VISIBLE_DEVICES=\"0,0\" is refused"), "{err}");
        let err = select(Some("0"), true, &table(&[(CUDA_VISIBLE_DEVICES, "gpu0")])).unwrap_err();
        assert!(err.starts_with("CUDA_VISIBLE_DEVICES=\"gpu0\" is refused"), "{err}");
        assert!(select(None, true, &table(&[(CUDA_VISIBLE_DEVICES, "GPU-8f6e1c2a,1")])).is_ok());
    }

    #[test]
    fn ordinals_are_checked_against_the_backend() {
        let selection = DeviceSelection { ordinals: vec![0, 2], source: "--devices" };
        assert_eq!(selection.check(3, "the host backend"), Ok(()));
        let err = selection.check(2, "--host-devices").unwrap_err();
        assert_eq!(err, "--devices names device 2, but --host-devices has only 2 (ordinals 0 to 1)");
    }
}
