//! SigV4: the AWS example, the signed POST policy handed out.

use super::*;

/// The pre-signed GET example of the AWS SigV4 documentation ("Authenticating
/// Requests: Using Query Parameters").
#[test]
fn sigv4_query_signature_matches_the_aws_example() {
    let query = canonical_query(
        [
            ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"),
            (
                "X-Amz-Credential",
                "AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request",
            ),
            ("X-Amz-Date", "20130524T000000Z"),
            ("X-Amz-Expires", "86400"),
            ("X-Amz-SignedHeaders", "host"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned())),
    );
    let request = canonical_request(
        "GET",
        "/test.txt",
        &query,
        &[("host", "examplebucket.s3.amazonaws.com")],
    );
    let to_sign = string_to_sign("20130524T000000Z", "20130524", "us-east-1", &request);
    assert!(
        to_sign.ends_with("3bfa292879f6447bbcda7001decf97f4a54dc650c8942174ae0a9121cf58ad04"),
        "{to_sign}"
    );
    let key = signing_key(
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "20130524",
        "us-east-1",
    );
    assert_eq!(
        hex::encode(hmac_sha256(&key, to_sign.as_bytes())),
        "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
    );
}

#[tokio::test]
async fn presign_upload_gives_the_fields_in_order_with_a_signed_policy() {
    let h = Harness::start().await;
    let (url, fields) = h.presign("c1/raw/base.obs", 1234);
    assert_eq!(url, format!("{}/{BUCKET}", h.base));
    let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, UPLOAD_FIELDS);
    // The order of the service's own clients: the token of temporary credentials last.
    assert_eq!(
        names,
        [
            "bucket",
            "X-Amz-Algorithm",
            "X-Amz-Credential",
            "X-Amz-Date",
            "key",
            "Policy",
            "X-Amz-Signature",
            "X-Amz-Security-Token",
        ]
    );
    let value = |name: &str| {
        fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    assert_eq!(value("key"), "c1/raw/base.obs");
    assert_eq!(value("bucket"), BUCKET);
    assert_eq!(value("X-Amz-Algorithm"), "AWS4-HMAC-SHA256");
    let amz_date = value("X-Amz-Date");
    let signed_at = parse_amz_date(&amz_date).unwrap();
    assert_eq!(
        value("X-Amz-Credential"),
        format!("{ACCESS_KEY}/{}/eu-west-3/s3/aws4_request", &amz_date[..8])
    );

    let policy_json = base64::engine::general_purpose::STANDARD
        .decode(value("Policy"))
        .unwrap();
    let policy: serde_json::Value = serde_json::from_slice(&policy_json).unwrap();
    let expiration = policy["expiration"].as_str().unwrap();
    assert_eq!(
        expiration.len(),
        "2024-01-01T00:00:00.000Z".len(),
        "{expiration}"
    );
    assert!(expiration.ends_with('Z'));
    let expiration = DateTime::parse_from_rfc3339(expiration)
        .unwrap()
        .with_timezone(&Utc);
    let ttl = expiration - signed_at;
    assert!(
        ttl >= TimeDelta::seconds(600) && ttl < TimeDelta::seconds(601),
        "{ttl}"
    );
    assert_eq!(value("X-Amz-Security-Token"), SESSION_TOKEN);
    assert_eq!(
        policy["conditions"],
        serde_json::json!([
            {"bucket": BUCKET},
            {"x-amz-algorithm": "AWS4-HMAC-SHA256"},
            {"x-amz-credential": value("X-Amz-Credential")},
            {"x-amz-date": amz_date},
            {"key": "c1/raw/base.obs"},
            {"x-amz-security-token": SESSION_TOKEN},
            ["content-length-range", 1234, 1234],
        ])
    );
    let key = signing_key(SECRET_KEY, &amz_date[..8], "eu-west-3");
    assert_eq!(
        value("X-Amz-Signature"),
        hex::encode(hmac_sha256(&key, value("Policy").as_bytes()))
    );
}

/// Extra fields follow the standard ones, in the order configured, each with a policy
/// condition on its value (the name as handed out); the session token is a fresh
/// base64 string.
#[tokio::test]
async fn extra_fields_are_handed_out_last_and_signed_into_the_policy() {
    let h = Harness::start_with_extra_fields(&[
        ("x-amz-meta-origin", "svc tests/1"),
        ("Content-Type", "application/octet-stream"),
    ])
    .await;
    let (_, fields) = h.presign("c1/raw/base.obs", 7);
    let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
    let mut expected = UPLOAD_FIELDS.to_vec();
    expected.extend(["x-amz-meta-origin", "Content-Type"]);
    assert_eq!(names, expected);
    assert_eq!(fields[8].1, "svc tests/1");
    let policy = fields
        .iter()
        .find(|(n, _)| n == "Policy")
        .unwrap()
        .1
        .clone();
    let policy: serde_json::Value = serde_json::from_slice(
        &base64::engine::general_purpose::STANDARD
            .decode(policy)
            .unwrap(),
    )
    .unwrap();
    let conditions = policy["conditions"].as_array().unwrap();
    assert_eq!(
        conditions[conditions.len() - 3..],
        [
            serde_json::json!({"x-amz-meta-origin": "svc tests/1"}),
            serde_json::json!({"Content-Type": "application/octet-stream"}),
            serde_json::json!(["content-length-range", 7, 7]),
        ]
    );

    let token = new_session_token();
    assert_eq!(token.len(), 136, "{token}");
    assert!(token.ends_with("=="), "{token}");
    assert!(
        base64::engine::general_purpose::STANDARD
            .decode(&token)
            .is_ok_and(|bytes| bytes.len() == 100)
    );
    assert_ne!(token, new_session_token());
}
