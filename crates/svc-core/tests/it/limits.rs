//! `svc_core::limits`: metadata, container file paths, paging.

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
