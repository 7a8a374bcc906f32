//! Secrets: strings whose `Debug` output is `[redacted]`, so that a secret never ends
//! up in a log line or an error message by accident.
//!
//! One macro, [`secret_string!`], used by both generated clients (`svc-cloud-api`:
//! `WebhookSecret`, `AccessToken`; `ins-device-api`: `Password`, `AuthToken`). Each
//! crate defines its types itself, at the paths its generated code names
//! (`crate::WebhookSecret`, ...), so that they stay its own types. The invoking crate
//! must depend on `serde`.

/// Defines a secret string newtype: serialized as the plain string on the wire,
/// `Debug` redacted, the value reachable only through `expose_secret`.
#[macro_export]
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

#[cfg(test)]
mod tests {
    secret_string!(
        /// A secret for the tests.
        Token
    );

    #[test]
    fn debug_is_redacted_and_the_wire_is_the_plain_string() {
        let token = Token::new("s3cr3t");
        assert_eq!(format!("{token:?}"), "Token([redacted])");
        assert_eq!(token.expose_secret(), "s3cr3t");
        assert_eq!(serde_json::to_string(&token).unwrap(), "\"s3cr3t\"");
        let back: Token = serde_json::from_str("\"s3cr3t\"").unwrap();
        assert_eq!(back, token);
        assert_eq!(Token::from("a"), Token::from("a".to_owned()));
    }
}
