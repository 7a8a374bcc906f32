//! The SDK's HTTP clients, built in one place ([`HttpClientConfig`]): which certificate
//! authorities HTTPS trusts ([`TlsRoots`]), the timeouts, the connection pool and a
//! proxy, with the settings each part of the SDK uses by default
//! ([`HttpClientConfig::cloud`], [`HttpClientConfig::transfers`],
//! [`HttpClientConfig::unit`]). A client built here goes to
//! [`CloudClient::with_http_client`](crate::cloud::CloudClient::with_http_client),
//! [`Workflow::with_http`](crate::workflow::Workflow::with_http),
//! [`Transfers::new`](crate::transfer::Transfers::new) or
//! [`Unit::http_with_client`](crate::unit::Unit::http_with_client).
//!
//! ```no_run
//! # fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use svc_core::cloud::{CloudClient, CloudConfig};
//! use svc_core::http::HttpClientConfig;
//!
//! let config = CloudConfig::from_env()?;
//! let http = HttpClientConfig {
//!     proxy: Some("http://proxy.example.com:3128".to_owned()),
//!     ..HttpClientConfig::cloud(&config)
//! }
//! .build()?;
//! let client = CloudClient::with_http_client(config, http)?;
//! # Ok(()) }
//! ```

use std::fmt;
use std::time::Duration;

/// Which certificate authorities HTTPS connections trust.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TlsRoots {
    /// The platform's verifier (rustls-platform-verifier): the system's store on Linux
    /// (building the client fails on a system without CA certificates), the Keychain
    /// on iOS and macOS, Android's trust manager (its Network Security Config, user and
    /// device-management authorities), enterprise and user-installed authorities
    /// included. On Android it needs the app's `Context` first (`android::init`, which
    /// the Kotlin binding's `AndroidPlatform.init(context)` calls); until then building
    /// a client with it is refused with [`HttpClientError::Unsupported`].
    #[default]
    Platform,
    /// Mozilla's root certificates, built into the library (`webpki-root-certs`): no
    /// dependency on the system's store (works on a minimal system and on every
    /// phone), but no custom or enterprise authority. With the `bundled-roots`
    /// feature.
    #[cfg(feature = "bundled-roots")]
    Bundled,
}

/// How an HTTP client is built. Start from the settings of the part of the SDK it is
/// for and change what you need: `HttpClientConfig { proxy, ..HttpClientConfig::cloud(&config) }`.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpClientConfig {
    /// The certificate authorities HTTPS trusts.
    pub roots: TlsRoots,
    /// How long establishing a connection may take.
    pub connect_timeout: Duration,
    /// How long a whole request may take, answer included; `None`: no limit (for
    /// transfers of big files, whose stalls are caught otherwise).
    pub timeout: Option<Duration>,
    /// How long an idle connection is kept for the next request; `None`: reqwest's
    /// default (90 s).
    pub pool_idle_timeout: Option<Duration>,
    /// Every request through this proxy (`http://`, `https://` or `socks5://`, with
    /// its credentials in the address if it needs them: they are never shown); `None`:
    /// the proxy of the environment (`HTTPS_PROXY`...), if any.
    pub proxy: Option<String>,
}

impl HttpClientConfig {
    /// The client.
    ///
    /// # Errors
    /// [`HttpClientError`]: the roots cannot be used here, the proxy's address is not
    /// one, or the TLS backend cannot be initialized (the platform's verifier on a
    /// system without CA certificates).
    pub fn build(&self) -> Result<reqwest::Client, HttpClientError> {
        let mut builder = reqwest::Client::builder().connect_timeout(self.connect_timeout);
        if let Some(timeout) = self.timeout {
            builder = builder.timeout(timeout);
        }
        if let Some(idle) = self.pool_idle_timeout {
            builder = builder.pool_idle_timeout(idle);
        }
        if let Some(proxy) = &self.proxy {
            // Its error would show the address, credentials included: not kept.
            let proxy =
                reqwest::Proxy::all(proxy.as_str()).map_err(|_| HttpClientError::Proxy {
                    address: crate::shown_address(proxy),
                })?;
            builder = builder.proxy(proxy);
        }
        builder = match self.roots {
            TlsRoots::Platform if !android::ready() => {
                return Err(HttpClientError::Unsupported {
                    roots: self.roots,
                    reason: "on Android the platform's verifier needs the app's Context \
                             first: call AndroidPlatform.init(context) once at start (e.g. \
                             in Application.onCreate), or use the bundled roots",
                });
            }
            TlsRoots::Platform => builder,
            #[cfg(feature = "bundled-roots")]
            TlsRoots::Bundled => builder.tls_certs_only(
                webpki_root_certs::TLS_SERVER_ROOT_CERTS
                    .iter()
                    .filter_map(|der| reqwest::Certificate::from_der(der.as_ref()).ok()),
            ),
        };
        builder.build().map_err(|source| HttpClientError::Build {
            roots: self.roots,
            reason: crate::observe::error_chain(&source),
            source,
        })
    }
}

impl fmt::Debug for HttpClientConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClientConfig")
            .field("roots", &self.roots)
            .field("connect_timeout", &self.connect_timeout)
            .field("timeout", &self.timeout)
            .field("pool_idle_timeout", &self.pool_idle_timeout)
            .field("proxy", &self.proxy.as_deref().map(crate::shown_address))
            .finish()
    }
}

/// Why [`HttpClientConfig::build`] failed.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum HttpClientError {
    /// These roots cannot be used on this platform.
    #[error("cannot build the HTTP client ({roots:?} TLS roots): {reason}")]
    Unsupported {
        /// The roots asked for.
        roots: TlsRoots,
        /// Why, and what to use instead.
        reason: &'static str,
    },
    /// The proxy's address cannot be used.
    #[error("cannot build the HTTP client: the proxy address `{address}` is not valid")]
    Proxy {
        /// The address, without its credentials.
        address: String,
    },
    /// reqwest refused to build the client: its TLS backend cannot be initialized (the
    /// platform's verifier on a system without CA certificates).
    #[error("cannot build the HTTP client ({roots:?} TLS roots): {reason}")]
    Build {
        /// The roots asked for.
        roots: TlsRoots,
        /// What reqwest said, with its causes.
        reason: String,
        /// reqwest's error.
        #[source]
        source: reqwest::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proxy_is_taken_and_its_credentials_never_shown() {
        let config = HttpClientConfig {
            proxy: Some("http://me:secret@proxy.example.com:3128".to_owned()),
            ..HttpClientConfig::transfers()
        };
        assert!(config.build().is_ok());
        assert!(!format!("{config:?}").contains("secret"), "{config:?}");
        let refused = HttpClientConfig {
            proxy: Some("::not a proxy:secret@".to_owned()),
            ..HttpClientConfig::transfers()
        }
        .build()
        .expect_err("not an address");
        assert!(!refused.to_string().contains("secret"), "{refused}");
    }

    #[test]
    fn each_part_has_its_timeouts() {
        let unit = HttpClientConfig::unit(Duration::from_secs(2));
        assert_eq!(unit.connect_timeout, Duration::from_secs(2));
        assert_eq!(unit.timeout, Some(Duration::from_secs(2)));
        assert_eq!(unit.pool_idle_timeout, Some(crate::unit::HTTP_POOL_IDLE));
        let transfers = HttpClientConfig::transfers();
        assert_eq!(transfers.timeout, None, "a big file takes its time");
    }
}

/// Android's platform verifier, initialized with the app's `Context`.
pub mod android {
    #[cfg(target_os = "android")]
    static READY: std::sync::OnceLock<()> = std::sync::OnceLock::new();

    /// Gives the platform's verifier the app's `Context`, from a JNI call made by the
    /// app (the Kotlin binding's `AndroidPlatform.init(context)`): from then on,
    /// [`TlsRoots::Platform`](super::TlsRoots::Platform) uses Android's trust manager.
    /// Once per process; later calls do nothing.
    ///
    /// # Errors
    /// The reason, when the `Context` is refused (its class loader cannot be read).
    #[cfg(target_os = "android")]
    pub fn init(env: &mut jni::Env<'_>, context: jni::objects::JObject<'_>) -> Result<(), String> {
        if READY.get().is_some() {
            return Ok(());
        }
        rustls_platform_verifier::android::init_with_env(env, context)
            .map_err(|e| format!("the platform's verifier refused the app's Context: {e}"))?;
        let _ = READY.set(());
        Ok(())
    }

    /// Whether [`TlsRoots::Platform`](super::TlsRoots::Platform) can be used: always,
    /// except on Android before `init`.
    #[must_use]
    pub fn ready() -> bool {
        #[cfg(target_os = "android")]
        {
            READY.get().is_some()
        }
        #[cfg(not(target_os = "android"))]
        {
            true
        }
    }
}
