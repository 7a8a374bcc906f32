//! What the `tracing` instrumentation may write, and how.
//!
//! svc-core emits spans and events with the [`tracing`] crate (targets `svc_core::…`):
//! a span per cloud operation and per HTTP request, token requests, retries with their
//! reason and delay, transfers and their progress, workflow steps, webhook
//! verifications, unit operations and serial link events. Fields carry identifiers,
//! operation names, statuses, sizes, attempt numbers and durations — never an API
//! secret, an access or unit token, a password, a webhook secret or signature, the query
//! of a pre-signed address, or a settings value. Addresses are written without their
//! query string (nor fragment or user information), through [`url`].

pub mod forward;

use std::time::Duration;

/// `address` as it may be logged: without user information, query or fragment (a
/// pre-signed address carries its signature in the query, a unit address its token).
pub(crate) fn url(address: &str) -> String {
    match reqwest::Url::parse(address) {
        Ok(parsed) => parsed_url(&parsed),
        Err(_) => address
            .split(['?', '#'])
            .next()
            .unwrap_or_default()
            .rsplit('@')
            .next()
            .unwrap_or_default()
            .to_owned(),
    }
}

/// As [`url`], for a parsed address.
pub(crate) fn parsed_url(address: &reqwest::Url) -> String {
    let mut clean = address.clone();
    clean.set_query(None);
    clean.set_fragment(None);
    let _ = clean.set_username("");
    let _ = clean.set_password(None);
    clean.to_string()
}

/// A decoder's message (serde's) without the values it quotes: the text of a string
/// value between double quotes becomes `"…"`, and the number, boolean, character or
/// text written between backticks after `integer`, `floating point`, `boolean`,
/// `character`, `unknown variant` or `found` becomes `` `…` ``, so that no value of a
/// body or a settings tree (a password) ends up in an error or a log. Field names and
/// the expected variants, which serde writes between backticks too, stay.
pub(crate) fn without_values(message: &str) -> String {
    const VALUE_WORDS: [&str; 6] = [
        "integer ",
        "floating point ",
        "boolean ",
        "character ",
        "unknown variant ",
        "found ",
    ];
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(c) = rest.chars().next() {
        if c == '"' {
            out.push_str("\"…\"");
            let mut chars = rest[1..].char_indices();
            let mut end = rest.len();
            while let Some((at, inner)) = chars.next() {
                match inner {
                    '\\' => {
                        chars.next();
                    }
                    '"' => {
                        end = 1 + at + 1;
                        break;
                    }
                    _ => {}
                }
            }
            rest = &rest[end..];
        } else if c == '`' && VALUE_WORDS.iter().any(|word| out.ends_with(word)) {
            out.push_str("`…`");
            let value = &rest[1..];
            // serde writes these values unescaped: a variant may hold a backtick, so it
            // ends where serde's own text resumes; a character is one character.
            let end = if out.ends_with("unknown variant `…`") {
                ["`, expected ", "`, there are no variants"]
                    .iter()
                    .filter_map(|tail| value.find(tail))
                    .min()
            } else if out.ends_with("character `…`") {
                value.chars().next().map(char::len_utf8)
            } else {
                value.find('`')
            };
            rest = end.map_or("", |at| value.get(at + 1..).unwrap_or(""));
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// A duration in whole milliseconds, for a field.
pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Query parameters whose values are secrets of a pre-signed address.
const SECRET_PARAMS: [&str; 3] = [
    "X-Amz-Signature",
    "X-Amz-Credential",
    "X-Amz-Security-Token",
];

/// `text` (an address, or a message that may contain one) with the values of
/// `X-Amz-Signature`, `X-Amz-Credential` and `X-Amz-Security-Token` replaced by
/// `[redacted]`, wherever they appear as `name=value` (names compared without case).
///
/// ```
/// use svc_core::transfer::redact_url;
/// assert_eq!(
///     redact_url("https://s3/b/k?X-Amz-Date=1&X-Amz-Signature=abc&x=1"),
///     "https://s3/b/k?X-Amz-Date=1&X-Amz-Signature=[redacted]&x=1",
/// );
/// ```
pub fn redact_url(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut at = 0;
    while at < text.len() {
        let hit = SECRET_PARAMS.iter().find_map(|name| {
            let key = format!("{}=", name.to_ascii_lowercase());
            lower[at..].starts_with(&key).then_some(key.len())
        });
        // A parameter name starts a text or follows a separator.
        let starts = at == 0 || matches!(text.as_bytes()[at - 1], b'?' | b'&' | b' ' | b'(');
        match hit {
            Some(len) if starts => {
                let value_start = at + len;
                let value_end = text[value_start..]
                    .find(|c: char| {
                        matches!(c, '&' | '"' | '\'' | '<' | '>' | ')' | '#') || c.is_whitespace()
                    })
                    .map_or(text.len(), |i| value_start + i);
                out.push_str(&text[copied..value_start]);
                out.push_str("[redacted]");
                copied = value_end;
                at = value_end;
            }
            _ => {
                at += text[at..].chars().next().map_or(1, char::len_utf8);
            }
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// An error and its sources, `: `-separated, addresses redacted.
pub(crate) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    redact_url(&causes(e))
}

/// An error and its sources, `: `-separated (a source whose text the chain already
/// holds is not repeated), as they are: for errors whose addresses hold no secret.
pub(crate) fn causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_hides_every_secret_parameter() {
        let url = "http://127.0.0.1:9/svc-eu/k.x?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AK%2F20240101%2Feu&X-Amz-Date=20240101T000000Z&X-Amz-Signature=deadbeef";
        let r = redact_url(url);
        assert!(!r.contains("deadbeef") && !r.contains("AK%2F"), "{r}");
        assert!(r.contains("X-Amz-Date=20240101T000000Z"), "{r}");
        assert!(r.ends_with("X-Amz-Signature=[redacted]"), "{r}");
        assert_eq!(
            redact_url("error for url (http://h/p?x-amz-signature=s) here"),
            "error for url (http://h/p?x-amz-signature=[redacted]) here"
        );
        assert_eq!(redact_url("no secret é"), "no secret é");
        assert_eq!(
            redact_url("MyX-Amz-Signature=keep"),
            "MyX-Amz-Signature=keep"
        );
    }

    #[test]
    fn decoder_messages_lose_their_values_but_keep_field_names() {
        assert_eq!(
            without_values(
                r#"invalid type: string "top \"secret\" text", expected u64 at line 1 column 9"#
            ),
            r#"invalid type: string "…", expected u64 at line 1 column 9"#
        );
        assert_eq!(
            without_values("missing field `payload` at line 1 column 2"),
            "missing field `payload` at line 1 column 2"
        );
        assert_eq!(
            without_values(r#"unterminated "abc"#),
            r#"unterminated "…""#
        );
        assert_eq!(
            without_values("invalid type: integer `987654321`, expected a string"),
            "invalid type: integer `…`, expected a string"
        );
        assert_eq!(
            without_values("invalid type: floating point `-1.5e3`, expected a boolean"),
            "invalid type: floating point `…`, expected a boolean"
        );
        assert_eq!(
            without_values("invalid type: boolean `true`, expected `ntrip` or `none`"),
            "invalid type: boolean `…`, expected `ntrip` or `none`"
        );
        assert_eq!(
            without_values("unknown variant `s3cr3t`, expected one of `a`, `b`"),
            "unknown variant `…`, expected one of `a`, `b`"
        );
        assert_eq!(
            without_values(
                "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `h` at 0"
            ),
            "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `…` at 0"
        );
        assert_eq!(without_values("integer `unterminated"), "integer `…`");
        // Values holding a backtick (serde does not escape them).
        assert_eq!(
            without_values("unknown variant `p`secret`, expected one of `a`"),
            "unknown variant `…`, expected one of `a`"
        );
        assert_eq!(
            without_values("unknown variant `x`y`, there are no variants"),
            "unknown variant `…`, there are no variants"
        );
        assert_eq!(
            without_values("invalid type: character ```, expected a string"),
            "invalid type: character `…`, expected a string"
        );
        assert_eq!(
            without_values("invalid type: character `é`, expected a string"),
            "invalid type: character `…`, expected a string"
        );
        for cut in [
            "found `",
            "found `é",
            "x found ``",
            "character `",
            "unknown variant `a",
        ] {
            assert!(!without_values(cut).contains('é'), "{cut}");
        }
    }

    #[test]
    fn addresses_lose_their_query_and_credentials() {
        assert_eq!(
            url("https://s3.example/b/k?X-Amz-Signature=abc&X-Amz-Date=1#f"),
            "https://s3.example/b/k"
        );
        assert_eq!(
            url("http://user:pw@unit.local/api/v1/info?auth=TOKEN"),
            "http://unit.local/api/v1/info"
        );
        assert_eq!(url("not a url?auth=TOKEN"), "not a url");
        assert_eq!(millis(Duration::from_micros(2500)), 2);
    }
}
