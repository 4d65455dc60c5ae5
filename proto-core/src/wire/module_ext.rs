//! The module family's later calls: kernel enumeration (`hipModuleGetFunctionCount`, the
//! `hipLibrary*` functions), cooperative launches and the linker (`hipLink*`). A cooperative
//! launch travels as a [`crate::wire::LaunchKernel`] under its own opcode, so both launch kinds
//! keep one layout. A link is two calls made back to back under the connection's lock:
//! `RtcLink` (the inputs as bulk) and, when it succeeded, `RtcLinkedImage` (the image as bulk),
//! since one frame carries bulk one way only.

use crate::field::{Bulk, List, StrList, Text};
use crate::limits::MAX_LIST_ITEMS;
use zerocopy::byteorder::little_endian::U32;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

message! {
    /// The kernels of one module, by name, in the image's order.
    pub struct FunctionNames<'a> {
        /// Kernel names (mangled as in the image).
        pub names: StrList<'a>,
    }
}

/// One input of a link: its `hipJitInputType` and its length in the request's bulk section
/// (the inputs lie there one after another, in the order they were added).
#[derive(Debug, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct LinkInput {
    /// `hipJitInputType` (0 cubin, 1 PTX, 2 fat binary, 3 object, 4 library, 100+ LLVM).
    pub kind: U32,
    /// Bytes of this input in the bulk section.
    pub len: U32,
}

const _: () = assert!(core::mem::size_of::<LinkInput>() == 8);

// zerocopy's byte-order types have no `defmt::Format`, so the derive cannot be used.
#[cfg(feature = "defmt")]
impl defmt::Format for LinkInput {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(f, "LinkInput {{ kind: {=u32}, len: {=u32} }}", self.kind.get(), self.len.get());
    }
}

message! {
    /// `hipLinkComplete`: every input `hipLinkAddData` / `hipLinkAddFile` collected, linked
    /// by the worker for the device.
    pub struct RtcLink<'a> {
        /// Device to link for: the client's current device.
        pub device: u32,
        /// The inputs, in the order they were added.
        pub inputs: List<'a, LinkInput, MAX_LIST_ITEMS>,
        /// The inputs' names (for the log), same order.
        pub names: StrList<'a>,
        /// The inputs' bytes, one after another, as the frame's bulk section.
        pub data: Bulk<'a>,
    }
}

message! {
    /// The outcome of a link. A failed link is a normal answer with `success == false` and
    /// the linker's log; a successful one leaves the image with the session for
    /// `RtcLinkedImage`.
    pub struct RtcLinked<'a> {
        /// Whether an image was produced.
        pub success: bool,
        /// The linker's log, verbatim.
        pub log: Text<'a>,
        /// Bytes of the linked image.
        pub image_len: u64,
    }
}

message! {
    /// The image of the session's latest successful link (taken: asked for once).
    pub struct LinkedImage<'a> {
        /// The image, as the frame's bulk section.
        pub image: Bulk<'a>,
    }
}
