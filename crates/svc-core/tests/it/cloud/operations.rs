//! Each operation's round trip: server information, containers, processings, webhook
//! endpoints.

use std::time::{Duration, Instant};

use super::{
    api_status, container_request, default_emulator, endpoint_request, file, metadata,
    processing_request, wait_for_processing,
};
use crate::common::{client_for, emulator};
use serde_json::json;
use svc_core::cloud::{
    ContainerFileType, ContainerRegion, CreateContainerFile, CreateContainerRequest, EventType,
    ProcessingStatus, RetryHint, UpdateContainerFileRequest, UpdateContainerRequest,
    UpdateWebhookEndpointRequest,
};
use svc_emulator::EmulatorConfig;
use uuid::Uuid;

#[tokio::test]
async fn server_info_and_containers_round_trip() {
    let emu = default_emulator().await;
    let client = client_for(emu.info());

    let info = client.server_info().await.unwrap();
    assert!(info.version.is_some_and(|v| !v.is_empty()));
    assert!(info.regions_status.contains_key("eu-west-3"));

    let created = client
        .create_container(CreateContainerRequest {
            region: ContainerRegion::UsWest1,
            metadata: Some(metadata(&[("project", "survey-2024-07")])),
            files: vec![
                file("rover/gnss.ubx", 10),
                CreateContainerFile {
                    metadata: Some(metadata(&[("kind", "profile")])),
                    type_: ContainerFileType::Resources,
                    ..file("profiles/export.json", 3)
                },
            ],
        })
        .await
        .unwrap();
    assert_eq!(created.region, Some(ContainerRegion::UsWest1));
    assert_eq!(created.organization_id, Some(emu.info().organization_id));
    assert_eq!(created.files.len(), 2);
    assert!(created.files.iter().all(|f| f.upload_info.is_some()));

    let got = client.get_container(created.id).await.unwrap();
    assert_eq!(got.id, created.id);
    assert_eq!(
        got.metadata,
        Some(metadata(&[("project", "survey-2024-07")]))
    );

    let updated = client
        .update_container(
            created.id,
            UpdateContainerRequest {
                metadata: Some(metadata(&[("stage", "two")])),
            },
        )
        .await
        .unwrap();
    assert_eq!(updated.metadata, Some(metadata(&[("stage", "two")])));

    let added = client
        .add_container_files(created.id, vec![file("base/obs.rnx", 5)])
        .await
        .unwrap();
    assert_eq!(added.len(), 1);
    assert_eq!(added[0].path, "base/obs.rnx");

    let renamed = client
        .update_container_file(
            added[0].id,
            UpdateContainerFileRequest {
                metadata: Some(metadata(&[("station", "B1")])),
                path: Some("base/renamed.rnx".to_owned()),
                type_: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(renamed.path, "base/renamed.rnx");
    assert_eq!(renamed.metadata, Some(metadata(&[("station", "B1")])));

    client.delete_container_file(added[0].id).await.unwrap();
    let got = client.get_container(created.id).await.unwrap();
    assert_eq!(got.files.len(), 2);
    let e = client.delete_container_file(added[0].id).await.unwrap_err();
    assert_eq!(api_status(&e), 404);

    let listed = client.list_containers_all().await.unwrap();
    assert_eq!(
        listed.iter().map(|c| c.id).collect::<Vec<_>>(),
        vec![created.id]
    );

    client.delete_container(created.id).await.unwrap();
    let e = client.get_container(created.id).await.unwrap_err();
    assert_eq!(api_status(&e), 404);
    assert_eq!(e.operation(), Some("getContainer"));
    assert_eq!(e.retry_hint(), RetryHint::Allowed, "404: may exist later");
    assert!(
        !e.is_retryable(),
        "a 404 is never retryable, from any source"
    );
    let e = client.delete_container(created.id).await.unwrap_err();
    assert_eq!(api_status(&e), 404);
    assert!(client.list_containers_all().await.unwrap().is_empty());
}

#[tokio::test]
async fn processings_round_trip() {
    let emu = emulator(EmulatorConfig {
        processing_time: Duration::from_millis(300),
        webhook_retry_base: Duration::from_millis(1),
        webhook_retry_cap: Duration::from_millis(4),
        webhook_timeout: Duration::from_secs(1),
        ..EmulatorConfig::default()
    })
    .await;
    let client = client_for(emu.info());

    // An endpoint nobody listens on: its deliveries end up as missed webhooks.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dead = format!("http://{}/hook", closed.local_addr().unwrap());
    drop(closed);
    let endpoint = client
        .create_webhook_endpoint(endpoint_request(&dead))
        .await
        .unwrap();

    let container = client
        .create_container(container_request(None))
        .await
        .unwrap();
    let started = client
        .start_processing(processing_request(container.id))
        .await
        .unwrap();
    assert_eq!(started.container_id, Some(container.id));
    assert_eq!(started.name.as_deref(), Some("survey run"));
    assert_eq!(started.processing_json["mode"], json!("auto"));
    assert!(matches!(
        started.status,
        ProcessingStatus::Pending | ProcessingStatus::Processing
    ));

    let listed = client.list_processings_all().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, started.id);
    let page = client.list_processings_page(0, 10).await.unwrap();
    assert_eq!(page.num_items, 1);

    let done = wait_for_processing(&client, started.id, Duration::from_secs(30), |s| {
        *s == ProcessingStatus::Processed
    })
    .await;
    assert!(done.processing_result.is_some());
    client.list_processing_outputs(started.id).await.unwrap();
    let errors = client.list_processing_errors(started.id).await.unwrap();
    assert_eq!(
        errors
            .iter()
            .filter(|e| e.level == Some(svc_core::cloud::ProcessingErrorLevel::Error))
            .count() as u64,
        done.error_count.as_ref().map_or(0, |c| c.errors)
    );

    let archived = client.archive_processing(started.id).await.unwrap();
    assert_eq!(archived.status, ProcessingStatus::Archived);
    let e = client
        .list_processing_outputs(started.id)
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 409, "outputs only while processed");
    assert_eq!(e.operation(), Some("listProcessingOutputs"));

    let deadline = Instant::now() + Duration::from_secs(30);
    let missed = loop {
        let missed = client.list_missed_webhooks_all(endpoint.id).await.unwrap();
        if !missed.is_empty() {
            break missed;
        }
        assert!(Instant::now() < deadline, "no missed webhook recorded");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(missed[0].event_type, EventType::CloudProcessingEnded);
    assert_eq!(
        missed[0].endpoint_metadata,
        Some(metadata(&[("team", "field-ops")]))
    );
    let page = client
        .list_missed_webhooks_page(endpoint.id, 0, 1)
        .await
        .unwrap();
    assert_eq!(page.len(), 1);

    let e = client.get_processing(Uuid::new_v4()).await.unwrap_err();
    assert_eq!(api_status(&e), 404);
}

#[tokio::test]
async fn webhook_endpoints_round_trip() {
    let emu = default_emulator().await;
    let client = client_for(emu.info());
    let created = client
        .create_webhook_endpoint(endpoint_request("https://hooks.example.com/svc"))
        .await
        .unwrap();
    assert_eq!(created.enabled, Some(true));
    let secret = created.secret.as_ref().unwrap().expose_secret();
    assert!(secret.starts_with("whsec_"));
    assert!(!format!("{created:?}").contains(secret));

    let updated = client
        .update_webhook_endpoint(
            created.id,
            UpdateWebhookEndpointRequest {
                enabled: Some(false),
                enabled_event_types: vec![
                    EventType::CloudProcessingProgress,
                    EventType::CloudProcessingError,
                ],
                metadata: Some(metadata(&[("team", "office")])),
                url: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(updated.id, created.id);
    assert_eq!(updated.enabled, Some(false));
    assert_eq!(updated.enabled_event_types.len(), 2);
    assert_eq!(
        updated.url.as_deref(),
        Some("https://hooks.example.com/svc")
    );

    let all = client.list_webhook_endpoints_all().await.unwrap();
    assert_eq!(all, vec![updated]);

    client.delete_webhook_endpoint(created.id).await.unwrap();
    assert!(
        client
            .list_webhook_endpoints_all()
            .await
            .unwrap()
            .is_empty()
    );
    let e = client
        .delete_webhook_endpoint(created.id)
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 404);
    assert_eq!(e.operation(), Some("deleteWebhookEndpoint"));
    let e = client
        .list_missed_webhooks_all(created.id)
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 404);
}
