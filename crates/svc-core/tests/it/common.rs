//! Helpers several test modules share that need svc-core's own types (so they cannot
//! live in `svc_test_support`, which does not depend on svc-core): a cloud client
//! configured for an in-process emulator.

use std::time::Duration;

use svc_core::cloud::{ApiSecret, CloudClient, CloudConfig};
use svc_core::retry::RetryPolicy;
use svc_emulator::{Emulator, EmulatorConfig, EmulatorInfo};

/// Retries in milliseconds, so that tests with faults stay quick.
pub fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 8,
        base_delay: Duration::from_millis(2),
        max_delay: Duration::from_millis(20),
        max_elapsed: Duration::from_secs(20),
    }
}

/// An emulator of the cloud service alone (no emulated unit).
pub async fn emulator(config: EmulatorConfig) -> Emulator {
    Emulator::start(EmulatorConfig {
        device: None,
        ..config
    })
    .await
    .expect("emulator starts")
}

/// The emulator's addresses and credentials, with the default retry policy.
pub fn cloud_config(info: &EmulatorInfo) -> CloudConfig {
    CloudConfig::new(
        info.base_url.clone(),
        info.auth_url.clone(),
        info.notification_url.clone(),
        info.api_key.clone(),
        ApiSecret::new(info.api_secret.clone()),
        info.organization_id,
    )
}

/// [`cloud_config`] with [`fast_retry`].
pub fn fast_config(info: &EmulatorInfo) -> CloudConfig {
    let mut config = cloud_config(info);
    config.retry = fast_retry();
    config
}

/// A client of the emulator, with [`fast_retry`].
pub fn client_for(info: &EmulatorInfo) -> CloudClient {
    CloudClient::new(fast_config(info)).expect("valid settings")
}
