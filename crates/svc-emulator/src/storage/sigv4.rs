//! AWS Signature Version 4 as S3 uses it: the signing key, canonical requests, the
//! query-string pre-signed GET addresses handed out and their verification.

use std::time::Duration;

use axum::http::HeaderMap;
use chrono::{DateTime, NaiveDateTime, TimeDelta, Utc};
use hmac::{Hmac, KeyInit as _, Mac as _};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use sha2::{Digest as _, Sha256};

use super::Storage;
use super::error::S3Error;

/// The only signing algorithm accepted.
pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// Tolerated clock skew for a download address dated in the future.
const MAX_SKEW_SECS: i64 = 15 * 60;

/// SigV4 `UriEncode`: everything except the unreserved characters.
const URI_SET: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

type HmacSha256 = Hmac<Sha256>;

impl Storage {
    /// A pre-signed GET address for an object, valid for `download_ttl`.
    pub fn presign_download(&self, bucket: &str, key: &str) -> String {
        let now = self.now();
        let date = now.format("%Y%m%d").to_string();
        let amz_date = now.format("%Y%m%dT%H%M%SZ").to_string();
        let region = Self::region_of_bucket(bucket);
        let credential = format!("{}/{date}/{region}/s3/aws4_request", self.config.access_key);
        let expires = self.config.download_ttl.as_secs().to_string();
        let params = [
            ("X-Amz-Algorithm", ALGORITHM),
            ("X-Amz-Credential", credential.as_str()),
            ("X-Amz-Date", amz_date.as_str()),
            ("X-Amz-Expires", expires.as_str()),
            ("X-Amz-SignedHeaders", "host"),
        ];
        let query = canonical_query(
            params
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        let (origin, prefix) = split_public_url(&self.config.public_url);
        let uri = canonical_uri(prefix, bucket, key);
        let host = origin
            .split_once("://")
            .map_or(origin, |(_, authority)| authority);
        let request = canonical_request("GET", &uri, &query, &[("host", host)]);
        let signature = hex::encode(hmac_sha256(
            &self.signing_key(&date, region),
            string_to_sign(&amz_date, &date, region, &request).as_bytes(),
        ));
        format!("{origin}{uri}?{query}&X-Amz-Signature={signature}")
    }

    /// Verifies a SigV4 query-string signature (S3 flavour, `UNSIGNED-PAYLOAD`).
    pub(super) fn check_presigned(
        &self,
        bucket: &str,
        key: &str,
        query: &str,
        headers: &HeaderMap,
    ) -> Result<(), S3Error> {
        let mut params: Vec<(String, String)> = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let decode = |s: &str| percent_decode_str(s).decode_utf8().map(|c| c.into_owned());
            let (k, v) = match (decode(k), decode(v)) {
                (Ok(k), Ok(v)) => (k, v),
                _ => return Err(S3Error::denied("Query string is not valid UTF-8")),
            };
            if params.iter().any(|(other, _)| *other == k) {
                return Err(S3Error::denied(format!(
                    "Query parameter {k} appears more than once"
                )));
            }
            params.push((k, v));
        }
        let param = |name: &str| {
            params
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
                .ok_or_else(|| S3Error::denied(format!("Query parameter {name} missing")))
        };
        if param("X-Amz-Algorithm")? != ALGORITHM {
            return Err(S3Error::denied(format!(
                "X-Amz-Algorithm must be {ALGORITHM}"
            )));
        }
        let credential = Credential::parse(param("X-Amz-Credential")?)
            .ok_or_else(|| S3Error::denied("X-Amz-Credential is malformed"))?;
        if credential.access_key != self.config.access_key {
            return Err(S3Error::denied(
                "The access key in X-Amz-Credential is unknown",
            ));
        }
        let amz_date = param("X-Amz-Date")?;
        let signed_at =
            parse_amz_date(amz_date).ok_or_else(|| S3Error::denied("X-Amz-Date is malformed"))?;
        if !amz_date.starts_with(&credential.date) {
            return Err(S3Error::denied(
                "X-Amz-Date does not match the date of X-Amz-Credential",
            ));
        }
        let expires: u64 = param("X-Amz-Expires")?
            .parse()
            .map_err(|_| S3Error::denied("X-Amz-Expires is malformed"))?;
        let signed_headers = param("X-Amz-SignedHeaders")?;
        let signature = param("X-Amz-Signature")?;
        let names: Vec<&str> = signed_headers.split(';').collect();
        if !names.contains(&"host") {
            return Err(S3Error::denied("X-Amz-SignedHeaders must include host"));
        }
        let mut canonical_headers = Vec::new();
        for name in &names {
            let value = headers
                .get(*name)
                .and_then(|v| v.to_str().ok())
                .map(str::trim);
            let value =
                value.ok_or_else(|| S3Error::denied(format!("Signed header {name} missing")))?;
            canonical_headers.push((*name, value));
        }
        let (_, prefix) = split_public_url(&self.config.public_url);
        let query = canonical_query(
            params
                .iter()
                .filter(|(k, _)| k != "X-Amz-Signature")
                .cloned(),
        );
        let request = canonical_request(
            "GET",
            &canonical_uri(prefix, bucket, key),
            &query,
            &canonical_headers,
        );
        let mac = hmac_for(
            &self.signing_key(&credential.date, &credential.region),
            string_to_sign(amz_date, &credential.date, &credential.region, &request).as_bytes(),
        );
        if mac.verify_slice(&signature_bytes(signature)).is_err() {
            return Err(S3Error::denied("Signature does not match"));
        }
        let now = self.now();
        if signed_at - now > TimeDelta::seconds(MAX_SKEW_SECS) {
            return Err(S3Error::denied("Request is not valid yet"));
        }
        if now > add_duration(signed_at, Duration::from_secs(expires)) {
            return Err(S3Error::denied("Request has expired"));
        }
        Ok(())
    }
}

/// The bytes of a SigV4 signature: exactly lower-case hex, as SigV4 writes it (an
/// upper-case or malformed one gives no bytes, so it matches nothing).
pub(super) fn signature_bytes(text: &str) -> Vec<u8> {
    if text
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        hex::decode(text).unwrap_or_default()
    } else {
        Vec::new()
    }
}

/// `<access key>/<yyyymmdd>/<region>/s3/aws4_request`.
pub(super) struct Credential {
    pub(super) access_key: String,
    pub(super) date: String,
    pub(super) region: String,
}

impl Credential {
    pub(super) fn parse(s: &str) -> Option<Self> {
        let mut parts = s.split('/');
        let (access_key, date, region) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next()? != "s3" || parts.next()? != "aws4_request" || parts.next().is_some() {
            return None;
        }
        if date.len() != 8 || !date.bytes().all(|b| b.is_ascii_digit()) || region.is_empty() {
            return None;
        }
        Some(Self {
            access_key: access_key.to_owned(),
            date: date.to_owned(),
            region: region.to_owned(),
        })
    }
}

pub(super) fn hmac_for(key: &[u8], data: &[u8]) -> HmacSha256 {
    // HMAC accepts keys of any length.
    let mut mac = match HmacSha256::new_from_slice(key) {
        Ok(m) => m,
        Err(_) => unreachable!("HMAC takes keys of any length"),
    };
    mac.update(data);
    mac
}

pub(super) fn hmac_sha256(key: &[u8], data: &[u8]) -> Vec<u8> {
    hmac_for(key, data).finalize().into_bytes().to_vec()
}

/// `AWS4`+secret → date → region → `s3` → `aws4_request`.
pub(super) fn signing_key(secret: &str, date: &str, region: &str) -> Vec<u8> {
    let k = hmac_sha256(format!("AWS4{secret}").as_bytes(), date.as_bytes());
    let k = hmac_sha256(&k, region.as_bytes());
    let k = hmac_sha256(&k, b"s3");
    hmac_sha256(&k, b"aws4_request")
}

pub(super) fn string_to_sign(
    amz_date: &str,
    date: &str,
    region: &str,
    canonical_request: &str,
) -> String {
    let hash = hex::encode(Sha256::digest(canonical_request.as_bytes()).as_slice());
    format!("{ALGORITHM}\n{amz_date}\n{date}/{region}/s3/aws4_request\n{hash}")
}

pub(super) fn canonical_request(
    method: &str,
    uri: &str,
    query: &str,
    headers: &[(&str, &str)],
) -> String {
    let mut headers: Vec<(String, &str)> = headers
        .iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), *v))
        .collect();
    headers.sort();
    let canonical_headers: String = headers.iter().map(|(k, v)| format!("{k}:{v}\n")).collect();
    let signed_headers = headers
        .iter()
        .map(|(k, _)| k.as_str())
        .collect::<Vec<_>>()
        .join(";");
    format!("{method}\n{uri}\n{query}\n{canonical_headers}\n{signed_headers}\nUNSIGNED-PAYLOAD")
}

fn uri_encode(s: &str) -> String {
    utf8_percent_encode(s, URI_SET).to_string()
}

/// Sorted, encoded `k=v&…` (SigV4 canonical query string).
pub(super) fn canonical_query(params: impl Iterator<Item = (String, String)>) -> String {
    let mut encoded: Vec<(String, String)> = params
        .map(|(k, v)| (uri_encode(&k), uri_encode(&v)))
        .collect();
    encoded.sort();
    encoded
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// `<prefix>/<bucket>/<key>` with each key segment encoded and `/` kept (S3 style).
pub(super) fn canonical_uri(prefix: &str, bucket: &str, key: &str) -> String {
    let key = key.split('/').map(uri_encode).collect::<Vec<_>>().join("/");
    format!("{prefix}/{}/{key}", uri_encode(bucket))
}

/// `http://host:port/prefix` → (`http://host:port`, `/prefix`).
pub(super) fn split_public_url(url: &str) -> (&str, &str) {
    let url = url.trim_end_matches('/');
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url.get(after_scheme..).and_then(|rest| rest.find('/')) {
        Some(i) => url.split_at(after_scheme + i),
        None => (url, ""),
    }
}

pub(super) fn parse_amz_date(s: &str) -> Option<DateTime<Utc>> {
    NaiveDateTime::parse_from_str(s, "%Y%m%dT%H%M%SZ")
        .ok()
        .map(|d| d.and_utc())
}

pub(super) fn add_duration(t: DateTime<Utc>, d: Duration) -> DateTime<Utc> {
    TimeDelta::from_std(d)
        .ok()
        .and_then(|d| t.checked_add_signed(d))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}
