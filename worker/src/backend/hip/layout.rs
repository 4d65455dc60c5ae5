//! Kernel parameter layouts from AMD code-object metadata (the `.args` list of the msgpack
//! note in the ELF: each argument's `.offset` and `.size`, hidden arguments left out), for
//! HIP runtimes that do not report layouts themselves (AMD's). Offload bundles, compressed
//! ones too, are narrowed first to the code object the device would run.

use crate::backend::{BackendError, ParamLayout};
use hip_code_object::fatbin::{self, Bundle, ImageKind};
use hip_code_object::metadata;
use std::borrow::Cow;

/// The parameters of kernel `name` in `image` (an AMD code object or an offload bundle), in
/// declaration order, as a device of architecture `device_arch` runs it.
pub fn kernel_params(image: &[u8], name: &str, device_arch: &str) -> Result<Vec<ParamLayout>, BackendError> {
    let code = code_object_for(image, device_arch)?;
    let kernels = metadata::kernel_param_layouts(&code)
        .map_err(|e| BackendError::InvalidImage(format!("kernel '{name}': the code object's metadata is unreadable: {e}")))?;
    let kernel = kernels
        .iter()
        .find(|k| k.name == name || k.symbol.strip_suffix(".kd") == Some(name))
        .ok_or_else(|| BackendError::NotFound(format!("kernel '{name}' is not in the code object's metadata")))?;
    Ok(kernel.params.iter().map(|p| ParamLayout { offset: p.offset, size: p.size }).collect())
}

/// The code object in `image` for `device_arch`.
fn code_object_for<'a>(image: &'a [u8], device_arch: &str) -> Result<Cow<'a, [u8]>, BackendError> {
    let bad = |e: &dyn std::fmt::Display| BackendError::InvalidImage(format!("module image: {e}"));
    let pick = |bundle: &[u8]| -> Result<Vec<u8>, BackendError> {
        let bundle = Bundle::parse(bundle).map_err(|e| bad(&e))?;
        let entry = fatbin::select(&bundle, device_arch).map_err(|e| BackendError::NoBinaryForGpu(e.to_string()))?;
        Ok(entry.code.to_vec())
    };
    match fatbin::classify(image).map_err(|e| bad(&e))? {
        ImageKind::Elf { .. } => Ok(Cow::Borrowed(image)),
        ImageKind::Bundle => pick(image).map(Cow::Owned),
        ImageKind::CompressedBundle => {
            let bundle = fatbin::decompress(image).map_err(|e| bad(&e))?;
            pick(&bundle).map(Cow::Owned)
        }
        other => Err(BackendError::NoBinaryForGpu(format!("a {other:?} image has no AMD code object"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../code-object/testdata").join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// hipcc's own code objects: `mixed(char, short, int, double, struct16, T*)` as the C ABI
    /// lays it out, directly and chosen from an offload bundle.
    #[test]
    fn layouts_come_from_real_code_objects_and_bundles() {
        let expected: Vec<ParamLayout> =
            [(0, 1), (2, 2), (4, 4), (8, 8), (16, 16), (32, 8)].into_iter().map(|(offset, size)| ParamLayout { offset, size }).collect();
        let gfx90a = fixture("mixed-gfx90a-v4.co");
        let name = metadata::kernel_param_layouts(&gfx90a).unwrap().into_iter().find(|k| k.name.contains("mixed")).unwrap().name;
        assert_eq!(kernel_params(&gfx90a, &name, "gfx90a").unwrap(), expected);
        let bundle = fatbin::test_support::bundle(&[
            ("host-x86_64-unknown-linux-gnu-", &[]),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a", &gfx90a),
            ("hipv4-amdgcn-amd-amdhsa--gfx1030", &fixture("mixed-gfx1030-v5.co")),
        ]);
        assert_eq!(kernel_params(&bundle, &name, "gfx90a:sramecc+:xnack-").unwrap(), expected);
        assert_eq!(kernel_params(&bundle, &name, "gfx1030").unwrap(), expected);
        assert!(matches!(kernel_params(&bundle, &name, "gfx942"), Err(BackendError::NoBinaryForGpu(_))));
        assert!(matches!(kernel_params(&gfx90a, "nope", "gfx90a"), Err(BackendError::NotFound(_))));
        assert!(matches!(kernel_params(b"not an image", &name, "gfx90a"), Err(BackendError::InvalidImage(_))));
    }
}
