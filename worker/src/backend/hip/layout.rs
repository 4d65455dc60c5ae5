//! Kernel parameter layouts from AMD code-object metadata (the `.args` list of the msgpack
//! note in the ELF: each argument's `.offset` and `.size`), for HIP runtimes that do not
//! report layouts themselves (AMD's). The parser lives in the code-object crate
//! (`hip_code_object::kernel_param_layouts`), wired in here when that crate is merged.

use crate::backend::{BackendError, ParamLayout};

/// The parameters of kernel `name` in `image` (an AMD code object or an offload bundle), in
/// declaration order.
pub fn kernel_params(image: &[u8], name: &str) -> Result<Vec<ParamLayout>, BackendError> {
    let _ = image;
    Err(BackendError::NotSupported(format!(
        "cannot read the parameter layout of kernel '{name}': the AMD code-object metadata parser \
         (hip_code_object::kernel_param_layouts) is not built into this worker, and the HIP runtime \
         does not report layouts (no hipRemoteFunctionParamLayout)"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_the_parser_the_error_names_it() {
        let e = kernel_params(b"\x7fELF", "vadd").unwrap_err();
        assert!(matches!(e, BackendError::NotSupported(_)), "{e}");
        assert!(e.message().contains("hip_code_object::kernel_param_layouts") && e.message().contains("'vadd'"), "{e}");
    }
}
