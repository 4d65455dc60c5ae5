//! The module family's later calls: kernel enumeration (`hipModuleGetFunctionCount`, the
//! `hipLibrary*` functions) and cooperative launches. A cooperative launch travels as a
//! [`crate::wire::LaunchKernel`] under its own opcode, so both launch kinds keep one layout.

use crate::field::StrList;

message! {
    /// The kernels of one module, by name, in the image's order.
    pub struct FunctionNames<'a> {
        /// Kernel names (mangled as in the image).
        pub names: StrList<'a>,
    }
}
