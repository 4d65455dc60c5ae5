//! Declarative macros that keep every message's parse and emit mirror images.

/// Declares a wire message: a plain struct whose fields go on the wire in declaration order,
/// plus its [`Message`](crate::Message) impl. A field's type decides its encoding
/// ([`WireField`](crate::WireField)); a message is itself a field type, so messages nest (its
/// fields go in place). The `pub enum Name: repr { Variant(Type) = tag, .. }` form declares a
/// tagged union of field types: the tag, then the variant's fields.
macro_rules! message {
    // A message that borrows from the frame.
    (
        $(#[$meta:meta])*
        pub struct $name:ident < $lt:lifetime > {
            $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Default)]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        pub struct $name<$lt> {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl<$lt> $crate::Message<$lt> for $name<$lt> {
            const MAX_CONTROL_LEN: usize = 0 $( + <$ty as $crate::WireField<$lt>>::MAX_LEN )*;
            const HAS_BULK: bool = false $( || <$ty as $crate::WireField<$lt>>::IS_BULK )*;
            #[allow(unused_variables)]
            fn decode(cx: &mut $crate::field::DecodeCx<$lt>) -> Result<Self, $crate::DecodeError> {
                Ok(Self { $( $field: <$ty as $crate::WireField<$lt>>::decode(cx, concat!(stringify!($name), ".", stringify!($field)))?, )* })
            }
            #[allow(unused_variables)]
            fn encode<'w>(&self, cx: &mut $crate::field::EncodeCx<'w, $lt>) -> Result<(), $crate::EncodeError> {
                $( <$ty as $crate::WireField<$lt>>::encode(&self.$field, cx, concat!(stringify!($name), ".", stringify!($field)))?; )*
                Ok(())
            }
        }

        /// Nested in another message: its fields in place, no prefix or length.
        impl<$lt> $crate::WireField<$lt> for $name<$lt> {
            const MAX_LEN: usize = <Self as $crate::Message<$lt>>::MAX_CONTROL_LEN;
            const IS_BULK: bool = <Self as $crate::Message<$lt>>::HAS_BULK;
            fn decode(cx: &mut $crate::field::DecodeCx<$lt>, _: &'static str) -> Result<Self, $crate::DecodeError> {
                <Self as $crate::Message<$lt>>::decode(cx)
            }
            fn encode(&self, cx: &mut $crate::field::EncodeCx<'_, $lt>, _: &'static str) -> Result<(), $crate::EncodeError> {
                <Self as $crate::Message<$lt>>::encode(self, cx)
            }
        }
    };
    // A message of owned fields only.
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Default)]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl<'m> $crate::Message<'m> for $name {
            const MAX_CONTROL_LEN: usize = 0 $( + <$ty as $crate::WireField<'m>>::MAX_LEN )*;
            const HAS_BULK: bool = false;
            #[allow(unused_variables)]
            fn decode(cx: &mut $crate::field::DecodeCx<'m>) -> Result<Self, $crate::DecodeError> {
                Ok(Self { $( $field: <$ty as $crate::WireField<'m>>::decode(cx, concat!(stringify!($name), ".", stringify!($field)))?, )* })
            }
            #[allow(unused_variables)]
            fn encode<'w>(&self, cx: &mut $crate::field::EncodeCx<'w, 'm>) -> Result<(), $crate::EncodeError> {
                $( <$ty as $crate::WireField<'m>>::encode(&self.$field, cx, concat!(stringify!($name), ".", stringify!($field)))?; )*
                Ok(())
            }
        }

        /// Nested in another message: its fields in place, no prefix or length.
        impl<'m> $crate::WireField<'m> for $name {
            const MAX_LEN: usize = <Self as $crate::Message<'m>>::MAX_CONTROL_LEN;
            fn decode(cx: &mut $crate::field::DecodeCx<'m>, _: &'static str) -> Result<Self, $crate::DecodeError> {
                <Self as $crate::Message<'m>>::decode(cx)
            }
            fn encode(&self, cx: &mut $crate::field::EncodeCx<'_, 'm>, _: &'static str) -> Result<(), $crate::EncodeError> {
                <Self as $crate::Message<'m>>::encode(self, cx)
            }
        }
    };
    // A tagged union: a `$repr` tag (the variant's number), then that variant's message in
    // place. An unknown tag is refused; the first variant is the default.
    (
        $(#[$meta:meta])*
        pub enum $name:ident : $repr:ident {
            $first_variant:ident ( $first_ty:ty ) = $first_value:literal
            $(, $variant:ident ( $ty:ty ) = $value:literal )* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        pub enum $name {
            $first_variant($first_ty),
            $( $variant($ty), )*
        }

        impl Default for $name {
            fn default() -> Self {
                Self::$first_variant(Default::default())
            }
        }

        impl $name {
            /// The tag this value goes on the wire with.
            pub const fn tag(&self) -> $repr {
                match self {
                    Self::$first_variant(_) => $first_value,
                    $( Self::$variant(_) => $value, )*
                }
            }
        }

        impl<'m> $crate::WireField<'m> for $name {
            const MAX_LEN: usize = core::mem::size_of::<$repr>() + {
                let widest = <$first_ty as $crate::WireField<'m>>::MAX_LEN;
                $( let widest = $crate::field::max_len(widest, <$ty as $crate::WireField<'m>>::MAX_LEN); )*
                widest
            };
            fn decode(cx: &mut $crate::field::DecodeCx<'m>, what: &'static str) -> Result<Self, $crate::DecodeError> {
                match <$repr as $crate::WireField<'m>>::decode(cx, what)? {
                    $first_value => Ok(Self::$first_variant(<$first_ty as $crate::WireField<'m>>::decode(cx, what)?)),
                    $( $value => Ok(Self::$variant(<$ty as $crate::WireField<'m>>::decode(cx, what)?)), )*
                    _ => Err($crate::DecodeError::InvalidValue { what }),
                }
            }
            fn encode(&self, cx: &mut $crate::field::EncodeCx<'_, 'm>, what: &'static str) -> Result<(), $crate::EncodeError> {
                <$repr as $crate::WireField<'m>>::encode(&self.tag(), cx, what)?;
                match self {
                    Self::$first_variant(v) => <$first_ty as $crate::WireField<'m>>::encode(v, cx, what),
                    $( Self::$variant(v) => <$ty as $crate::WireField<'m>>::encode(v, cx, what), )*
                }
            }
        }
    };
}

/// Declares a wire enum with a fixed representation; unknown values are refused with
/// [`DecodeError::InvalidValue`](crate::DecodeError::InvalidValue), never mapped to a default.
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident : $repr:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        #[repr($repr)]
        pub enum $name {
            #[default]
            $( $(#[$vmeta])* $variant = $value, )*
        }

        impl $name {
            /// Every value, in table order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),*];

            /// The value for a raw wire number, if it is one.
            pub const fn from_raw(raw: $repr) -> Option<Self> {
                match raw {
                    $( $value => Some(Self::$variant), )*
                    _ => None,
                }
            }

            /// The raw wire number.
            pub const fn raw(self) -> $repr {
                self as $repr
            }
        }

        impl<'a> $crate::WireField<'a> for $name {
            const MAX_LEN: usize = core::mem::size_of::<$repr>();
            fn decode(cx: &mut $crate::field::DecodeCx<'a>, what: &'static str) -> Result<Self, $crate::DecodeError> {
                let raw = <$repr as $crate::WireField<'a>>::decode(cx, what)?;
                Self::from_raw(raw).ok_or($crate::DecodeError::InvalidValue { what })
            }
            fn encode(&self, cx: &mut $crate::field::EncodeCx<'_, 'a>, what: &'static str) -> Result<(), $crate::EncodeError> {
                <$repr as $crate::WireField<'a>>::encode(&self.raw(), cx, what)
            }
        }
    };
}

#[cfg(test)]
#[allow(unreachable_pub)]
mod tests {
    use crate::field::{Bulk, DecodeCx, EncodeCx};
    use crate::wire::{Copy3D, CopyBox, CopyExtent, CopyPlace};
    use crate::{DecodeError, Message, WireField};

    message! {
        /// Two scalars.
        pub struct Pairish {
            pub a: u32,
            pub b: u16,
        }
    }

    message! {
        /// A union of a scalar and a message.
        pub enum Either: u8 {
            Small(u16) = 3,
            Pair(Pairish) = 9,
        }
    }

    message! {
        /// A union between two fields, and a nested message carrying bulk.
        pub struct Outer<'a> {
            pub before: u8,
            pub either: Either,
            pub inner: Inner<'a>,
        }
    }

    message! {
        /// A nested message with the frame's bulk.
        pub struct Inner<'a> {
            pub len: u32,
            pub data: Bulk<'a>,
        }
    }

    /// The control bytes (at most 256) and the bulk `msg` encodes to.
    fn encode<'a, M: Message<'a>>(msg: &M) -> (heapless::Vec<u8, 256>, Option<&'a [u8]>) {
        let mut buf = [0xa5u8; 256];
        let mut cx = EncodeCx::new(&mut buf);
        msg.encode(&mut cx).expect("encode");
        let bulk = cx.bulk;
        let n = cx.w.finish().expect("fits");
        (heapless::Vec::from_slice(&buf[..n]).expect("fits"), bulk)
    }

    #[test]
    fn a_nested_message_goes_on_the_wire_as_its_fields_in_place() {
        let place = |base: u64| CopyPlace { array: base, ptr: base + 1, pitch: base + 2, height: base + 3, x: base + 4, y: base + 5, z: base + 6 };
        let copy = Copy3D {
            copy: CopyBox { dst: place(10), src: place(20), extent: CopyExtent { width: 30, height: 31, depth: 32 } },
            stream: 40,
            sync: true,
        };
        let (bytes, _) = encode(&copy);
        // The 17 fields of the box, then stream and sync: exactly the flat layout.
        let mut want = heapless::Vec::<u8, 256>::new();
        for v in (10..17).chain(20..27).chain([30, 31, 32, 40]) {
            want.extend_from_slice(&u64::to_le_bytes(v)).expect("fits");
        }
        want.push(1).expect("fits");
        assert_eq!(bytes, want);
        assert_eq!(Copy3D::MAX_CONTROL_LEN, 18 * 8 + 1);
        assert_eq!(<CopyBox as WireField>::MAX_LEN, 17 * 8);
        assert_eq!(Copy3D::parse(&bytes, &[]), Ok(copy));
        // A cut-off box names the nested field it misses.
        assert!(matches!(Copy3D::parse(&bytes[..100], &[]), Err(DecodeError::Truncated { .. })), "{:?}", Copy3D::parse(&bytes[..100], &[]));
    }

    #[test]
    fn a_tagged_union_carries_its_tag_then_the_variant() {
        let bulk = [7u8, 8, 9];
        let outer = Outer { before: 1, either: Either::Pair(Pairish { a: 0x0403_0201, b: 0x0605 }), inner: Inner { len: 3, data: Bulk(&bulk) } };
        let (bytes, sent) = encode(&outer);
        assert_eq!(bytes[..], [1, 9, 1, 2, 3, 4, 5, 6, 3, 0, 0, 0]);
        assert_eq!(sent, Some(&bulk[..]), "the nested message's bulk is the frame's");
        const { assert!(Outer::HAS_BULK) };
        assert_eq!(Outer::MAX_CONTROL_LEN, 1 + (1 + 6) + 4, "a union is as long as its tag and widest variant");
        assert_eq!(Outer::parse(&bytes, &bulk), Ok(outer));

        let small = Outer { either: Either::Small(0x0201), ..Default::default() };
        let (bytes, _) = encode(&small);
        assert_eq!(bytes[..], [0, 3, 1, 2, 0, 0, 0, 0]);
        assert_eq!(Outer::parse(&bytes, &[]), Ok(small));
        assert_eq!(Either::default(), Either::Small(0), "the first variant is the default");

        // A tag no variant has is refused, as a wire enum's unknown value is.
        let mut unknown = bytes.clone();
        unknown[1] = 4;
        assert_eq!(Outer::parse(&unknown, &[]), Err(DecodeError::InvalidValue { what: "Outer.either" }));
        let mut decode = DecodeCx::new(&[9, 1, 2], &[]);
        assert!(matches!(Either::decode(&mut decode, "x"), Err(DecodeError::Truncated { .. })));
    }
}
