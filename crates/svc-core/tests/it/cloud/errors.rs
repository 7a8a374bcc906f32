//! The error rules: conflicts, limits checked before anything is sent, what only the
//! server can check, typed answers and which are retried, a lost answer.

use std::time::Duration;

use super::proxy::{Action, proxied};
use super::{
    api_status, container_request, default_emulator, endpoint_request, file, metadata,
    processing_request,
};
use crate::common::{client_for, emulator};
use svc_core::cloud::{
    CloudError, ContainerRegion, CreateContainerFile, CreateContainerRequest,
    CreateWebhookEndpointRequest, Metadata, ProcessingStatus, RetryHint, StartProcessingRequest,
    TransportKind, UpdateContainerFileRequest, UpdateContainerRequest,
};
use svc_core::limits::LimitError;
use svc_emulator::EmulatorConfig;
use uuid::Uuid;

#[tokio::test]
async fn conflicts_answer_409() {
    let emu = emulator(EmulatorConfig {
        processing_time: Duration::from_secs(120),
        ..EmulatorConfig::default()
    })
    .await;
    let client = client_for(emu.info());
    let container = client
        .create_container(container_request(None))
        .await
        .unwrap();
    let running = client
        .start_processing(processing_request(container.id))
        .await
        .unwrap();

    // One ongoing processing per organization.
    let e = client
        .start_processing(processing_request(container.id))
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 409);
    assert_eq!(e.operation(), Some("startProcessing"));
    assert_eq!(e.title(), Some("Conflict"));
    assert!(e.details().unwrap().contains("ongoing"), "{e}");
    assert_eq!(e.retry_hint(), RetryHint::AfterChange);
    assert!(!e.is_retryable());

    // A container with a running processing cannot be deleted.
    let e = client.delete_container(container.id).await.unwrap_err();
    assert_eq!(api_status(&e), 409);
    assert_eq!(e.operation(), Some("deleteContainer"));

    // Paths are unique within a container.
    let e = client
        .create_container(CreateContainerRequest {
            files: vec![file("a/x.ubx", 1), file("a/x.ubx", 2)],
            ..container_request(None)
        })
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 409);
    let other = client
        .create_container(CreateContainerRequest {
            files: vec![file("a/x.ubx", 1), file("a/y.ubx", 2)],
            ..container_request(None)
        })
        .await
        .unwrap();
    let e = client
        .add_container_files(other.id, vec![file("a/x.ubx", 3)])
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 409);
    assert_eq!(e.operation(), Some("addContainerFiles"));
    let y = other.files.iter().find(|f| f.path == "a/y.ubx").unwrap();
    let e = client
        .update_container_file(
            y.id,
            UpdateContainerFileRequest {
                path: Some("a/x.ubx".to_owned()),
                ..UpdateContainerFileRequest::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 409);
    assert_eq!(e.operation(), Some("updateContainerFile"));

    // A registered file that is not uploaded: 409 as well.
    client.cancel_processing(running.id).await.unwrap();
    let e = client
        .start_processing(processing_request(other.id))
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 409);
    assert!(e.details().unwrap().contains("a/x.ubx"), "{e}");

    // Canceled: no longer running.
    let e = client.cancel_processing(running.id).await.unwrap_err();
    assert_eq!(api_status(&e), 409);
    assert_eq!(e.operation(), Some("cancelProcessing"));
    client.delete_container(container.id).await.unwrap();
    let p = client.get_processing(running.id).await.unwrap();
    assert_eq!(p.status, ProcessingStatus::Canceled);
    assert_eq!(p.container_id, None);

    // No processing credit left: 403.
    emu.set_credits(emu.info().organization_id, 0);
    let empty = client
        .create_container(container_request(None))
        .await
        .unwrap();
    let e = client
        .start_processing(processing_request(empty.id))
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 403);
    assert!(!e.is_retryable());
}

#[tokio::test]
async fn limits_are_checked_before_anything_is_sent() {
    let emu = default_emulator().await;
    let p = proxied(emu.info(), |_| {}).await;
    let client = &p.client;

    let too_many: Metadata = (0..51).map(|i| (format!("k{i}"), "v".to_owned())).collect();
    let long_key = "k".repeat(41);
    let cases: Vec<(CloudError, &str)> = vec![
        (
            client
                .create_container(container_request(Some(too_many.clone())))
                .await
                .unwrap_err(),
            "metadata has 51 keys",
        ),
        (
            client
                .update_container(
                    Uuid::new_v4(),
                    UpdateContainerRequest {
                        metadata: Some(metadata(&[(long_key.as_str(), "v")])),
                    },
                )
                .await
                .unwrap_err(),
            long_key.as_str(),
        ),
        (
            client
                .create_container(CreateContainerRequest {
                    files: vec![file("ok.ubx", 1), file("../outside.ubx", 1)],
                    ..container_request(None)
                })
                .await
                .unwrap_err(),
            r#"files[1].path: invalid container file path "../outside.ubx""#,
        ),
        (
            client
                .add_container_files(
                    Uuid::new_v4(),
                    vec![CreateContainerFile {
                        metadata: Some(metadata(&[("note", &"x".repeat(501))])),
                        ..file("a.ubx", 1)
                    }],
                )
                .await
                .unwrap_err(),
            r#"files[0].metadata: the value of metadata key "note""#,
        ),
        (
            client
                .add_container_files(Uuid::new_v4(), vec![file("a.ubx", -1)])
                .await
                .unwrap_err(),
            "files[0].size must not be negative",
        ),
        (
            client
                .update_container_file(
                    Uuid::new_v4(),
                    UpdateContainerFileRequest {
                        path: Some("/abs.ubx".to_owned()),
                        ..UpdateContainerFileRequest::default()
                    },
                )
                .await
                .unwrap_err(),
            r#""/abs.ubx""#,
        ),
        (
            client
                .start_processing(StartProcessingRequest {
                    metadata: Some(too_many.clone()),
                    ..processing_request(Uuid::new_v4())
                })
                .await
                .unwrap_err(),
            "51 keys",
        ),
        (
            client
                .create_webhook_endpoint(CreateWebhookEndpointRequest {
                    metadata: Some(too_many),
                    ..endpoint_request("https://hooks.example.com")
                })
                .await
                .unwrap_err(),
            "51 keys",
        ),
        (
            client.list_containers_page(-1, 10).await.unwrap_err(),
            "page -1 does not exist",
        ),
        (
            client.list_processings_page(0, 0).await.unwrap_err(),
            "perPage 0 is out of range",
        ),
        (
            client
                .list_webhook_endpoints_page(0, 101)
                .await
                .unwrap_err(),
            "perPage 101",
        ),
        (
            client
                .list_missed_webhooks_page(Uuid::new_v4(), -3, 10)
                .await
                .unwrap_err(),
            "page -3",
        ),
    ];
    for (e, needle) in &cases {
        match e {
            CloudError::InvalidInput { reason, .. } => {
                assert!(reason.contains(needle), "{reason:?} lacks {needle:?}");
            }
            other => panic!("expected InvalidInput, got {other:?}"),
        }
        assert_eq!(e.retry_hint(), RetryHint::AfterChange);
        assert!(e.to_string().contains("invalid input"), "{e}");
    }
    assert!(matches!(
        &cases[1].0,
        CloudError::InvalidInput {
            operation: "updateContainer",
            limit: Some(LimitError::MetadataKeyTooLong { length: 41, .. }),
            ..
        }
    ));
    assert!(p.auth.hits().is_empty(), "{:?}", p.auth.hits());
    assert!(p.cloud.hits().is_empty(), "{:?}", p.cloud.hits());
}

#[tokio::test]
async fn what_only_the_server_can_check_answers_422() {
    let emu = default_emulator().await;
    let client = client_for(emu.info());
    // A region this SDK does not know is sent as is (the value set may grow); this
    // server does not know it either.
    let e = client
        .create_container(CreateContainerRequest {
            region: ContainerRegion::Unknown("mars-north-1".to_owned()),
            ..container_request(None)
        })
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 422);
    assert_eq!(e.operation(), Some("createContainer"));
    assert!(e.details().unwrap().contains("mars-north-1"), "{e}");
    assert!(!e.is_retryable());
    assert!(client.list_containers_all().await.unwrap().is_empty());

    let e = client
        .create_webhook_endpoint(endpoint_request("not a url"))
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 422);
    let e = client
        .create_webhook_endpoint(CreateWebhookEndpointRequest {
            enabled_event_types: Vec::new(),
            ..endpoint_request("https://hooks.example.com")
        })
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 422);
    assert_eq!(e.retry_hint(), RetryHint::AfterChange);
}

#[tokio::test]
async fn error_answers_reach_the_caller_typed_and_only_transient_ones_are_retried() {
    let emu = default_emulator().await;
    let p = proxied(emu.info(), |_| {}).await;
    let container = p
        .client
        .create_container(container_request(None))
        .await
        .unwrap();
    let path = format!("/api/v2/containers/{}", container.id);

    // 400: typed, not retried.
    let bad = r#"{"title":"Bad Request","details":"malformed JSON body"}"#;
    p.cloud
        .on("GET", &path, 1, Action::Answer(400, bad.to_owned()));
    let e = p.client.get_container(container.id).await.unwrap_err();
    assert_eq!(api_status(&e), 400);
    assert_eq!(e.title(), Some("Bad Request"));
    assert_eq!(e.details(), Some("malformed JSON body"));
    assert_eq!(e.retry_hint(), RetryHint::AfterChange);
    assert_eq!(p.cloud.count("GET", &path), 1);

    // 500 twice, then the real answer: a read is retried.
    let failed = r#"{"title":"Internal Server Error","details":"boom"}"#;
    p.cloud
        .on("GET", &path, 2, Action::Answer(500, failed.to_owned()));
    p.client.get_container(container.id).await.unwrap();
    assert_eq!(p.cloud.count("GET", &path), 4);

    // A status the document does not list (a gateway's 503, not JSON): typed and retried.
    p.cloud.on(
        "GET",
        &path,
        1,
        Action::Answer(503, "upstream down".to_owned()),
    );
    p.client.get_container(container.id).await.unwrap();
    assert_eq!(p.cloud.count("GET", &path), 6);
    p.cloud.on(
        "GET",
        &path,
        100,
        Action::Answer(503, "upstream down".to_owned()),
    );
    let e = p.client.get_container(container.id).await.unwrap_err();
    assert_eq!(api_status(&e), 503);
    assert_eq!(e.title(), Some("Service Unavailable"));
    assert_eq!(e.details(), Some("upstream down"));
    assert!(e.is_retryable());
    assert_eq!(
        p.cloud.count("GET", &path),
        6 + 8,
        "bounded by max_attempts"
    );
    p.cloud.state.rules.lock().unwrap().clear();

    // A 500 to a creation is not retried: it does not say what was applied.
    let create = format!(
        "/api/v2/organizations/{}/containers",
        emu.info().organization_id
    );
    p.cloud
        .on("POST", &create, 1, Action::Answer(500, failed.to_owned()));
    let e = p
        .client
        .create_container(container_request(None))
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 500);
    assert_eq!(e.retry_hint(), RetryHint::Transient);
    assert_eq!(
        p.cloud.count("POST", &create),
        2,
        "the first creation and this one"
    );
}

#[tokio::test]
async fn a_lost_answer_is_never_a_duplicate_creation() {
    let emu = default_emulator().await;
    let p = proxied(emu.info(), |c| {
        c.request_timeout = Duration::from_secs(1);
    })
    .await;
    p.client.server_info().await.unwrap();
    let create = format!(
        "/api/v2/organizations/{}/containers",
        emu.info().organization_id
    );

    // The service creates the container, but the answer is lost (timeout).
    p.cloud.on(
        "POST",
        &create,
        1,
        Action::LoseAnswer(Duration::from_secs(3)),
    );
    let e = p
        .client
        .create_container(container_request(Some(metadata(&[("n", "1")]))))
        .await
        .unwrap_err();
    match &e {
        CloudError::Transport {
            kind, operation, ..
        } => {
            assert_eq!(*kind, TransportKind::Timeout);
            assert!(kind.may_have_reached_service());
            assert_eq!(*operation, "createContainer");
        }
        other => panic!("expected a transport error, got {other:?}"),
    }
    // One kind for a request without an answer in time, whichever side: the side says
    // which.
    assert_eq!(e.kind(), svc_core::ErrorKind::Timeout);
    assert_eq!(e.side(), Some(svc_core::Side::Service));
    assert!(e.to_string().contains("timed out"), "{e}");
    assert!(e.is_retryable(), "the caller may decide to try again");
    assert_eq!(
        p.cloud.count("POST", &create),
        1,
        "not repeated by the client"
    );
    let all = p.client.list_containers_all().await.unwrap();
    assert_eq!(all.len(), 1, "exactly one container exists");

    // A delete whose answer is lost is repeated; the 404 that follows is its success.
    let path = format!("/api/v2/containers/{}", all[0].id);
    p.cloud.on(
        "DELETE",
        &path,
        1,
        Action::LoseAnswer(Duration::from_secs(3)),
    );
    p.client.delete_container(all[0].id).await.unwrap();
    assert_eq!(p.cloud.count("DELETE", &path), 2);
    assert!(p.client.list_containers_all().await.unwrap().is_empty());
}
