//! Declarative macros that keep every message's parse and emit mirror images.

/// Declares a wire message: a plain struct whose fields go on the wire in declaration order,
/// plus its [`Message`](crate::Message) impl. A field's type decides its encoding
/// ([`WireField`](crate::WireField)).
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
