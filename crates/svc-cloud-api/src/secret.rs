//! Secrets: strings whose `Debug` output is `[redacted]`, so that a secret never ends
//! up in a log line or an error message by accident.

/// Defines a secret string newtype: serialized as the plain string on the wire,
/// `Debug` redacted, the value reachable only through `expose_secret`.
macro_rules! secret_string {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, ::serde::Serialize, ::serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub fn new(value: impl Into<String>) -> Self {
                Self(value.into())
            }

            /// The secret itself. Do not log it.
            pub fn expose_secret(&self) -> &str {
                &self.0
            }
        }

        impl ::std::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(concat!(stringify!($name), "([redacted])"))
            }
        }

        impl ::std::convert::From<String> for $name {
            fn from(value: String) -> Self {
                Self(value)
            }
        }

        impl ::std::convert::From<&str> for $name {
            fn from(value: &str) -> Self {
                Self(value.to_owned())
            }
        }
    };
}
pub(crate) use secret_string;
