//! The one opcode table.
//!
//! Each line declares a whole call: its number, its name, the worker's handler method, its
//! request and response types, how its bulk data travels ([`BulkWay`]), whether the client
//! sends it fire-and-forget ([`Delivery`]) and, for the handshake's calls, whether an untrusted
//! connection may send it ([`Admission`]). From the table [`opcodes!`] generates:
//!
//! - [`Opcode`] (names for logs, families, [`Opcode::bulk`], [`Opcode::delivery`],
//!   [`Opcode::admission`]);
//! - [`Request`] and [`Response`] (parse/encode by opcode);
//! - the client's side: one marker type per call in [`calls`] (implementing [`Call`]) and the
//!   [`Calls`] trait, one typed method per opcode over any [`Caller`] (the client's
//!   connection), so no client code builds a frame or matches a reply by hand;
//! - the worker's side: one handler trait per family ([`SessionHandler`], [`DeviceHandler`],
//!   [`MemoryHandler`], [`StreamHandler`], [`EventHandler`], [`ModuleHandler`],
//!   [`RtcHandler`]), their union [`Handler`], and [`dispatch`].
//!
//! Adding a call is one line here plus its message types in [`crate::wire`] (see "Adding a
//! call" in `docs/PROTOCOL.md`).
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
        /// Graphs: graphs, their nodes and executable graphs.
        Graph = 0x07,
        /// Arrays, mipmapped arrays and the copies that name them (incl. 3D copies).
        Array = 0x08,
        /// Stream-ordered memory pools.
        Pool = 0x09,
        /// Virtual memory management: address reservations, physical allocations, mappings.
        Vmm = 0x0a,
        /// Inter-process sharing of memory and events between sessions of one worker.
        Ipc = 0x0b,
        /// Managed memory and host memory the device reads and writes (registered, mapped).
        Managed = 0x0c,
        /// BLAS handles and routines run by the worker's BLAS library.
        Blas = 0x0d,
    }
}

/// How a call's bulk section travels (declared per table line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum BulkWay {
    /// Neither the request nor the reply carries bulk data.
    None,
    /// The request carries bulk data the handler reads as bytes (the driver buffers it).
    Request,
    /// The request carries bulk data destined for device memory: the worker's driver places
    /// it where the session says (straight into device memory where the backend allows)
    /// before the handler runs.
    RequestToDevice,
    /// The reply carries bulk data (the client lands it in the application's buffer).
    Reply,
}

/// How the client sends a call by default (declared per table line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Delivery {
    /// The client waits for the reply; the worker refuses it without one.
    Call,
    /// Fire-and-forget allowed: the client may send it with `NO_REPLY` and learn of a
    /// failure from the next reply's deferred status.
    Post,
}

/// When a connection may send a call before the worker trusts it (declared per table line;
/// a line that says nothing: only once trusted). The worker refuses anything else on an
/// untrusted connection from the header alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Admission {
    /// Only on a trusted connection (authenticated, or greeted where no authentication is
    /// asked).
    Trusted,
    /// The first request of a connection (the handshake).
    Greeting,
    /// After the greeting, as the answer to the worker's authentication challenge.
    Authentication,
    /// After the greeting, before authentication too.
    AfterGreeting,
    /// The first and only request of a stripe connection (its join key is the proof).
    StripeGreeting,
    /// The first and only request of a worker-to-worker transfer connection (its grant's
    /// secret is the proof).
    PeerGreeting,
}

/// What a handler produces besides a plain reply (for calls whose reply carries bulk data).
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome<R> {
    /// Reply now with this response.
    Reply(R),
    /// Reply now with this response, whose bulk section is `len` bytes of device memory at
    /// `ptr` (already synchronised): the driver reads them from the device itself, so the
    /// bytes need not pass through a buffer of the session's.
    ReplyFromDevice {
        /// The response, encoded without bulk.
        reply: R,
        /// Device address of the bulk section.
        ptr: u64,
        /// Its length.
        len: u64,
    },
    /// The reply comes later, produced elsewhere (an asynchronous copy answers when its
    /// stream reaches it).
    Later,
}

impl<R> Outcome<R> {
    /// The reply, if it is one to send now as it is.
    pub fn into_reply(self) -> Option<R> {
        match self {
            Self::Reply(r) => Some(r),
            _ => None,
        }
    }

    /// Maps the reply.
    pub fn map<T>(self, f: impl FnOnce(R) -> T) -> Outcome<T> {
        match self {
            Self::Reply(r) => Outcome::Reply(f(r)),
            Self::ReplyFromDevice { reply, ptr, len } => Outcome::ReplyFromDevice { reply: f(reply), ptr, len },
            Self::Later => Outcome::Later,
        }
    }
}

impl<R> From<R> for Outcome<R> {
    fn from(reply: R) -> Self {
        Self::Reply(reply)
    }
}

/// One call of the protocol, as its table line declares it. Implemented by the marker types
/// in [`calls`]; the client's connection sends any `Call` through [`Caller`].
pub trait Call {
    /// The opcode.
    const OPCODE: Opcode;
    /// How its bulk data travels.
    const BULK: BulkWay;
    /// Whether it may be sent fire-and-forget.
    const DELIVERY: Delivery;
    /// The request message.
    type Request<'a>;
    /// The success reply message.
    type Reply<'a>;
    /// The request as a [`Request`].
    fn wrap(req: Self::Request<'_>) -> Request<'_>;
    /// The reply out of a [`Response`] parsed for [`Self::OPCODE`] (`None` cannot happen for
    /// a response parsed by opcode; it is there so no caller needs a panic).
    fn unwrap(resp: Response<'_>) -> Option<Self::Reply<'_>>;
    /// The reply as a [`Response`] (the worker's side: a reply built away from the handler's
    /// return, e.g. when an asynchronous copy answers later).
    fn reply(reply: Self::Reply<'_>) -> Response<'_>;
}

/// The client's connection as the generated calls see it: send a request and wait for its
/// typed reply, or post it fire-and-forget.
pub trait Caller {
    /// A failed call (transport, worker error reply, malformed reply).
    type Error;
    /// Sends `req` and waits for its reply.
    fn call<'s, C: Call>(&'s mut self, req: C::Request<'_>) -> Result<C::Reply<'s>, Self::Error>;
    /// Queues `req` without waiting for a reply; only calls the table declares `post` may be
    /// posted (a compile-time check in the implementation via [`Call::DELIVERY`]).
    fn post<C: Call>(&mut self, req: C::Request<'_>) -> Result<(), Self::Error>;
}

/// Compile-time check for [`Caller::post`] implementations: fails to build for a call the
/// table does not declare `post`.
pub const fn assert_postable<C: Call>() {
    assert!(matches!(C::DELIVERY, Delivery::Post), "this call is not declared fire-and-forget in the opcode table");
}

/// The types every family handler shares.
pub trait HandlerTypes {
    /// Failure type; the session turns it into an error reply.
    type Error;
    /// What the driver tells a handler about the request besides its message (request id,
    /// fire-and-forget, bulk already placed, ...). Plain data: handlers do no I/O.
    type Cx: ?Sized;
}

macro_rules! bulk_way {
    (none) => {
        BulkWay::None
    };
    (request) => {
        BulkWay::Request
    };
    (to_device) => {
        BulkWay::RequestToDevice
    };
    (reply) => {
        BulkWay::Reply
    };
}

macro_rules! admission {
    () => {
        Admission::Trusted
    };
    (greeting) => {
        Admission::Greeting
    };
    (authentication) => {
        Admission::Authentication
    };
    (after_greeting) => {
        Admission::AfterGreeting
    };
    (stripe_greeting) => {
        Admission::StripeGreeting
    };
    (peer_greeting) => {
        Admission::PeerGreeting
    };
}

macro_rules! delivery {
    (call) => {
        Delivery::Call
    };
    (post) => {
        Delivery::Post
    };
}

/// A handler's return type: calls with bulk in the reply may answer from device memory or
/// later ([`Outcome`]); every other call answers with its message.
macro_rules! handler_reply {
    (reply, $resp:ty) => { Outcome<$resp> };
    ($other:ident, $resp:ty) => { $resp };
}

macro_rules! into_outcome {
    (reply, $variant:ident, $x:expr) => {
        $x.map(Response::$variant)
    };
    ($other:ident, $variant:ident, $x:expr) => {
        Outcome::Reply(Response::$variant($x))
    };
}

macro_rules! opcodes {
    (
        <$lt:lifetime>
        $(
            $(#[$fmeta:meta])*
            $fam:ident $trait:ident {
                $( $(#[$meta:meta])* $code:literal $variant:ident $method:ident : $req:ty => $resp:ty , $bulk:ident , $delivery:ident $(, $admission:ident)? ; )*
            }
        )*
    ) => {
        /// Every operation of the protocol.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        #[repr(u16)]
        pub enum Opcode {
            $( $( $(#[$meta])* $variant = $code, )* )*
        }

        impl Opcode {
            /// Every opcode, in table order.
            pub const ALL: &'static [Opcode] = &[$( $(Opcode::$variant,)* )*];

            /// The opcode for a raw number.
            pub const fn from_u16(raw: u16) -> Option<Self> {
                match raw {
                    $( $( $code => Some(Self::$variant), )* )*
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
                    $( $( Self::$variant => stringify!($variant), )* )*
                }
            }

            /// The family the table lists it under (its number's high byte; a test checks).
            pub const fn family(self) -> Family {
                match self {
                    $( $( Self::$variant => Family::$fam, )* )*
                }
            }

            /// How its bulk data travels.
            pub const fn bulk(self) -> BulkWay {
                match self {
                    $( $( Self::$variant => bulk_way!($bulk), )* )*
                }
            }

            /// Whether the client may send it fire-and-forget.
            pub const fn delivery(self) -> Delivery {
                match self {
                    $( $( Self::$variant => delivery!($delivery), )* )*
                }
            }

            /// Whether a connection the worker does not trust yet may send it.
            pub const fn admission(self) -> Admission {
                match self {
                    $( $( Self::$variant => admission!($($admission)?), )* )*
                }
            }

            /// Most control bytes a request of this opcode can encode to.
            #[allow(clippy::extra_unused_lifetimes)] // names the lifetime `$req`/`$resp` mention
            pub fn max_request_len<$lt>(self) -> usize {
                match self {
                    $( $( Self::$variant => <$req as Message<$lt>>::MAX_CONTROL_LEN, )* )*
                }
            }

            /// Most control bytes a response of this opcode can encode to.
            #[allow(clippy::extra_unused_lifetimes)] // names the lifetime `$req`/`$resp` mention
            pub fn max_response_len<$lt>(self) -> usize {
                match self {
                    $( $( Self::$variant => <$resp as Message<$lt>>::MAX_CONTROL_LEN, )* )*
                }
            }

            /// Whether requests of this opcode carry a bulk section (from the message type;
            /// a test checks it agrees with [`Opcode::bulk`]).
            #[allow(clippy::extra_unused_lifetimes)] // names the lifetime `$req`/`$resp` mention
            pub fn request_has_bulk<$lt>(self) -> bool {
                match self {
                    $( $( Self::$variant => <$req as Message<$lt>>::HAS_BULK, )* )*
                }
            }

            /// Whether responses of this opcode carry a bulk section (from the message type).
            #[allow(clippy::extra_unused_lifetimes)] // names the lifetime `$req`/`$resp` mention
            pub fn response_has_bulk<$lt>(self) -> bool {
                match self {
                    $( $( Self::$variant => <$resp as Message<$lt>>::HAS_BULK, )* )*
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
            $( $( $variant($req), )* )*
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
            $( $( $variant($resp), )* )*
        }

        impl<$lt> Request<$lt> {
            /// Decodes a request by opcode from its control part and bulk section.
            pub fn parse(opcode: u16, control: &$lt [u8], bulk: &$lt [u8]) -> Result<Self, DecodeError> {
                let op = Opcode::from_u16(opcode).ok_or(DecodeError::UnknownOpcode { opcode })?;
                let mut cx = DecodeCx::new(control, bulk);
                let req = match op {
                    $( $( Opcode::$variant => Self::$variant(<$req as Message<$lt>>::decode(&mut cx)?), )* )*
                };
                cx.finish()?;
                Ok(req)
            }

            /// The request's opcode.
            pub fn opcode(&self) -> Opcode {
                match self {
                    $( $( Self::$variant(_) => Opcode::$variant, )* )*
                }
            }

            /// Encodes the control part (and registers bulk data) into `cx`.
            pub fn encode<'w>(&self, cx: &mut EncodeCx<'w, $lt>) -> Result<(), EncodeError> {
                match self {
                    $( $( Self::$variant(m) => m.encode(cx), )* )*
                }
            }

            /// A request of the given opcode built from unstructured bytes (tests, fuzzing).
            #[cfg(feature = "arbitrary")]
            pub fn arbitrary_for(op: Opcode, u: &mut arbitrary::Unstructured<$lt>) -> arbitrary::Result<Self> {
                use arbitrary::Arbitrary;
                Ok(match op {
                    $( $( Opcode::$variant => Self::$variant(<$req>::arbitrary(u)?), )* )*
                })
            }
        }

        impl<$lt> Response<$lt> {
            /// Decodes a success response for a request of `opcode`.
            pub fn parse(opcode: u16, control: &$lt [u8], bulk: &$lt [u8]) -> Result<Self, DecodeError> {
                let op = Opcode::from_u16(opcode).ok_or(DecodeError::UnknownOpcode { opcode })?;
                let mut cx = DecodeCx::new(control, bulk);
                let resp = match op {
                    $( $( Opcode::$variant => Self::$variant(<$resp as Message<$lt>>::decode(&mut cx)?), )* )*
                };
                cx.finish()?;
                Ok(resp)
            }

            /// The opcode of the request this answers.
            pub fn opcode(&self) -> Opcode {
                match self {
                    $( $( Self::$variant(_) => Opcode::$variant, )* )*
                }
            }

            /// Encodes the control part (and registers bulk data) into `cx`.
            pub fn encode<'w>(&self, cx: &mut EncodeCx<'w, $lt>) -> Result<(), EncodeError> {
                match self {
                    $( $( Self::$variant(m) => m.encode(cx), )* )*
                }
            }

            /// A response of the given opcode built from unstructured bytes (tests, fuzzing).
            #[cfg(feature = "arbitrary")]
            pub fn arbitrary_for(op: Opcode, u: &mut arbitrary::Unstructured<$lt>) -> arbitrary::Result<Self> {
                use arbitrary::Arbitrary;
                Ok(match op {
                    $( $( Opcode::$variant => Self::$variant(<$resp>::arbitrary(u)?), )* )*
                })
            }
        }

        /// One marker type per call, implementing [`Call`] (the client's typed calls).
        pub mod calls {
            $( $(
                $(#[$meta])*
                #[derive(Debug, Clone, Copy)]
                pub struct $variant;
            )* )*
        }

        // Outside `calls`, where the table's type names mean the wire messages.
        $( $(
            impl Call for calls::$variant {
                const OPCODE: Opcode = Opcode::$variant;
                const BULK: BulkWay = bulk_way!($bulk);
                const DELIVERY: Delivery = delivery!($delivery);
                type Request<$lt> = $req;
                type Reply<$lt> = $resp;
                fn wrap(req: Self::Request<'_>) -> Request<'_> {
                    Request::$variant(req)
                }
                fn unwrap(resp: Response<'_>) -> Option<Self::Reply<'_>> {
                    match resp {
                        Response::$variant(r) => Some(r),
                        _ => None,
                    }
                }
                fn reply(reply: Self::Reply<'_>) -> Response<'_> {
                    Response::$variant(reply)
                }
            }
        )* )*

        /// The client's typed calls: one method per opcode, sending the request (with its
        /// bulk data, as the table declares) and returning the typed reply. Implemented for
        /// every [`Caller`].
        #[allow(missing_docs)]
        pub trait Calls: Caller {
            $( $(
                $(#[$meta])*
                fn $method<$lt>(&$lt mut self, req: $req) -> Result<$resp, Self::Error> {
                    self.call::<calls::$variant>(req)
                }
            )* )*
        }

        impl<T: Caller + ?Sized> Calls for T {}

        $(
            $(#[$fmeta])*
            #[allow(missing_docs)]
            pub trait $trait: HandlerTypes {
                $( fn $method<$lt>(&$lt mut self, cx: &mut Self::Cx, req: $req) -> Result<handler_reply!($bulk, $resp), Self::Error>; )*
            }
        )*

        /// The worker's side of the table: every family's handler.
        pub trait Handler: $( $trait + )* HandlerTypes {}

        impl<T: $( $trait + )* HandlerTypes + ?Sized> Handler for T {}

        /// Calls the handler method of `req`'s opcode.
        pub fn dispatch<$lt, H: Handler + ?Sized>(handler: &$lt mut H, cx: &mut H::Cx, req: Request<$lt>) -> Result<Outcome<Response<$lt>>, H::Error> {
            match req {
                $( $( Request::$variant(r) => {
                    let reply = handler.$method(cx, r)?;
                    Ok(into_outcome!($bulk, $variant, reply))
                } )* )*
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
        let meta = crate::frame::FrameMeta { opcode: self.opcode().raw(), flags: crate::Flags::RESPONSE, request_id, credits: 0, aux };
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
    /// Session: handshake, authentication, liveness.
    Session SessionHandler {
        /// Handshake; must be the first request of a connection.
        0x0001 Hello hello: Hello<'a> => Welcome<'a>, none, call, greeting;
        /// Answer to WELCOME's authentication challenge.
        0x0002 Authenticate authenticate: Authenticate<'a> => Empty, none, call, authentication;
        /// Liveness and round-trip probe.
        0x0003 Ping ping: Ping<'a> => Pong<'a>, none, call;
        /// Orderly end of the session (the worker frees everything it holds).
        0x0004 Goodbye goodbye: Empty => Empty, none, call;
        /// On a new authenticated connection: continues a session whose connection broke
        /// (`features::RESUME`).
        0x0005 Resume resume: Resume<'a> => Resumed, none, call;
        /// Issues the secret a second connection presents to become this session's
        /// callback channel (stream callbacks, `hipLaunchHostFunc`).
        0x0010 CallbackChannelOpen callback_channel_open: Empty => CallbackTicket, none, call;
        /// First call of a second, authenticated connection: binds it to the session that
        /// issued the ticket as that session's callback channel.
        0x0011 CallbackChannelAttach callback_channel_attach: CallbackTicket => Empty, none, call;
        /// On the callback channel: answers the callback just run, asks for the next.
        0x0012 CallbackNext callback_next: CallbackNext => CallbackRun, none, call;
        /// Sent by the worker only (request id 0, before the reply of a synchronizing call):
        /// what kernels printed since the last one. A client's request is refused.
        0x0013 KernelOutput kernel_output: Empty => KernelOutputText<'a>, reply, call;
        /// Asks for stripe connections for large copies (`features::STRIPED_BULK`).
        0x0014 StripesOpen stripes_open: StripesOpen => StripesGrant<'a>, none, call;
        /// First request of a stripe connection: joins it to its session. Allowed before
        /// authentication (the join key is the proof).
        0x0015 StripeJoin stripe_join: StripeJoin<'a> => Empty, none, call, stripe_greeting;
        /// One chunk of a striped copy; valid only on a joined stripe connection (the worker
        /// sends a download's chunks as response frames carrying the same message).
        0x0016 StripeChunk stripe_chunk: StripeChunk<'a> => Empty, request, post;
        /// After WELCOME (before AUTHENTICATE too): the client shows it runs on the worker's
        /// machine and learns the shared-memory socket to move to.
        0x0018 SameHostOffer same_host_offer: SameHostOffer<'a> => SameHostAnswer<'a>, none, call, after_greeting;
        /// The session's place in a client's device list of several workers: the client's
        /// global index of this worker's device 0. Device ordinals of later requests and
        /// replies are global (`docs/CLIENT.md`, "Several workers").
        0x0019 SessionDeviceBase session_device_base: DeviceBase => Empty, none, call;
        /// The session's devices as the client numbers them after its visibility variables
        /// (`HIP_VISIBLE_DEVICES`...): which of this worker's devices the client sees, each
        /// with its client ordinal; the others are hidden from the session (`docs/CLIENT.md`,
        /// "Visible devices").
        0x001d SessionDeviceMap session_device_map: DeviceMap<'a> => Empty, none, call;
        /// Source side of a copy between workers: keeps a range for one fetch under a grant.
        0x001a TransferOffer transfer_offer: TransferOffer<'a> => Empty, none, post;
        /// Destination side of a copy between workers: fetches a grant from the source worker
        /// and writes its bytes in stream order.
        0x001b TransferPull transfer_pull: TransferPull<'a> => Empty, none, post;
        /// Worker to worker, first and only request of a transfer connection: the granted
        /// bytes. Allowed before authentication (the grant's secret is the proof).
        0x001c TransferFetch transfer_fetch: TransferFetch<'a> => TransferData<'a>, reply, call, peer_greeting;
    }

    /// Device queries and control.
    Device DeviceHandler {
        /// Driver and runtime versions.
        0x0101 GetVersions get_versions: Empty => Versions<'a>, none, call;
        /// `hipGetDeviceCount`.
        0x0102 GetDeviceCount get_device_count: Empty => DeviceCount, none, call;
        /// `hipGetDeviceProperties` (the client also derives attributes from it).
        0x0103 GetDeviceProperties get_device_properties: DeviceRef => DeviceProperties, none, call;
        /// `hipDeviceSynchronize`.
        0x0104 DeviceSynchronize device_synchronize: DeviceRef => Empty, none, call;
        /// `hipDeviceReset`: frees everything the session holds on the device.
        0x0105 DeviceReset device_reset: DeviceRef => Empty, none, call;
        /// `hipMemGetInfo`.
        0x0106 MemGetInfo mem_get_info: DeviceRef => MemInfo, none, call;
        /// `hipDeviceGetStreamPriorityRange`.
        0x0107 StreamPriorityRange stream_priority_range: DeviceRef => PriorityRange, none, call;
        /// `hipDeviceGetLimit`.
        0x0108 DeviceGetLimit device_get_limit: LimitRef => LimitValue, none, call;
        /// `hipDeviceSetLimit`; answers the value now in effect.
        0x0109 DeviceSetLimit device_set_limit: SetLimit => LimitValue, none, call;
        /// `hipDeviceCanAccessPeer`.
        0x010a DeviceCanAccessPeer device_can_access_peer: PeerQuery => PeerAccess, none, call;
        /// `hipDeviceEnablePeerAccess` / `hipDeviceDisablePeerAccess`.
        0x010b DeviceSetPeerAccess device_set_peer_access: PeerAccessChange => Empty, none, call;
        /// `hipDeviceGetAttribute` for attributes the properties do not carry.
        0x0120 DeviceGetAttribute device_get_attribute: AttributeQuery => AttributeValue, none, call;
        /// `hipDeviceGetP2PAttribute`, `hipExtGetLinkTypeAndHopCount`.
        0x0121 DeviceGetPeerAttribute device_get_peer_attribute: PeerAttributeQuery => AttributeValue, none, call;
    }

    /// Allocation, copies, memset.
    Memory MemoryHandler {
        /// `hipMalloc`.
        0x0201 Malloc malloc: Malloc => Allocation, none, call;
        /// `hipFree`.
        0x0202 Free free: Free => Empty, none, call;
        /// Host-to-device copy (any API that writes device memory from the host).
        0x0203 MemcpyHtoD memcpy_htod: MemcpyHtoD<'a> => Empty, to_device, post;
        /// Device-to-host copy.
        0x0204 MemcpyDtoH memcpy_dtoh: MemcpyDtoH => MemcpyData<'a>, reply, call;
        /// Device-to-device copy.
        0x0205 MemcpyDtoD memcpy_dtod: MemcpyDtoD => Empty, none, post;
        /// `hipMemset*`.
        0x0206 Memset memset: Memset => Empty, none, post;
        /// Host-to-device 2D copy (rows packed in the bulk section).
        0x0207 MemcpyHtoD2D memcpy_htod_2d: MemcpyHtoD2D<'a> => Empty, request, post;
        /// Device-to-host 2D copy (rows answered packed).
        0x0208 MemcpyDtoH2D memcpy_dtoh_2d: MemcpyDtoH2D => MemcpyData<'a>, reply, call;
        /// Device-to-device 2D copy.
        0x0209 MemcpyDtoD2D memcpy_dtod_2d: MemcpyDtoD2D => Empty, none, post;
        /// `hipMemcpyPeer*`.
        0x020a MemcpyPeer memcpy_peer: MemcpyPeer => Empty, none, post;
        /// `hipMallocAsync`.
        0x020b MallocAsync malloc_async: MallocAsync => AsyncAllocation, none, call;
        /// `hipFreeAsync`.
        0x020c FreeAsync free_async: FreeAsync => Empty, none, post;
        /// `hipMemset2D*`, `hipMemset3D*`, `hipMemsetD2D*`: one pitched fill.
        0x0210 MemsetPitched memset_pitched: MemsetPitched => Empty, none, post;
        /// Reserves the session's client allocation range on a device (`CLIENT_ALLOCATION`).
        0x0240 ClientRangeReserve client_range_reserve: DeviceRef => ClientRange, none, call;
        /// `hipMalloc` at a client-chosen address (posted; a call when the client must know).
        0x0241 MallocAt malloc_at: MallocAt => Empty, none, post;
        /// A host-to-device copy named by its content hash (`features::CONTENT_STORE`).
        0x0250 MemcpyHtoDByHash memcpy_htod_by_hash: MemcpyHtoDByHash<'a> => ContentFound, none, call;
        /// Keeps a copied range as the tenant's content (`features::CONTENT_STORE`).
        0x0251 ContentRemember content_remember: ContentRemember<'a> => Empty, none, post;
        /// A host-to-device copy sent compressed (`features::COMPRESSED_BULK`).
        0x0252 MemcpyHtoDCompressed memcpy_htod_compressed: MemcpyHtoDCompressed<'a> => Empty, request, post;
        /// `hipFree` without waiting for the reply (memory the client placed itself).
        0x0242 FreeAt free_at: Free => Empty, none, post;
        /// [`ClientRangeReserve`](Opcode::ClientRangeReserve) at a client-chosen address and
        /// at most a given length (a device list of several workers).
        0x0243 ClientRangeReserveAt client_range_reserve_at: ClientRangeAt => ClientRange, none, call;
        /// Host-to-device copy whose bytes travel on the session's stripes.
        0x0220 MemcpyHtoDStriped memcpy_htod_striped: MemcpyHtoDStriped => Empty, none, call;
        /// Device-to-host copy whose bytes travel back on the session's stripes.
        0x0221 MemcpyDtoHStriped memcpy_dtoh_striped: MemcpyDtoHStriped => Empty, none, call;
        /// `hipHostMalloc` on a same-host connection: shared registered host memory.
        0x0230 HostAllocShared host_alloc_shared: HostAllocShared => SharedRegion, none, call;
        /// `hipHostFree` of shared registered host memory.
        0x0231 HostFreeShared host_free_shared: HostFreeShared => Empty, none, call;
        /// Host-to-device copy from shared registered host memory (one DMA, no bulk).
        0x0232 MemcpyHtoDShared memcpy_htod_shared: MemcpyHtoDShared => Empty, none, call;
        /// Device-to-host copy into shared registered host memory (one DMA, no bulk).
        0x0233 MemcpyDtoHShared memcpy_dtoh_shared: MemcpyDtoHShared => Empty, none, call;
    }

    /// Streams.
    Stream StreamHandler {
        /// `hipStreamCreate*`.
        0x0301 StreamCreate stream_create: StreamCreate => StreamCreated, none, call;
        /// `hipStreamDestroy` (posted for client-chosen handles the client knows are live).
        0x0302 StreamDestroy stream_destroy: StreamRef => Empty, none, post;
        /// `hipStreamSynchronize`.
        0x0303 StreamSynchronize stream_synchronize: StreamRef => Empty, none, call;
        /// `hipStreamQuery`.
        0x0304 StreamQuery stream_query: StreamRef => QueryResult, none, call;
        /// `hipStreamWaitEvent`.
        0x0305 StreamWaitEvent stream_wait_event: StreamWaitEvent => Empty, none, post;
        /// `hipStreamGetFlags` / `hipStreamGetPriority` / `hipStreamGetDevice` of a created stream.
        0x0306 StreamGetInfo stream_get_info: StreamRef => StreamInfo, none, call;
        /// `hipStreamWaitValue*`, `hipStreamWriteValue*`, `hipStreamBatchMemOp`.
        0x0310 StreamMemOp stream_mem_op: StreamMemOp => Empty, none, call;
        /// `hipStreamAddCallback`, `hipLaunchHostFunc`: the client runs the callback.
        0x0311 StreamAddCallback stream_add_callback: StreamAddCallback => Empty, none, call;
        /// `hipStreamCreate*` with a client-chosen handle (`CLIENT_ALLOCATION`).
        0x03f0 StreamCreateAt stream_create_at: StreamCreateAt => Empty, none, post;
    }

    /// Events.
    Event EventHandler {
        /// `hipEventCreate*`.
        0x0401 EventCreate event_create: EventCreate => EventCreated, none, call;
        /// `hipEventRecord`.
        0x0402 EventRecord event_record: EventRecord => Empty, none, post;
        /// `hipEventSynchronize`.
        0x0403 EventSynchronize event_synchronize: EventRef => Empty, none, call;
        /// `hipEventQuery`.
        0x0404 EventQuery event_query: EventRef => QueryResult, none, call;
        /// `hipEventElapsedTime`.
        0x0405 EventElapsedTime event_elapsed_time: EventElapsed => ElapsedTime, none, call;
        /// `hipEventDestroy` (posted for client-chosen handles the client knows are live).
        0x0406 EventDestroy event_destroy: EventRef => Empty, none, post;
        /// `hipEventCreate*` with a client-chosen handle (`CLIENT_ALLOCATION`).
        0x04f0 EventCreateAt event_create_at: EventCreateAt => Empty, none, post;
    }

    /// Modules, functions, launches.
    Module ModuleHandler {
        /// `hipModuleLoadData*`, `hipModuleLoad`, `__hipRegisterFatBinary`.
        0x0501 ModuleLoad module_load: ModuleLoad<'a> => ModuleLoaded, request, call;
        /// `hipModuleUnload`.
        0x0502 ModuleUnload module_unload: ModuleRef => Empty, none, post;
        /// `hipModuleGetFunction`, with the parameter layout.
        0x0503 ModuleGetFunction module_get_function: SymbolLookup<'a> => FunctionInfo<'a>, none, call;
        /// `hipModuleGetGlobal`.
        0x0504 ModuleGetGlobal module_get_global: SymbolLookup<'a> => GlobalInfo, none, call;
        /// `hipModuleLaunchKernel`, `hipLaunchKernel`, `<<<>>>`.
        0x0505 LaunchKernel launch_kernel: LaunchKernel<'a> => Empty, none, post;
        /// `hipFuncGetAttributes` / `hipFuncGetAttribute`.
        0x0506 FuncGetAttributes func_get_attributes: FunctionRef => FuncAttributes, none, call;
        /// `hipModuleOccupancyMaxActiveBlocksPerMultiprocessor`.
        0x0507 OccupancyMaxActiveBlocks occupancy_max_active_blocks: OccupancyQuery => Occupancy, none, call;
        /// `hipModuleOccupancyMaxPotentialBlockSize`.
        0x0508 OccupancyMaxPotentialBlockSize occupancy_max_potential_block_size: BlockSizeQuery => BlockSize, none, call;
        /// `hipFuncSetAttribute`.
        0x0509 FuncSetAttribute func_set_attribute: FuncSetAttribute => Empty, none, call;
        /// `hipModuleGetFunctionCount`, `hipLibraryGetKernelCount`, `hipLibraryEnumerateKernels`.
        0x0510 ModuleFunctionNames module_function_names: ModuleRef => FunctionNames<'a>, none, call;
        /// `hipLaunchCooperativeKernel*`, `hipModuleLaunchCooperativeKernel*`, launches with
        /// `hipLaunchAttributeCooperative`: every block resident at once. A call, so that a grid
        /// too large to be co-resident is refused at once, as AMD's runtime refuses it.
        0x0511 LaunchCooperative launch_cooperative: LaunchKernel<'a> => Empty, none, call;
        /// A module load named by its image's content hash (`features::CONTENT_STORE`).
        0x0512 ModuleLoadByHash module_load_by_hash: ModuleLoadByHash<'a> => ModuleFoundByHash, none, call;
        /// A module load whose image the worker keeps as the tenant's content (`features::CONTENT_STORE`).
        0x0513 ModuleLoadKeep module_load_keep: ModuleLoadKeep<'a> => ModuleLoaded, request, call;
        /// `hipModuleLoadData*` without a round trip (`CLIENT_ALLOCATION`): the client names
        /// the module's handle; a failed load is the connection's deferred error.
        0x0514 ModuleLoadAt module_load_at: ModuleLoadAt<'a> => Empty, request, post;
        /// `hipModuleGetFunction` without a round trip (`CLIENT_ALLOCATION`): the client names
        /// the function's handle and asks for the layout when a launch needs it.
        0x0515 ModuleGetFunctionAt module_get_function_at: FunctionAt<'a> => Empty, none, post;
    }

    /// Runtime compilation.
    Rtc RtcHandler {
        /// `hiprtcCompileProgram`, compiled by the worker for its device.
        0x0601 RtcCompile rtc_compile: RtcCompile<'a> => RtcCompiled<'a>, reply, call;
        /// A piece of a program too large for one `RtcCompile` (a device source of megabytes),
        /// kept by the session for the next `RtcCompileStaged`.
        0x0602 RtcStage rtc_stage: RtcStage<'a> => Empty, request, call;
        /// `RtcCompile` of the program staged by `RtcStage`.
        0x0603 RtcCompileStaged rtc_compile_staged: RtcCompileStaged<'a> => RtcCompiled<'a>, reply, call;
        /// `hipLinkComplete`: the inputs linked by the worker; the image stays with the session.
        0x0610 RtcLink rtc_link: RtcLink<'a> => RtcLinked<'a>, request, call;
        /// The image of the latest successful `RtcLink`, taken.
        0x0611 RtcLinkedImage rtc_linked_image: Empty => LinkedImage<'a>, reply, call;
    }

    /// Graphs: graphs, nodes and executable graphs (session objects).
    Graph GraphHandler {
        /// `hipGraphCreate`.
        0x0701 GraphCreate graph_create: GraphCreate => GraphRef, none, call;
        /// `hipGraphDestroy`.
        0x0702 GraphDestroy graph_destroy: GraphRef => Empty, none, call;
        /// `hipGraphAdd{Empty,Kernel,Memset,Memcpy}Node*`.
        0x0703 GraphAddNode graph_add_node: GraphAddNode<'a> => GraphNodeRef, none, call;
        /// `hipGraphAddDependencies`.
        0x0704 GraphAddDependencies graph_add_dependencies: GraphEdges<'a> => Empty, none, call;
        /// `hipGraphRemoveDependencies`.
        0x0705 GraphRemoveDependencies graph_remove_dependencies: GraphEdges<'a> => Empty, none, call;
        /// `hipGraphGetNodes`.
        0x0706 GraphGetNodes graph_get_nodes: GraphRef => GraphNodeList<'a>, none, call;
        /// `hipGraphGetRootNodes`.
        0x0707 GraphGetRootNodes graph_get_root_nodes: GraphRef => GraphNodeList<'a>, none, call;
        /// `hipGraphGetEdges`.
        0x0708 GraphGetEdges graph_get_edges: GraphRef => GraphEdgeList<'a>, none, call;
        /// `hipGraphNodeGetType`.
        0x0709 GraphNodeGetType graph_node_get_type: GraphNodeRef => GraphNodeType, none, call;
        /// `hipGraphKernelNodeGetParams`.
        0x070a GraphKernelNodeGetParams graph_kernel_node_get_params: GraphNodeRef => GraphKernelParams<'a>, none, call;
        /// `hipGraphKernelNodeSetParams`.
        0x070b GraphKernelNodeSetParams graph_kernel_node_set_params: GraphKernelSetParams<'a> => Empty, none, call;
        /// `hipGraphInstantiate`, `hipGraphInstantiateWithFlags`.
        0x070c GraphInstantiate graph_instantiate: GraphInstantiate => GraphExecRef, none, call;
        /// `hipGraphLaunch`: one message per replay.
        0x070d GraphLaunch graph_launch: GraphLaunch => Empty, none, post;
        /// `hipGraphExecDestroy`.
        0x070e GraphExecDestroy graph_exec_destroy: GraphExecRef => Empty, none, call;
        /// `hipGraphClone`.
        0x070f GraphClone graph_clone: GraphRef => GraphRef, none, call;
        /// `hipGraphAddMemcpyNode` (device memory and arrays, 3D).
        0x0710 GraphAddCopyNode graph_add_copy_node: GraphAddCopyNode<'a> => GraphNodeRef, none, call;
        /// `hipGraphNodeGetDependencies`, `hipGraphNodeGetDependentNodes`.
        0x0711 GraphNodeNeighbours graph_node_neighbours: GraphNodeNeighbours => GraphNodeList<'a>, none, call;
        /// `hipStreamBeginCapture*`, `hipStreamBeginCaptureToGraph`.
        0x0730 StreamBeginCapture stream_begin_capture: StreamBeginCapture<'a> => Empty, none, call;
        /// `hipStreamEndCapture*`: the captured graph.
        0x0731 StreamEndCapture stream_end_capture: StreamEndCapture => GraphRef, none, call;
        /// `hipStreamIsCapturing*`, `hipStreamGetCaptureInfo*` (v1, v2).
        0x0732 StreamCaptureQuery stream_capture_query: StreamCaptureQuery => CaptureInfo<'a>, none, call;
        /// `hipStreamUpdateCaptureDependencies`.
        0x0733 StreamUpdateCaptureDependencies stream_update_capture_dependencies: StreamUpdateCaptureDependencies<'a> => Empty, none, call;
        /// HIP's rule for calls forbidden during capture (`hipMalloc`, `hipFree`, ...).
        0x0734 CaptureCheck capture_check: CaptureCheck => Empty, none, call;
        /// `hipGraphAddEventRecordNode`, `hipGraphAddEventWaitNode`.
        0x0740 GraphAddEventNode graph_add_event_node: GraphAddEventNode<'a> => GraphNodeRef, none, call;
        /// `hipGraphEventRecordNodeGetEvent`, `hipGraphEventWaitNodeGetEvent`.
        0x0741 GraphEventNodeGetEvent graph_event_node_get_event: GraphEventNodeQuery => GraphNodeEvent, none, call;
        /// `hipGraphEventRecordNodeSetEvent`, `hipGraphEventWaitNodeSetEvent`.
        0x0742 GraphEventNodeSetEvent graph_event_node_set_event: GraphEventNodeSet => Empty, none, call;
        /// `hipGraphAddChildGraphNode` (the child is cloned into the node).
        0x0743 GraphAddChildNode graph_add_child_node: GraphAddChildNode<'a> => GraphNodeRef, none, call;
        /// `hipGraphChildGraphNodeGetGraph`: the graph the node owns.
        0x0744 GraphChildNodeGetGraph graph_child_node_get_graph: GraphNodeRef => GraphRef, none, call;
        /// `hipGraphDestroyNode`.
        0x0745 GraphDestroyNode graph_destroy_node: GraphNodeRef => Empty, none, call;
        /// `hipGraphNodeFindInClone`.
        0x0746 GraphNodeFindInClone graph_node_find_in_clone: GraphNodeFindInClone => GraphNodeRef, none, call;
        /// `hipGraphMemsetNodeGetParams`.
        0x0747 GraphMemsetNodeGetParams graph_memset_node_get_params: GraphNodeRef => GraphMemsetParams, none, call;
        /// `hipGraphMemsetNodeSetParams`.
        0x0748 GraphMemsetNodeSetParams graph_memset_node_set_params: GraphMemsetNodeSet => Empty, none, call;
        /// `hipGraphMemcpyNodeGetParams`, `hipDrvGraphMemcpyNodeGetParams`.
        0x0749 GraphMemcpyNodeGetParams graph_memcpy_node_get_params: GraphNodeRef => GraphCopyParams, none, call;
        /// `hipGraphMemcpyNodeSetParams*`, `hipDrvGraphMemcpyNodeSetParams`.
        0x074a GraphMemcpyNodeSetParams graph_memcpy_node_set_params: GraphCopyNodeSet => Empty, none, call;
        /// `hipGraphHostNodeGetParams`.
        0x074b GraphHostNodeGetParams graph_host_node_get_params: GraphNodeRef => GraphHostToken, none, call;
        /// `hipGraphHostNodeSetParams`.
        0x074c GraphHostNodeSetParams graph_host_node_set_params: GraphHostNodeSet => Empty, none, call;
        /// `hipGraphKernelNodeGetAttribute`.
        0x074d GraphKernelNodeGetAttribute graph_kernel_node_get_attribute: GraphKernelAttrQuery => GraphKernelAttrValue, none, call;
        /// `hipGraphKernelNodeSetAttribute`.
        0x074e GraphKernelNodeSetAttribute graph_kernel_node_set_attribute: GraphKernelAttrSet => Empty, none, call;
        /// `hipGraphKernelNodeCopyAttributes`.
        0x074f GraphKernelNodeCopyAttributes graph_kernel_node_copy_attributes: GraphKernelAttrCopy => Empty, none, call;
        /// `hipGraphNodeSetParams` of a child graph node.
        0x0750 GraphChildNodeSetParams graph_child_node_set_params: GraphChildNodeSet => Empty, none, call;
        /// `hipGraphAddMemAllocNode`.
        0x0751 GraphAddMemAllocNode graph_add_mem_alloc_node: GraphAddMemAllocNode<'a> => GraphMemAllocNode, none, call;
        /// `hipGraphAddMemFreeNode`, `hipDrvGraphAddMemFreeNode`.
        0x0752 GraphAddMemFreeNode graph_add_mem_free_node: GraphAddMemFreeNode<'a> => GraphNodeRef, none, call;
        /// `hipGraphMemAllocNodeGetParams`.
        0x0753 GraphMemAllocNodeGetParams graph_mem_alloc_node_get_params: GraphNodeRef => GraphMemAllocParams, none, call;
        /// `hipGraphMemFreeNodeGetParams`.
        0x0754 GraphMemFreeNodeGetParams graph_mem_free_node_get_params: GraphNodeRef => GraphMemFreeParams, none, call;
        /// `hipDeviceGraphMemTrim`.
        0x0755 GraphMemTrim graph_mem_trim: GraphMemDevice => Empty, none, call;
        /// `hipDeviceGetGraphMemAttribute`, `hipDeviceSetGraphMemAttribute`.
        0x0756 GraphMemAttribute graph_mem_attribute: GraphMemAttrQuery => GraphMemAttrValue, none, call;
        /// `hipGraphAddBatchMemOpNode`.
        0x0757 GraphAddBatchMemOpNode graph_add_batch_mem_op_node: GraphAddBatchMemOpNode<'a> => GraphNodeRef, none, call;
        /// `hipGraphBatchMemOpNodeGetParams`.
        0x0758 GraphBatchMemOpNodeGetParams graph_batch_mem_op_node_get_params: GraphNodeRef => GraphBatchMemOps<'a>, none, call;
        /// `hipGraphBatchMemOpNodeSetParams`.
        0x0759 GraphBatchMemOpNodeSetParams graph_batch_mem_op_node_set_params: GraphBatchMemOpNodeSet<'a> => Empty, none, call;
    }

    /// Executable graphs after instantiation (session objects of the Graph family).
    Graph GraphExecHandler {
        /// `hipGraphExec{Kernel,Memset,Memcpy,Host}NodeSetParams*`, `hipGraphExecNodeSetParams`.
        0x0760 GraphExecSetNode graph_exec_set_node: GraphExecSetNode<'a> => Empty, none, call;
        /// `hipGraphExecMemcpyNodeSetParams` (device memory and arrays, 3D).
        0x0761 GraphExecSetCopyNode graph_exec_set_copy_node: GraphExecSetCopyNode => Empty, none, call;
        /// `hipGraphExecUpdate`.
        0x0762 GraphExecUpdate graph_exec_update: GraphExecUpdate => GraphExecUpdated, none, call;
        /// `hipGraphNodeSetEnabled`.
        0x0763 GraphNodeSetEnabled graph_node_set_enabled: GraphNodeSetEnabled => Empty, none, call;
        /// `hipGraphNodeGetEnabled`.
        0x0764 GraphNodeGetEnabled graph_node_get_enabled: GraphExecNodeRef => GraphNodeEnabled, none, call;
        /// `hipGraphUpload`, `hipGraphInstantiateWithParams` with the upload flag.
        0x0765 GraphUpload graph_upload: GraphUpload => Empty, none, call;
        /// `hipGraphExecGetFlags`.
        0x0766 GraphExecGetFlags graph_exec_get_flags: GraphExecRef => GraphExecFlags, none, call;
        /// `hipGraphExecEventRecordNodeSetEvent`, `hipGraphExecEventWaitNodeSetEvent`.
        0x0767 GraphExecSetEventNode graph_exec_set_event_node: GraphExecSetEventNode => Empty, none, call;
        /// `hipGraphExecChildGraphNodeSetParams`.
        0x0768 GraphExecSetChildNode graph_exec_set_child_node: GraphExecSetChildNode => Empty, none, call;
        /// `hipGraphExecBatchMemOpNodeSetParams`.
        0x0769 GraphExecSetBatchMemOpNode graph_exec_set_batch_mem_op_node: GraphExecSetBatchMemOpNode<'a> => Empty, none, call;
    }

    /// Arrays, mipmapped arrays and the copies that name them.
    Array ArrayHandler {
        /// `hipArray3DCreate`, `hipMallocArray`, `hipMipmappedArrayCreate`... (`levels > 0`: mipmapped).
        0x0801 ArrayCreate array_create: ArrayCreate => ArrayCreated, none, call;
        /// `hipArrayDestroy` / `hipFreeArray`.
        0x0802 ArrayDestroy array_destroy: ArrayRef => Empty, none, call;
        /// `hipMipmappedArrayDestroy` / `hipFreeMipmappedArray`.
        0x0803 MipmapDestroy mipmap_destroy: ArrayRef => Empty, none, call;
        /// `hipMipmappedArrayGetLevel` / `hipGetMipmappedArrayLevel`.
        0x0804 MipmapGetLevel mipmap_get_level: MipmapLevel => ArrayCreated, none, call;
        /// Host-to-array/device 3D copy (the box packed in the bulk section).
        0x0805 Copy3DFromHost copy_3d_from_host: Copy3DFromHost<'a> => Empty, request, post;
        /// Array/device-to-host 3D copy (the box answered packed).
        0x0806 Copy3DToHost copy_3d_to_host: Copy3DToHost => MemcpyData<'a>, reply, call;
        /// Array/device-to-array/device 3D copy.
        0x0807 Copy3D copy_3d: Copy3D => Empty, none, post;
        /// `hipCreateTextureObject` / `hipTexObjectCreate`.
        0x0808 TextureCreate texture_create: TextureCreate => TextureCreated, none, call;
        /// `hipDestroyTextureObject` / `hipTexObjectDestroy` (`handle`: the texture object).
        0x0809 TextureDestroy texture_destroy: ArrayRef => Empty, none, call;
    }

    /// Stream-ordered memory pools.
    Pool PoolHandler {
        /// `hipMemPoolCreate`.
        0x0901 PoolCreate pool_create: PoolCreate => PoolRef, none, call;
        /// `hipMemPoolDestroy`.
        0x0902 PoolDestroy pool_destroy: PoolRef => Empty, none, call;
        /// `hipDeviceGetDefaultMemPool` / `hipDeviceGetMemPool`.
        0x0903 DeviceGetPool device_get_pool: DevicePoolQuery => PoolRef, none, call;
        /// `hipDeviceSetMemPool`.
        0x0904 DeviceSetPool device_set_pool: DeviceSetPool => Empty, none, call;
        /// `hipMallocFromPoolAsync`, `hipMallocAsync` (the current pool).
        0x0905 MallocFromPool malloc_from_pool: MallocFromPool => AsyncAllocation, none, call;
        /// `hipMemPoolGetAttribute`.
        0x0906 PoolGetAttribute pool_get_attribute: PoolAttrQuery => PoolAttrValue, none, call;
        /// `hipMemPoolSetAttribute`.
        0x0907 PoolSetAttribute pool_set_attribute: PoolSetAttr => Empty, none, call;
        /// `hipMemPoolTrimTo`.
        0x0908 PoolTrimTo pool_trim_to: PoolTrim => Empty, none, call;
        /// `hipMemPoolSetAccess` (one device per request).
        0x0909 PoolSetAccess pool_set_access: PoolSetAccess => Empty, none, call;
        /// `hipMemPoolGetAccess`.
        0x090a PoolGetAccess pool_get_access: PoolAccessQuery => AccessFlags, none, call;
        /// `hipMemPoolExportToShareableHandle`.
        0x090b PoolExport pool_export: PoolExport => ShareableToken, none, call;
        /// `hipMemPoolImportFromShareableHandle`.
        0x090c PoolImport pool_import: PoolImport => PoolRef, none, call;
        /// `hipMemPoolExportPointer`.
        0x090d PoolExportPointer pool_export_pointer: VmmAddress => ShareableToken, none, call;
        /// `hipMemPoolImportPointer`.
        0x090e PoolImportPointer pool_import_pointer: PoolImportPointer => AsyncAllocation, none, call;
    }

    /// Virtual memory management.
    Vmm VmmHandler {
        /// `hipMemGetAllocationGranularity`.
        0x0a01 VmmGetGranularity vmm_get_granularity: VmmGranularityQuery => VmmGranularity, none, call;
        /// `hipMemAddressReserve`.
        0x0a02 AddressReserve address_reserve: AddressReserve => VmmAddress, none, call;
        /// `hipMemAddressFree`.
        0x0a03 AddressFree address_free: VmmSpan => Empty, none, call;
        /// `hipMemCreate`.
        0x0a04 MemCreate mem_create: MemCreate => PhysicalRef, none, call;
        /// `hipMemRelease`.
        0x0a05 MemRelease mem_release: PhysicalRef => Empty, none, call;
        /// `hipMemMap`.
        0x0a06 MemMap mem_map: MemMap => Empty, none, call;
        /// `hipMemUnmap`.
        0x0a07 MemUnmap mem_unmap: VmmSpan => Empty, none, call;
        /// `hipMemSetAccess` (one device per request).
        0x0a08 MemSetAccess mem_set_access: MemSetAccess => Empty, none, call;
        /// `hipMemGetAccess`.
        0x0a09 MemGetAccess mem_get_access: MemAccessQuery => AccessFlags, none, call;
        /// `hipMemGetAllocationPropertiesFromHandle`.
        0x0a0a MemGetProperties mem_get_properties: PhysicalRef => PhysicalInfo, none, call;
        /// `hipMemRetainAllocationHandle`.
        0x0a0b MemRetain mem_retain: VmmAddress => PhysicalRef, none, call;
        /// `hipMemExportToShareableHandle`.
        0x0a0c MemExport mem_export: MemExport => ShareableToken, none, call;
        /// `hipMemImportFromShareableHandle`.
        0x0a0d MemImport mem_import: MemImport => PhysicalRef, none, call;
    }

    /// Inter-process sharing between sessions of one worker.
    Ipc IpcHandler {
        /// `hipIpcGetMemHandle`.
        0x0b01 IpcGetMemHandle ipc_get_mem_handle: IpcGetMemHandle => IpcMemExported, none, call;
        /// `hipIpcOpenMemHandle`.
        0x0b02 IpcOpenMemHandle ipc_open_mem_handle: IpcOpenMemHandle => IpcMemOpened, none, call;
        /// `hipIpcCloseMemHandle`.
        0x0b03 IpcCloseMemHandle ipc_close_mem_handle: IpcMemRef => Empty, none, call;
        /// `hipIpcGetEventHandle` (an event created with `hipEventInterprocess`).
        0x0b04 IpcGetEventHandle ipc_get_event_handle: EventRef => IpcEventExported, none, call;
        /// `hipIpcOpenEventHandle`: a new event handle of this session.
        0x0b05 IpcOpenEventHandle ipc_open_event_handle: IpcOpenEventHandle => EventCreated, none, call;
    }

    /// Managed memory and device-visible host memory.
    Managed ManagedHandler {
        /// `hipMallocManaged`, `hipHostRegister`, `hipHostMalloc(hipHostMallocMapped)`.
        0x0c01 ManagedAlloc managed_alloc: ManagedAlloc => ManagedAllocation, none, call;
        /// Frees a managed or mapped allocation.
        0x0c02 ManagedFree managed_free: ManagedFree => Empty, none, call;
        /// Pages the client's CPU changed, written before the requests that follow.
        0x0c03 ManagedPush managed_push: ManagedPush<'a> => Empty, request, post;
        /// Device pages changed since the client last saw them.
        0x0c04 ManagedPull managed_pull: ManagedPull => ManagedPages<'a>, reply, call;
    }

    /// BLAS (hipBLAS) run by the worker's BLAS library.
    Blas BlasHandler {
        /// `hipblasCreate`: a handle of the session on the client's current device.
        0x0d01 BlasCreate blas_create: BlasCreate => BlasHandle, none, call;
        /// `hipblasDestroy`.
        0x0d02 BlasDestroy blas_destroy: BlasHandle => Empty, none, call;
        /// A routine whose results stay in device memory, queued on its stream.
        0x0d03 BlasLaunch blas_launch: BlasOp => Empty, none, post;
        /// A reduction whose result goes to host memory (host pointer mode): answered.
        0x0d04 BlasReduce blas_reduce: BlasOp => BlasResult, none, call;
    }
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

    /// The table's bulk declaration agrees with the message types, and only calls whose reply
    /// the client can do without are declared fire-and-forget.
    #[test]
    fn declared_bulk_and_delivery_agree_with_the_messages() {
        for op in Opcode::ALL {
            let (req, resp) = (op.request_has_bulk(), op.response_has_bulk());
            match op.bulk() {
                BulkWay::None => assert!(!req && !resp, "{op}"),
                BulkWay::Request | BulkWay::RequestToDevice => assert!(req && !resp, "{op}"),
                BulkWay::Reply => assert!(!req && resp, "{op}"),
            }
            if op.delivery() == Delivery::Post {
                assert_ne!(op.bulk(), BulkWay::Reply, "{op}: a posted call's reply bulk would be lost");
            }
        }
    }

    /// Only the handshake's calls are admitted before trust, each answered, without bulk (the
    /// worker refuses a bulk section or `NO_REPLY` before trust).
    #[test]
    fn only_handshake_calls_are_admitted_before_trust() {
        let admitted: heapless::Vec<(Opcode, Admission), 8> =
            Opcode::ALL.iter().map(|op| (*op, op.admission())).filter(|(_, a)| *a != Admission::Trusted).collect();
        assert_eq!(
            admitted.as_slice(),
            [
                (Opcode::Hello, Admission::Greeting),
                (Opcode::Authenticate, Admission::Authentication),
                (Opcode::StripeJoin, Admission::StripeGreeting),
                (Opcode::SameHostOffer, Admission::AfterGreeting),
                (Opcode::TransferFetch, Admission::PeerGreeting),
            ]
        );
        for (op, _) in &admitted {
            // A transfer fetch's reply carries the granted bytes; its request has no bulk.
            let bulk = if *op == Opcode::TransferFetch { BulkWay::Reply } else { BulkWay::None };
            assert_eq!((op.family(), op.bulk(), op.delivery()), (Family::Session, bulk, Delivery::Call), "{op}");
        }
    }
}
