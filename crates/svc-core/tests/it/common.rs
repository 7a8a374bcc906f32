//! Helpers several test modules share that need svc-core's own types (so they cannot
//! live in `svc_test_support`, which does not depend on svc-core): a cloud client
//! configured for an in-process emulator.

use std::time::Duration;

use svc_core::cloud::{CloudClient, CloudConfig};
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
    CloudConfig::from_vars(|name| info.var(name)).expect("the emulator's settings")
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

/// A realistic, compact `cloud:processing-progress` delivery body.
pub const PROGRESS_BODY: &str = r#"{"id":"2e4f6a8c-1b3d-4e5f-9a7b-c8d9e0f1a2b3","eventType":"cloud:processing-progress","createdAt":"2024-07-02T09:17:02.500Z","endpointMetadata":{"team":"field-ops"},"payload":{"id":"6f1c2a4e-8b3d-4c1e-9a7f-2d5e8b1c3a90","name":"Survey 2024-07 run 1","type":"ins","status":"processing","region":"eu-west-3","processingResult":null,"processingDuration":null,"processingStep":"preprocessing","processingProgress":0.42,"archiveScheduledAt":null,"createdAt":"2024-07-02T09:15:30.123Z","updatedAt":"2024-07-02T09:17:02.456Z","creatorId":"0b8e7d6c-5a4f-4e3d-8c2b-1a0f9e8d7c6b","organizationId":"3c9d5e7f-1a2b-4c3d-8e4f-5a6b7c8d9e0f","containerId":"8a7b6c5d-4e3f-4a1b-9c8d-7e6f5a4b3c2d","errorCount":{"errors":0,"warnings":2},"missionLength":null,"missionLocationCountry":null,"missionLocationRegion":null,"missionLocationPlace":null,"metadata":{"project":"survey-2024-07"},"processingJson":{"mode":"auto"}}}"#;

/// A secret in the service's format (`whsec_` + 64 hex characters).
pub const SECRET: &str = "whsec_4b1d0c7a9e3f25688d1e6b0a3c5f7e92d4a6c8e0f2b4d6a8c0e2f4a6b8d0c2e4";

/// Another endpoint's secret.
pub const OTHER_SECRET: &str =
    "whsec_0f9e8d7c6b5a49382716a5b4c3d2e1f00123456789abcdef0123456789abcdef";
