//! The POST policy of browser-style uploads: the signed form handed out for each
//! registered file, and the checks of a received form against it (403 `AccessDenied`).

use base64::Engine as _;
use chrono::{DateTime, Utc};
use hmac::Mac as _;
use indexmap::IndexMap;

use super::Storage;
use super::error::S3Error;
use super::sigv4::{ALGORITHM, Credential, add_duration, hmac_for, hmac_sha256, signature_bytes};

/// Longest accepted value of a non-file form field.
pub(super) const MAX_FIELD_LEN: usize = 64 * 1024;

/// The 8 upload fields every form carries, in the order they are handed out; the
/// storage's extra fields ([`super::StorageConfig::extra_fields`]) follow.
pub(super) use svc_cloud_api::UPLOAD_FIELDS;

/// The field of the session token of temporary credentials.
const SECURITY_TOKEN: &str = "X-Amz-Security-Token";

impl Storage {
    /// `uploadInfo` for one registered file: the form's address and its fields, in order.
    pub fn presign_upload(
        &self,
        bucket: &str,
        key: &str,
        size: u64,
    ) -> (String, IndexMap<String, String>) {
        let now = self.now();
        let date = now.format("%Y%m%d").to_string();
        let amz_date = now.format("%Y%m%dT%H%M%SZ").to_string();
        let region = Self::region_of_bucket(bucket);
        let credential = format!("{}/{date}/{region}/s3/aws4_request", self.config.access_key);
        let expiration = add_duration(now, self.config.upload_ttl)
            .format("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string();
        let token = self.config.session_token.as_str();
        let mut conditions = vec![
            serde_json::json!({"bucket": bucket}),
            serde_json::json!({"x-amz-algorithm": ALGORITHM}),
            serde_json::json!({"x-amz-credential": credential}),
            serde_json::json!({"x-amz-date": amz_date}),
            serde_json::json!({"key": key}),
            serde_json::json!({"x-amz-security-token": token}),
        ];
        for (name, value) in &self.config.extra_fields {
            let mut condition = serde_json::Map::new();
            condition.insert(name.clone(), serde_json::Value::String(value.clone()));
            conditions.push(serde_json::Value::Object(condition));
        }
        conditions.push(serde_json::json!(["content-length-range", size, size]));
        let policy = serde_json::json!({
            "expiration": expiration,
            "conditions": conditions,
        });
        let policy = base64::engine::general_purpose::STANDARD.encode(policy.to_string());
        let signature = hex::encode(hmac_sha256(
            &self.signing_key(&date, region),
            policy.as_bytes(),
        ));
        let mut fields = IndexMap::from([
            ("bucket".to_owned(), bucket.to_owned()),
            ("X-Amz-Algorithm".to_owned(), ALGORITHM.to_owned()),
            ("X-Amz-Credential".to_owned(), credential),
            ("X-Amz-Date".to_owned(), amz_date),
            ("key".to_owned(), key.to_owned()),
            ("Policy".to_owned(), policy),
            ("X-Amz-Signature".to_owned(), signature),
            (SECURITY_TOKEN.to_owned(), token.to_owned()),
        ]);
        fields.extend(self.config.extra_fields.iter().cloned());
        (format!("{}/{bucket}", self.config.public_url), fields)
    }

    /// Checks the form fields received before `file` against the signed policy. A
    /// value that is not UTF-8 (`None`) cannot match its signature: 403, like any
    /// modified field, unless the field is ignored (`x-ignore-*`).
    pub(super) fn check_form(
        &self,
        bucket: &str,
        fields: &[(String, Option<String>)],
    ) -> Result<Expected, S3Error> {
        for (i, (name, _)) in fields.iter().enumerate() {
            if fields
                .iter()
                .skip(i + 1)
                .any(|(other, _)| other.eq_ignore_ascii_case(name))
            {
                return Err(S3Error::denied(format!(
                    "Field {name} appears more than once"
                )));
            }
        }
        for name in UPLOAD_FIELDS {
            if !fields.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
                return Err(S3Error::denied(format!("Field {name} missing")));
            }
        }
        for (name, value) in fields {
            if value.is_none() && !name.to_ascii_lowercase().starts_with("x-ignore-") {
                return Err(S3Error::denied(format!(
                    "Field {name} is not valid UTF-8: it does not match its signature"
                )));
            }
        }
        let get = |name: &str| {
            fields
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .and_then(|(_, v)| v.as_deref())
        };
        let field = |name: &str| get(name).unwrap_or_default();
        if field("bucket") != bucket {
            return Err(S3Error::denied(
                "Field bucket does not match the bucket in the address",
            ));
        }
        if field("X-Amz-Algorithm") != ALGORITHM {
            return Err(S3Error::denied(format!(
                "Field X-Amz-Algorithm must be {ALGORITHM}"
            )));
        }
        let credential = Credential::parse(field("X-Amz-Credential"))
            .ok_or_else(|| S3Error::denied("Field X-Amz-Credential is malformed"))?;
        if credential.access_key != self.config.access_key {
            return Err(S3Error::denied(
                "The access key in X-Amz-Credential is unknown",
            ));
        }
        // The access key is a temporary one: it goes with its session's token only.
        if !same_secret(field(SECURITY_TOKEN), &self.config.session_token) {
            return Err(S3Error::denied(
                "The security token in X-Amz-Security-Token is not the session token of the access key",
            ));
        }
        let policy_b64 = field("Policy");
        let signature = signature_bytes(field("X-Amz-Signature"));
        let mac = hmac_for(
            &self.signing_key(&credential.date, &credential.region),
            policy_b64.as_bytes(),
        );
        if mac.verify_slice(&signature).is_err() {
            return Err(S3Error::denied("Signature does not match"));
        }
        let policy =
            Policy::parse(policy_b64).ok_or_else(|| S3Error::denied("Policy is malformed"))?;
        if self.now() >= policy.expiration {
            return Err(S3Error::denied("Policy expired"));
        }
        let mut length_range = None;
        for condition in &policy.conditions {
            match condition {
                Condition::Eq(name, value) => {
                    if get(name) != Some(value.as_str()) {
                        return Err(S3Error::denied(format!(
                            "Field {} does not match the policy",
                            self.display_name(name)
                        )));
                    }
                }
                Condition::StartsWith(name, prefix) => {
                    if !get(name).is_some_and(|v| v.starts_with(prefix.as_str())) {
                        return Err(S3Error::denied(format!(
                            "Field {} does not match the policy",
                            self.display_name(name)
                        )));
                    }
                }
                Condition::LengthRange(min, max) => length_range = Some((*min, *max)),
            }
        }
        for (name, _) in fields {
            let lower = name.to_ascii_lowercase();
            let exempt = matches!(lower.as_str(), "x-amz-signature" | "policy" | "file")
                || lower.starts_with("x-ignore-");
            if !exempt && !policy.covers(&lower) {
                return Err(S3Error::denied(format!(
                    "Field {name} is not allowed by the policy"
                )));
            }
        }
        Ok(Expected {
            key: field("key").to_owned(),
            length_range,
        })
    }
}

/// What an accepted form allows.
pub(super) struct Expected {
    pub(super) key: String,
    pub(super) length_range: Option<(u64, u64)>,
}

impl Storage {
    /// The name a policy condition's field has in the handed-out form.
    fn display_name<'a>(&'a self, lower: &'a str) -> &'a str {
        UPLOAD_FIELDS
            .iter()
            .copied()
            .chain(
                self.config
                    .extra_fields
                    .iter()
                    .map(|(name, _)| name.as_str()),
            )
            .find(|f| f.eq_ignore_ascii_case(lower))
            .unwrap_or(lower)
    }
}

/// Whether a received secret equals the expected one, in a time that does not depend on
/// where they differ.
fn same_secret(received: &str, expected: &str) -> bool {
    received.len() == expected.len()
        && received
            .bytes()
            .zip(expected.bytes())
            .fold(0_u8, |diff, (a, b)| diff | (a ^ b))
            == 0
}

/// Why an extra form field ([`super::StorageConfig::extra_fields`]) cannot be handed out, if
/// it cannot: a name that is empty, not made of ASCII letters, digits, `-`, `_` and
/// `.`, one of the 8 standard fields, `file`, an ignored field (`x-ignore-*`: not
/// checked, it would prove nothing) or given twice; a value longer than a form field may
/// be.
pub(crate) fn extra_field_problem(
    name: &str,
    value: &str,
    before: &[(String, String)],
) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    if name.is_empty() {
        Some("an extra upload field needs a name".to_owned())
    } else if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        Some(format!(
            "the extra upload field {name:?} may hold only ASCII letters, digits, `-`, `_` and `.`"
        ))
    } else if lower == "file" || UPLOAD_FIELDS.iter().any(|f| f.eq_ignore_ascii_case(name)) {
        Some(format!(
            "the extra upload field {name} is a field every form has"
        ))
    } else if lower.starts_with("x-ignore-") {
        Some(format!(
            "the extra upload field {name} would be ignored by the storage (x-ignore-*)"
        ))
    } else if before
        .iter()
        .any(|(other, _)| other.eq_ignore_ascii_case(name))
    {
        Some(format!("the extra upload field {name} is given twice"))
    } else if value.len() > MAX_FIELD_LEN {
        Some(format!(
            "the value of the extra upload field {name} is longer than {} bytes",
            MAX_FIELD_LEN
        ))
    } else {
        None
    }
}

/// A parsed POST policy (field names lower-cased, without `$`).
struct Policy {
    expiration: DateTime<Utc>,
    conditions: Vec<Condition>,
}

enum Condition {
    Eq(String, String),
    StartsWith(String, String),
    LengthRange(u64, u64),
}

impl Policy {
    fn parse(b64: &str) -> Option<Self> {
        let json = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
        let value: serde_json::Value = serde_json::from_slice(&json).ok()?;
        let expiration = DateTime::parse_from_rfc3339(value.get("expiration")?.as_str()?)
            .ok()?
            .with_timezone(&Utc);
        let mut conditions = Vec::new();
        for condition in value.get("conditions")?.as_array()? {
            if let Some(object) = condition.as_object() {
                for (name, value) in object {
                    conditions.push(Condition::Eq(
                        name.to_ascii_lowercase(),
                        value.as_str()?.to_owned(),
                    ));
                }
                continue;
            }
            let items = condition.as_array()?;
            let op = items.first()?.as_str()?.to_ascii_lowercase();
            let field = |i: usize| -> Option<String> {
                Some(
                    items
                        .get(i)?
                        .as_str()?
                        .strip_prefix('$')?
                        .to_ascii_lowercase(),
                )
            };
            let text = |i: usize| -> Option<String> { Some(items.get(i)?.as_str()?.to_owned()) };
            let number = |i: usize| -> Option<u64> {
                let v = items.get(i)?;
                v.as_u64().or_else(|| v.as_str()?.parse().ok())
            };
            conditions.push(match (op.as_str(), items.len()) {
                ("eq", 3) => Condition::Eq(field(1)?, text(2)?),
                ("starts-with", 3) => Condition::StartsWith(field(1)?, text(2)?),
                ("content-length-range", 3) => Condition::LengthRange(number(1)?, number(2)?),
                _ => return None,
            });
        }
        Some(Self {
            expiration,
            conditions,
        })
    }

    fn covers(&self, lower: &str) -> bool {
        self.conditions.iter().any(|c| match c {
            Condition::Eq(name, _) | Condition::StartsWith(name, _) => name == lower,
            Condition::LengthRange(..) => false,
        })
    }
}
