//! `svc_core::limits`: metadata, container file paths, paging; and the service refusing
//! what these checks would have refused, when a request bypasses them.

use svc_core::Metadata;
use svc_core::limits::{
    LimitError, MAX_CONTAINER_PATH_BYTES, MAX_METADATA_KEY_CHARS, MAX_METADATA_KEYS,
    MAX_METADATA_VALUE_CHARS, MAX_PER_PAGE, MIN_PAGE, MIN_PER_PAGE, PathProblem,
    check_container_path, check_metadata, check_page,
};

fn metadata(pairs: &[(&str, &str)]) -> Metadata {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn the_limits_are_the_specifications() {
    assert_eq!(MAX_METADATA_KEYS, 50);
    assert_eq!(MAX_METADATA_KEY_CHARS, 40);
    assert_eq!(MAX_METADATA_VALUE_CHARS, 500);
    assert_eq!(MAX_CONTAINER_PATH_BYTES, 1024);
    assert_eq!((MIN_PAGE, MIN_PER_PAGE, MAX_PER_PAGE), (0, 1, 100));
}

#[test]
fn metadata_at_the_limits_is_accepted() {
    assert_eq!(check_metadata(&Metadata::new()), Ok(()));
    let full: Metadata = (0..50)
        .map(|i| (format!("key{i}"), "v".repeat(500)))
        .collect();
    assert_eq!(check_metadata(&full), Ok(()));
    // Characters, not bytes: 40 two-byte characters and 500 four-byte ones.
    let wide = metadata(&[(&"é".repeat(40), &"🛰".repeat(500)), ("", "")]);
    assert_eq!(check_metadata(&wide), Ok(()));
}

#[test]
fn too_many_keys() {
    let metadata: Metadata = (0..51)
        .map(|i| (format!("key{i}"), "x".repeat(600)))
        .collect();
    let error = check_metadata(&metadata).unwrap_err();
    assert_eq!(error, LimitError::MetadataTooManyKeys { count: 51 });
    assert_eq!(
        error.to_string(),
        "metadata has 51 keys; at most 50 are allowed"
    );
}

#[test]
fn a_key_too_long_is_named() {
    let key = "é".repeat(41);
    let error = check_metadata(&metadata(&[
        ("project", "ok"),
        (&key, "v"),
        ("x", &"y".repeat(501)),
    ]))
    .unwrap_err();
    assert_eq!(
        error,
        LimitError::MetadataKeyTooLong {
            key: key.clone(),
            length: 41
        }
    );
    assert_eq!(
        error.to_string(),
        format!("metadata key \"{key}\" is 41 characters long; at most 40 are allowed")
    );
}

#[test]
fn a_value_too_long_is_named_by_its_key() {
    let error =
        check_metadata(&metadata(&[("project", "ok"), ("notes", &"ü".repeat(501))])).unwrap_err();
    assert_eq!(
        error,
        LimitError::MetadataValueTooLong {
            key: "notes".into(),
            length: 501
        }
    );
    assert_eq!(
        error.to_string(),
        "the value of metadata key \"notes\" is 501 characters long; at most 500 are allowed"
    );
}

#[test]
fn a_very_long_key_is_shortened_in_the_message_only() {
    let key = "k".repeat(300);
    let error = check_metadata(&metadata(&[(&key, "v")])).unwrap_err();
    let message = error.to_string();
    assert!(
        message.starts_with(&format!(
            "metadata key \"{}\"… is 300 characters",
            "k".repeat(64)
        )),
        "{message}"
    );
    assert!(matches!(error, LimitError::MetadataKeyTooLong { key: whole, .. } if whole == key));
}

#[test]
fn valid_container_paths() {
    for path in [
        "gnss.ubx",
        "rover/2024-07-02/gnss.ubx",
        "resources/export profiles/kml.json",
        "a..b/c...d",
        ".hidden",
        "./a",
        "a//b",
        "dir/",
        "back\\slash",
        "données/relevé 北京.bin",
        &"a".repeat(1024),
        &"é".repeat(512),
    ] {
        assert_eq!(check_container_path(path), Ok(()), "{path}");
    }
}

#[test]
fn invalid_container_paths_and_their_reasons() {
    let cases: [(&str, PathProblem, &str); 8] = [
        (
            "",
            PathProblem::Empty,
            r#"invalid container file path "": it is empty"#,
        ),
        (
            "/data/gnss.ubx",
            PathProblem::Absolute,
            r#"invalid container file path "/data/gnss.ubx": it must be relative to the container, without a leading "/""#,
        ),
        (
            "..",
            PathProblem::ParentComponent,
            r#"invalid container file path "..": it must not contain a ".." component"#,
        ),
        (
            "../gnss.ubx",
            PathProblem::ParentComponent,
            r#"invalid container file path "../gnss.ubx": it must not contain a ".." component"#,
        ),
        (
            "rover/../../gnss.ubx",
            PathProblem::ParentComponent,
            r#"invalid container file path "rover/../../gnss.ubx": it must not contain a ".." component"#,
        ),
        (
            "rover/..",
            PathProblem::ParentComponent,
            r#"invalid container file path "rover/..": it must not contain a ".." component"#,
        ),
        (
            "gnss\0.ubx",
            PathProblem::ContainsNul,
            r#"invalid container file path "gnss\0.ubx": it must not contain a NUL character"#,
        ),
        (
            "/..\0",
            PathProblem::ContainsNul,
            r#"invalid container file path "/..\0": it must not contain a NUL character"#,
        ),
    ];
    for (path, reason, message) in cases {
        let error = check_container_path(path).unwrap_err();
        assert_eq!(
            error,
            LimitError::InvalidPath {
                path: path.to_owned(),
                reason
            }
        );
        assert_eq!(error.to_string(), message);
    }
}

#[test]
fn the_path_limit_counts_bytes() {
    let error = check_container_path(&"é".repeat(513)).unwrap_err();
    assert!(matches!(
        error,
        LimitError::InvalidPath {
            reason: PathProblem::TooLong { bytes: 1026 },
            ..
        }
    ));
    let message = error.to_string();
    assert!(message.starts_with(&format!(
        "invalid container file path \"{}\"…: ",
        "é".repeat(64)
    )));
    assert!(
        message.ends_with(": it is 1026 bytes long; at most 1024 bytes are allowed"),
        "{message}"
    );
    assert!(check_container_path(&"a".repeat(1025)).is_err());
    // Too long is reported before the other problems.
    assert!(matches!(
        check_container_path(&format!("/{}", "../".repeat(400))),
        Err(LimitError::InvalidPath {
            reason: PathProblem::TooLong { .. },
            ..
        })
    ));
}

#[test]
fn paging() {
    for (page, per_page) in [(0, 1), (0, 100), (7, 50), (i64::MAX, 100)] {
        assert_eq!(check_page(page, per_page), Ok(()));
    }
    assert_eq!(
        check_page(-1, 10),
        Err(LimitError::InvalidPage { page: -1 })
    );
    assert_eq!(check_page(-1, 0), Err(LimitError::InvalidPage { page: -1 }));
    for per_page in [0, 101, -5, i64::MIN] {
        assert_eq!(
            check_page(0, per_page),
            Err(LimitError::InvalidPerPage { per_page })
        );
    }
    assert_eq!(
        check_page(-1, 10).unwrap_err().to_string(),
        "page -1 does not exist; pages are numbered from 0"
    );
    assert_eq!(
        check_page(0, 101).unwrap_err().to_string(),
        "perPage 101 is out of range; it must be between 1 and 100"
    );
}

// ------------------------------------------------------- the service refuses it too

/// What the SDK's checks refuse is refused by the service as well: each request below
/// is sent with the generated client (`CloudClient::cloud_api`, which has no limit
/// checks) to the emulator, a second implementation of the specification, which answers
/// 422 with the same reason in `details`; the SDK's own call refuses it before sending.
/// This exercises the "the service refused it" path for input the SDK would have
/// caught, e.g. from a client of another language or an older SDK.
#[tokio::test]
async fn the_service_refuses_what_the_sdk_checks_would_have_refused() {
    use svc_core::cloud::{
        CloudClient, CloudError, ContainerFileType, ContainerRegion, CreateContainerFile,
        CreateContainerRequest,
    };
    use svc_emulator::{Emulator, EmulatorConfig};

    /// The status and `details` of the service's error answer.
    fn refusal<T: std::fmt::Debug>(
        result: Result<T, svc_cloud_api::cloud::Error<svc_cloud_api::cloud::types::Error>>,
    ) -> (u16, String) {
        match result.unwrap_err() {
            svc_cloud_api::cloud::Error::ErrorResponse(answer) => {
                (answer.status().as_u16(), answer.into_inner().details)
            }
            other => panic!("expected an error answer, got {other:?}"),
        }
    }

    /// The SDK refuses the same request before sending, for the same reason.
    fn refused_by_the_sdk<T: std::fmt::Debug>(result: Result<T, CloudError>, reason: &str) {
        match result.unwrap_err() {
            CloudError::InvalidInput {
                limit: Some(limit), ..
            } => assert_eq!(limit.to_string(), reason),
            other => panic!("expected a limit error, got {other:?}"),
        }
    }

    let emulator = Emulator::start(EmulatorConfig {
        device: None,
        ..EmulatorConfig::default()
    })
    .await
    .expect("emulator starts");
    let info = emulator.info();
    let client = CloudClient::new(crate::common::cloud_config(info)).expect("valid settings");
    let (api, org) = (client.cloud_api(), client.organization_id());
    let request = |metadata: Option<Metadata>, path: &str| CreateContainerRequest {
        region: ContainerRegion::EuWest3,
        metadata,
        files: vec![CreateContainerFile {
            metadata: None,
            path: path.to_owned(),
            size: 1,
            type_: ContainerFileType::Input,
        }],
    };

    // Metadata over the limit: 51 keys.
    let too_many: Metadata = (0..51).map(|i| (format!("k{i}"), "v".to_owned())).collect();
    let reason = check_metadata(&too_many).unwrap_err().to_string();
    let raw = request(Some(too_many), "gnss.ubx");
    refused_by_the_sdk(client.create_container(raw.clone()).await, &reason);
    let sent = api.create_container().organization_id(org).body(raw);
    assert_eq!(
        refusal(sent.send().await),
        (422, format!("`metadata`: {reason}"))
    );

    // A container file path leaving the container.
    let reason = check_container_path("../outside.ubx")
        .unwrap_err()
        .to_string();
    let raw = request(None, "../outside.ubx");
    refused_by_the_sdk(client.create_container(raw.clone()).await, &reason);
    let sent = api.create_container().organization_id(org).body(raw);
    assert_eq!(
        refusal(sent.send().await),
        (422, format!("`files[0].path`: {reason}"))
    );

    // A page size over the limit.
    let reason = check_page(0, 101).unwrap_err().to_string();
    refused_by_the_sdk(client.list_containers_page(0, 101).await, &reason);
    let sent = api
        .list_containers()
        .organization_id(org)
        .page(0_u64)
        .per_page(101_u64);
    assert_eq!(refusal(sent.send().await), (422, reason));

    // Nothing was created by the refused requests.
    assert!(client.list_containers_all().await.unwrap().is_empty());
}
