//! End to end: the cloud client (`svc_core::cloud`) against the in-process emulator
//! (`svc_emulator`), started on port 0 for each test; one file per subject, the
//! request builders shared by them here.
//!
//! A small recording proxy (`proxy.rs`) sits in front of the emulator's identity
//! provider or cloud service where a test must count requests (one token request for
//! many tasks, nothing sent for a refused argument, no repeated creation) or inject an
//! answer the emulator would not give (a 401 to a valid token, a 400, a 503, an answer
//! lost after the request was applied). Waits for a processing poll with a deadline;
//! no test sleeps a fixed time to wait for a state.

mod cancel_routes;
mod errors;
mod injected_faults;
mod lists;
mod operations;
mod proxy;
mod settings;
mod success_statuses;
mod tokens;
mod transfers;

use std::time::{Duration, Instant};

use crate::common::emulator;
use serde_json::json;
use svc_core::cloud::{
    CloudClient, CloudError, ContainerFileType, ContainerRegion, CreateContainerFile,
    CreateContainerRequest, CreateWebhookEndpointRequest, EventType, Metadata, ProcessingStatus,
    StartProcessingRequest,
};
use svc_emulator::{Emulator, EmulatorConfig};
use uuid::Uuid;

async fn default_emulator() -> Emulator {
    emulator(EmulatorConfig::default()).await
}

fn metadata(pairs: &[(&str, &str)]) -> Metadata {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn container_request(metadata: Option<Metadata>) -> CreateContainerRequest {
    CreateContainerRequest {
        region: ContainerRegion::EuWest3,
        metadata,
        files: Vec::new(),
    }
}

fn file(path: &str, size: i64) -> CreateContainerFile {
    CreateContainerFile {
        metadata: None,
        path: path.to_owned(),
        size,
        type_: ContainerFileType::Input,
    }
}

fn processing_request(container_id: Uuid) -> StartProcessingRequest {
    let json = json!({"type": "gnss", "mode": "auto"});
    StartProcessingRequest {
        container_id,
        metadata: Some(metadata(&[("run", "1")])),
        name: Some("survey run".to_owned()),
        processing_json: json.as_object().cloned().unwrap_or_default(),
    }
}

fn endpoint_request(url: &str) -> CreateWebhookEndpointRequest {
    CreateWebhookEndpointRequest {
        enabled_event_types: vec![EventType::CloudProcessingEnded],
        metadata: Some(metadata(&[("team", "field-ops")])),
        url: url.to_owned(),
    }
}

/// The status of an [`CloudError::Api`], failing the test for any other error.
#[track_caller]
fn api_status(e: &CloudError) -> u16 {
    match e {
        CloudError::Api { status, .. } => *status,
        other => panic!("expected an answer from the service, got {other:?}"),
    }
}

/// Polls a processing until `done` holds for it, within `timeout`.
async fn wait_for_processing(
    client: &CloudClient,
    id: Uuid,
    timeout: Duration,
    done: impl Fn(&ProcessingStatus) -> bool,
) -> svc_core::cloud::Processing {
    let deadline = Instant::now() + timeout;
    loop {
        let p = client.get_processing(id).await.expect("get processing");
        if done(&p.status) {
            return p;
        }
        assert!(
            Instant::now() < deadline,
            "processing {id} still {}",
            p.status
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
