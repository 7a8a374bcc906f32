//! The HTTP clients, with the TLS roots the app chooses.
//!
//! reqwest's default verifier is the platform's (rustls-platform-verifier): on Linux
//! it reads the system's CA certificates and fails to build without any; on Android
//! it needs an initialization from the app's JVM (and panics at the first handshake
//! without it). The bundled roots (Mozilla's, from `webpki-root-certs`) work
//! everywhere, so they are the default.

use std::time::Duration;

use crate::error::SvcError;

/// Which certificate authorities the HTTPS connections trust.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, uniffi::Enum)]
pub enum TlsRoots {
    /// Mozilla's root certificates, built into the library: no dependency on the
    /// system's certificate store (works on a minimal system and on every phone), but
    /// no custom or enterprise CA.
    #[default]
    Bundled,
    /// The platform's verifier: the system store on Linux, the Keychain on iOS and
    /// macOS (enterprise and user-installed CAs included). On Linux without CA
    /// certificates, building the client fails with an `InvalidInput` error. Not
    /// available on Android in this build (it needs an initialization from the app's
    /// JVM): refused with an `InvalidInput` error there.
    Platform,
}

/// A reqwest client with `roots`, a connection timeout and, when given, a total
/// timeout per request.
pub(crate) fn http_client(
    roots: TlsRoots,
    connect_timeout: Duration,
    timeout: Option<Duration>,
) -> Result<reqwest::Client, SvcError> {
    build(reqwest::Client::builder(), roots, connect_timeout, timeout)
}

/// [`http_client`] for the cloud service's requests: idle connections dropped before a
/// load balancer closes them (svc-core's `cloud::POOL_IDLE`).
pub(crate) fn cloud_http_client(
    roots: TlsRoots,
    connect_timeout: Duration,
    timeout: Duration,
) -> Result<reqwest::Client, SvcError> {
    build(
        reqwest::Client::builder().pool_idle_timeout(svc_core::cloud::POOL_IDLE),
        roots,
        connect_timeout,
        Some(timeout),
    )
}

/// [`http_client`] for a unit session: plain HTTP, with svc-core's timeouts for units
/// (idle connections dropped before the unit closes them).
pub(crate) fn unit_http_client() -> Result<reqwest::Client, SvcError> {
    build(
        reqwest::Client::builder().pool_idle_timeout(svc_core::unit::HTTP_POOL_IDLE),
        TlsRoots::Bundled,
        Duration::from_secs(5),
        Some(svc_core::unit::HTTP_TIMEOUT),
    )
}

fn build(
    builder: reqwest::ClientBuilder,
    roots: TlsRoots,
    connect_timeout: Duration,
    timeout: Option<Duration>,
) -> Result<reqwest::Client, SvcError> {
    let mut builder = builder.connect_timeout(connect_timeout);
    if let Some(timeout) = timeout {
        builder = builder.timeout(timeout);
    }
    builder = match roots {
        TlsRoots::Bundled => builder.tls_certs_only(
            webpki_root_certs::TLS_SERVER_ROOT_CERTS
                .iter()
                .filter_map(|der| reqwest::Certificate::from_der(der.as_ref()).ok()),
        ),
        TlsRoots::Platform => {
            if cfg!(target_os = "android") {
                return Err(SvcError::invalid(
                    "TlsRoots.Platform needs the platform verifier's Android initialization, \
                     which this build does not do: use TlsRoots.Bundled",
                ));
            }
            builder
        }
    };
    builder.build().map_err(|e| {
        let mut reason = format!("cannot build the HTTP client ({roots:?} TLS roots): {e}");
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            reason.push_str(": ");
            reason.push_str(&s.to_string());
            source = s.source();
        }
        SvcError::invalid(reason)
    })
}
