//! A client whose access tokens come from the app's backend: no key or secret in it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::{config, kind, rig};
use futures::executor::block_on;
use svc_ffi::*;

/// A provider that never gives a token (the user signed out).
pub(crate) struct Refusing;

#[async_trait::async_trait]
impl TokenProvider for Refusing {
    async fn access_token(&self) -> Result<AccessToken, TokenProviderError> {
        Err(TokenProviderError::Refused {
            reason: "signed out".into(),
        })
    }
}

/// The app's backend: it holds the organization's key and secret and hands out tokens.
struct Backend {
    minting: Arc<CloudClient>,
    calls: AtomicUsize,
}

#[async_trait::async_trait]
impl TokenProvider for Backend {
    async fn access_token(&self) -> Result<AccessToken, TokenProviderError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.minting
            .access_token()
            .await
            .map_err(|e| TokenProviderError::Unavailable { reason: e.reason() })
    }
}

fn app_config(info: &svc_emulator::EmulatorInfo, provider: Arc<dyn TokenProvider>) -> CloudConfig {
    CloudConfig {
        auth_url: None,
        api_key: None,
        api_secret: None,
        token_provider: Some(provider),
        ..config(info)
    }
}

#[test]
fn a_client_with_a_token_provider_works_without_key_or_secret() {
    let rig = rig(Duration::from_millis(200));
    let backend = Arc::new(Backend {
        minting: CloudClient::create(config(&rig.info)).expect("backend client"),
        calls: AtomicUsize::new(0),
    });
    let config = app_config(&rig.info, backend.clone());
    assert!(!format!("{config:?}").contains(&rig.info.api_secret));
    let client = CloudClient::create(config).expect("app client");
    block_on(client.server_info()).expect("server info");
    block_on(client.list_containers_all()).expect("containers");
    assert_eq!(
        backend.calls.load(Ordering::SeqCst),
        1,
        "the token is cached"
    );
    let token = block_on(backend.minting.access_token()).expect("token");
    assert_eq!(token.token.to_string(), "[redacted]");
    assert!(!format!("{token:?}").contains(&token.token.reveal()));

    let client =
        CloudClient::create(app_config(&rig.info, Arc::new(Refusing))).expect("app client");
    let (name, e) = kind(block_on(client.server_info()));
    assert_eq!(name, "authentication", "{e}");
    assert!(e.reason().contains("signed out"), "{e}");
    assert!(!e.retryable());
}
