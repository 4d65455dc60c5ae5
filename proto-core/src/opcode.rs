//! The one opcode table.
//!
//! Each line names an operation once: its number, its name, the worker's handler method,
//! its request type and its response type. From it [`opcodes!`] generates [`Opcode`] (with
//! names for logs and families), [`Request`] and [`Response`] (parse/encode by opcode), the
//! worker's [`Handler`] trait and [`dispatch`]. Adding a call is one line here plus its
//! message types in [`crate::wire`].
//!
//! Numbering: the high byte is the [`Family`], the low byte the call within it; numbers are
//! never reused.

use crate::error::{DecodeError, EncodeError};
use crate::field::{DecodeCx, EncodeCx};
use crate::wire::*;
use crate::Message;

wire_enum! {
    /// Opcode families (the opcode's high byte).
    pub enum Family: u8 {
        /// Handshake, authentication, ping.
        Session = 0x00,
        /// Device queries and control.
        Device = 0x01,
        /// Allocation, copies, memset.
        Memory = 0x02,
        /// Streams.
        Stream = 0x03,
        /// Events.
        Event = 0x04,
        /// Modules, functions, launches.
        Module = 0x05,
        /// Runtime compilation.
        Rtc = 0x06,
        /// Graphs (reserved).
        Graph = 0x07,
    }
}

macro_rules! opcodes {
    (
        <$lt:lifetime>
        $( $(#[$meta:meta])* $code:literal $variant:ident $method:ident : $req:ty => $resp:ty ; )*
    ) => {
        /// Every operation of the protocol.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        #[repr(u16)]
        pub enum Opcode {
            $( $(#[$meta])* $variant = $code, )*
        }

        impl Opcode {
            /// Every opcode, in table order.
            pub const ALL: &'static [Opcode] = &[$(Opcode::$variant),*];

            /// The opcode for a raw number.
            pub const fn from_u16(raw: u16) -> Option<Self> {
                match raw {
                    $( $code => Some(Self::$variant), )*
                    _ => None,
                }
            }

            /// The raw number.
            pub const fn raw(self) -> u16 {
                self as u16
            }

            /// Name for logs.
            pub const fn name(self) -> &'static str {
                match self {
                    $( Self::$variant => stringify!($variant), )*
                }
            }

            /// The family (high byte).
            pub const fn family(self) -> Family {
                match Family::from_raw((self as u16 >> 8) as u8) {
                    Some(f) => f,
                    None => panic!("opcode outside every family"),
                }
            }

            /// Most control bytes a request of this opcode can encode to.
            #[allow(clippy::extra_unused_lifetimes)] // names the lifetime `$req`/`$resp` mention
            pub fn max_request_len<$lt>(self) -> usize {
                match self {
                    $( Self::$variant => <$req as Message<$lt>>::MAX_CONTROL_LEN, )*
                }
            }

            /// Most control bytes a response of this opcode can encode to.
            #[allow(clippy::extra_unused_lifetimes)] // names the lifetime `$req`/`$resp` mention
            pub fn max_response_len<$lt>(self) -> usize {
                match self {
                    $( Self::$variant => <$resp as Message<$lt>>::MAX_CONTROL_LEN, )*
                }
            }

            /// Whether requests of this opcode carry a bulk section.
            #[allow(clippy::extra_unused_lifetimes)] // names the lifetime `$req`/`$resp` mention
            pub fn request_has_bulk<$lt>(self) -> bool {
                match self {
                    $( Self::$variant => <$req as Message<$lt>>::HAS_BULK, )*
                }
            }

            /// Whether responses of this opcode carry a bulk section.
            #[allow(clippy::extra_unused_lifetimes)] // names the lifetime `$req`/`$resp` mention
            pub fn response_has_bulk<$lt>(self) -> bool {
                match self {
                    $( Self::$variant => <$resp as Message<$lt>>::HAS_BULK, )*
                }
            }
        }

        impl core::fmt::Display for Opcode {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(self.name())
            }
        }

        /// A decoded request of any opcode.
        #[derive(Debug, Clone, PartialEq)]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        #[allow(missing_docs)]
        pub enum Request<$lt> {
            $( $variant($req), )*
        }

        /// A decoded response of any opcode (success replies; errors are
        /// [`ErrorReply`](crate::wire::ErrorReply)).
        #[derive(Debug, Clone, PartialEq)]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        #[allow(missing_docs)]
        // DeviceProperties makes one variant large; boxing it would need `alloc`, and a
        // response is decoded on the stack one at a time.
        #[allow(clippy::large_enum_variant)]
        pub enum Response<$lt> {
            $( $variant($resp), )*
        }

        impl<$lt> Request<$lt> {
            /// Decodes a request by opcode from its control part and bulk section.
            pub fn parse(opcode: u16, control: &$lt [u8], bulk: &$lt [u8]) -> Result<Self, DecodeError> {
                let op = Opcode::from_u16(opcode).ok_or(DecodeError::UnknownOpcode { opcode })?;
                let mut cx = DecodeCx::new(control, bulk);
                let req = match op {
                    $( Opcode::$variant => Self::$variant(<$req as Message<$lt>>::decode(&mut cx)?), )*
                };
                cx.finish()?;
                Ok(req)
            }

            /// The request's opcode.
            pub fn opcode(&self) -> Opcode {
                match self {
                    $( Self::$variant(_) => Opcode::$variant, )*
                }
            }

            /// Encodes the control part (and registers bulk data) into `cx`.
            pub fn encode<'w>(&self, cx: &mut EncodeCx<'w, $lt>) -> Result<(), EncodeError> {
                match self {
                    $( Self::$variant(m) => m.encode(cx), )*
                }
            }

            /// A request of the given opcode built from unstructured bytes (tests, fuzzing).
            #[cfg(feature = "arbitrary")]
            pub fn arbitrary_for(op: Opcode, u: &mut arbitrary::Unstructured<$lt>) -> arbitrary::Result<Self> {
                use arbitrary::Arbitrary;
                Ok(match op {
                    $( Opcode::$variant => Self::$variant(<$req>::arbitrary(u)?), )*
                })
            }
        }

        impl<$lt> Response<$lt> {
            /// Decodes a success response for a request of `opcode`.
            pub fn parse(opcode: u16, control: &$lt [u8], bulk: &$lt [u8]) -> Result<Self, DecodeError> {
                let op = Opcode::from_u16(opcode).ok_or(DecodeError::UnknownOpcode { opcode })?;
                let mut cx = DecodeCx::new(control, bulk);
                let resp = match op {
                    $( Opcode::$variant => Self::$variant(<$resp as Message<$lt>>::decode(&mut cx)?), )*
                };
                cx.finish()?;
                Ok(resp)
            }

            /// The opcode of the request this answers.
            pub fn opcode(&self) -> Opcode {
                match self {
                    $( Self::$variant(_) => Opcode::$variant, )*
                }
            }

            /// Encodes the control part (and registers bulk data) into `cx`.
            pub fn encode<'w>(&self, cx: &mut EncodeCx<'w, $lt>) -> Result<(), EncodeError> {
                match self {
                    $( Self::$variant(m) => m.encode(cx), )*
                }
            }

            /// A response of the given opcode built from unstructured bytes (tests, fuzzing).
            #[cfg(feature = "arbitrary")]
            pub fn arbitrary_for(op: Opcode, u: &mut arbitrary::Unstructured<$lt>) -> arbitrary::Result<Self> {
                use arbitrary::Arbitrary;
                Ok(match op {
                    $( Opcode::$variant => Self::$variant(<$resp>::arbitrary(u)?), )*
                })
            }
        }

        /// The worker's side of the table: one method per opcode. `Io` gives handlers access
        /// to whatever the session's driver offers besides the message (bulk placement,
        /// deferred replies); the response may borrow from the handler.
        #[allow(missing_docs)]
        pub trait Handler {
            /// Failure type; the session turns it into an error reply.
            type Error;
            /// Driver services available to handlers.
            type Io: ?Sized;
            $( fn $method<$lt>(&$lt mut self, io: &mut Self::Io, req: $req) -> Result<$resp, Self::Error>; )*
        }

        /// Calls the handler method of `req`'s opcode.
        pub fn dispatch<$lt, H: Handler + ?Sized>(handler: &$lt mut H, io: &mut H::Io, req: Request<$lt>) -> Result<Response<$lt>, H::Error> {
            match req {
                $( Request::$variant(r) => handler.$method(io, r).map(Response::$variant), )*
            }
        }
    };
}

impl<'a> Request<'a> {
    /// Encodes a complete frame for this request (see [`encode_frame`](crate::frame::encode_frame)).
    pub fn encode_frame(&self, buf: &mut [u8], flags: crate::Flags, request_id: u64) -> Result<crate::EncodedFrame<'a>, EncodeError> {
        let meta = crate::frame::FrameMeta { opcode: self.opcode().raw(), flags, request_id, credits: 0, aux: 0 };
        crate::frame::encode_frame(buf, meta, &AsMessage(self))
    }
}

impl<'a> Response<'a> {
    /// Encodes a complete response frame; `aux` carries a deferred error status.
    pub fn encode_frame(&self, buf: &mut [u8], request_id: u64, aux: i32) -> Result<crate::EncodedFrame<'a>, EncodeError> {
        let meta = crate::frame::FrameMeta {
            opcode: self.opcode().raw(),
            flags: crate::Flags::RESPONSE,
            request_id,
            credits: 0,
            aux,
        };
        crate::frame::encode_frame(buf, meta, &AsMessage(self))
    }
}

/// Adapts a `Request`/`Response` to [`Message`] for [`encode_frame`](crate::frame::encode_frame).
struct AsMessage<'r, T>(&'r T);

trait EncodeAny<'a> {
    fn encode_any<'w>(&self, cx: &mut EncodeCx<'w, 'a>) -> Result<(), EncodeError>;
}
impl<'a> EncodeAny<'a> for Request<'a> {
    fn encode_any<'w>(&self, cx: &mut EncodeCx<'w, 'a>) -> Result<(), EncodeError> {
        self.encode(cx)
    }
}
impl<'a> EncodeAny<'a> for Response<'a> {
    fn encode_any<'w>(&self, cx: &mut EncodeCx<'w, 'a>) -> Result<(), EncodeError> {
        self.encode(cx)
    }
}

impl<'a, T: EncodeAny<'a>> Message<'a> for AsMessage<'_, T> {
    const MAX_CONTROL_LEN: usize = crate::limits::MAX_CONTROL_LEN;
    const HAS_BULK: bool = true;
    fn decode(_: &mut DecodeCx<'a>) -> Result<Self, DecodeError> {
        // Only used for encoding; decoding goes through Request::parse / Response::parse.
        Err(DecodeError::InvalidValue { what: "AsMessage is encode-only" })
    }
    fn encode<'w>(&self, cx: &mut EncodeCx<'w, 'a>) -> Result<(), EncodeError> {
        self.0.encode_any(cx)
    }
}

opcodes! { <'a>
    // ---- session 0x00xx ----
    /// Handshake; must be the first request of a connection.
    0x0001 Hello hello: Hello<'a> => Welcome<'a>;
    /// Answer to WELCOME's authentication challenge.
    0x0002 Authenticate authenticate: Authenticate<'a> => Empty;
    /// Liveness and round-trip probe.
    0x0003 Ping ping: Ping<'a> => Pong<'a>;
    /// Orderly end of the session (the worker frees everything it holds).
    0x0004 Goodbye goodbye: Empty => Empty;

    // ---- device 0x01xx ----
    /// Driver and runtime versions.
    0x0101 GetVersions get_versions: Empty => Versions<'a>;
    /// `hipGetDeviceCount`.
    0x0102 GetDeviceCount get_device_count: Empty => DeviceCount;
    /// `hipGetDeviceProperties` (the client also derives attributes from it).
    0x0103 GetDeviceProperties get_device_properties: DeviceRef => DeviceProperties;
    /// `hipDeviceSynchronize`.
    0x0104 DeviceSynchronize device_synchronize: DeviceRef => Empty;
    /// `hipDeviceReset`: frees everything the session holds on the device.
    0x0105 DeviceReset device_reset: DeviceRef => Empty;
    /// `hipMemGetInfo`.
    0x0106 MemGetInfo mem_get_info: DeviceRef => MemInfo;
    /// `hipDeviceGetStreamPriorityRange`.
    0x0107 StreamPriorityRange stream_priority_range: DeviceRef => PriorityRange;

    // ---- memory 0x02xx ----
    /// `hipMalloc`.
    0x0201 Malloc malloc: Malloc => Allocation;
    /// `hipFree`.
    0x0202 Free free: Free => Empty;
    /// Host-to-device copy (any API that writes device memory from the host).
    0x0203 MemcpyHtoD memcpy_htod: MemcpyHtoD<'a> => Empty;
    /// Device-to-host copy.
    0x0204 MemcpyDtoH memcpy_dtoh: MemcpyDtoH => MemcpyData<'a>;
    /// Device-to-device copy.
    0x0205 MemcpyDtoD memcpy_dtod: MemcpyDtoD => Empty;
    /// `hipMemset*`.
    0x0206 Memset memset: Memset => Empty;
    /// Host-to-device 2D copy (rows packed in the bulk section).
    0x0207 MemcpyHtoD2D memcpy_htod_2d: MemcpyHtoD2D<'a> => Empty;
    /// Device-to-host 2D copy (rows answered packed).
    0x0208 MemcpyDtoH2D memcpy_dtoh_2d: MemcpyDtoH2D => MemcpyData<'a>;
    /// Device-to-device 2D copy.
    0x0209 MemcpyDtoD2D memcpy_dtod_2d: MemcpyDtoD2D => Empty;
    /// `hipMemcpyPeer*`.
    0x020a MemcpyPeer memcpy_peer: MemcpyPeer => Empty;
    /// `hipMallocAsync`.
    0x020b MallocAsync malloc_async: MallocAsync => AsyncAllocation;
    /// `hipFreeAsync`.
    0x020c FreeAsync free_async: FreeAsync => Empty;

    // ---- stream 0x03xx ----
    /// `hipStreamCreate*`.
    0x0301 StreamCreate stream_create: StreamCreate => StreamCreated;
    /// `hipStreamDestroy`.
    0x0302 StreamDestroy stream_destroy: StreamRef => Empty;
    /// `hipStreamSynchronize`.
    0x0303 StreamSynchronize stream_synchronize: StreamRef => Empty;
    /// `hipStreamQuery`.
    0x0304 StreamQuery stream_query: StreamRef => QueryResult;
    /// `hipStreamWaitEvent`.
    0x0305 StreamWaitEvent stream_wait_event: StreamWaitEvent => Empty;

    // ---- event 0x04xx ----
    /// `hipEventCreate*`.
    0x0401 EventCreate event_create: EventCreate => EventCreated;
    /// `hipEventRecord`.
    0x0402 EventRecord event_record: EventRecord => Empty;
    /// `hipEventSynchronize`.
    0x0403 EventSynchronize event_synchronize: EventRef => Empty;
    /// `hipEventQuery`.
    0x0404 EventQuery event_query: EventRef => QueryResult;
    /// `hipEventElapsedTime`.
    0x0405 EventElapsedTime event_elapsed_time: EventElapsed => ElapsedTime;
    /// `hipEventDestroy`.
    0x0406 EventDestroy event_destroy: EventRef => Empty;

    // ---- module 0x05xx ----
    /// `hipModuleLoadData*`, `hipModuleLoad`, `__hipRegisterFatBinary`.
    0x0501 ModuleLoad module_load: ModuleLoad<'a> => ModuleLoaded;
    /// `hipModuleUnload`.
    0x0502 ModuleUnload module_unload: ModuleRef => Empty;
    /// `hipModuleGetFunction`, with the parameter layout.
    0x0503 ModuleGetFunction module_get_function: SymbolLookup<'a> => FunctionInfo<'a>;
    /// `hipModuleGetGlobal`.
    0x0504 ModuleGetGlobal module_get_global: SymbolLookup<'a> => GlobalInfo;
    /// `hipModuleLaunchKernel`, `hipLaunchKernel`, `<<<>>>`.
    0x0505 LaunchKernel launch_kernel: LaunchKernel<'a> => Empty;
    /// `hipFuncGetAttributes` / `hipFuncGetAttribute`.
    0x0506 FuncGetAttributes func_get_attributes: FunctionRef => FuncAttributes;
    /// `hipModuleOccupancyMaxActiveBlocksPerMultiprocessor`.
    0x0507 OccupancyMaxActiveBlocks occupancy_max_active_blocks: OccupancyQuery => Occupancy;
    /// `hipModuleOccupancyMaxPotentialBlockSize`.
    0x0508 OccupancyMaxPotentialBlockSize occupancy_max_potential_block_size: BlockSizeQuery => BlockSize;

    // ---- rtc 0x06xx ----
    /// `hiprtcCompileProgram`, compiled by the worker for its device.
    0x0601 RtcCompile rtc_compile: RtcCompile<'a> => RtcCompiled<'a>;
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn table_is_consistent() {
        for (i, op) in Opcode::ALL.iter().enumerate() {
            assert_eq!(Opcode::from_u16(op.raw()), Some(*op));
            assert_eq!(op.family().raw(), (op.raw() >> 8) as u8, "{op}");
            assert!(Opcode::ALL[..i].iter().all(|o| o.name() != op.name()));
        }
        assert_eq!(Opcode::from_u16(0xffff), None);
    }
}
