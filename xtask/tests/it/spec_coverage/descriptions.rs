//! (9) Rules carried by descriptions.

use super::operation_helpers::{check_text, texts};
use super::{Ck, cloud, notification, unit};

#[test]
fn cloud_description_rules() {
    let mut ck = Ck::new("cloud_description_rules");
    let doc = cloud();
    let t = texts(doc);
    let rules: &[(&str, &[&[&str]])] = &[
        (
            "401 without token: No bearer token found in the authorization header",
            &[&["no bearer token found in the authorization header"]],
        ),
        (
            "upload policy content-length-range",
            &[&["content-length-range"]],
        ),
        (
            "upload: `file` is the last form field",
            &[&["`file`"], &["last"]],
        ),
        ("upload: multipart/form-data", &[&["multipart/form-data"]]),
        ("upload: fields unchanged", &[&["unchanged", "unmodified"]]),
        (
            "upload: modified field answers 403",
            &[&["modified"], &["403"]],
        ),
        ("upload: storage answers 204", &[&["204"]]),
        (
            "upload: X-Amz-Algorithm AWS4-HMAC-SHA256",
            &[&["aws4-hmac-sha256"]],
        ),
        (
            "upload: Content-Length, no chunked",
            &[&["content-length"], &["chunked"]],
        ),
        ("expirationDate = createdAt + 30 days", &[&["30 days"]]),
        ("size in bytes", &[&["bytes"]]),
        (
            "processingDuration and missionLength in seconds",
            &[&["seconds"]],
        ),
        ("every 2xx is success", &[&["2xx"]]),
        ("real service answers 201", &[&["201"]]),
        ("path longer than 1024 bytes answers 422", &[&["1024"]]),
        ("path containing `..` answers 422", &[&[".."]]),
        ("credits: one per processing, 403 without", &[&["credit"]]),
        ("organization administrator", &[&["administrator"]]),
        (
            "one ongoing processing per organization (409)",
            &[&["ongoing", "already has"], &["409"]],
        ),
        ("delete is immediate and irreversible", &[&["irreversible"]]),
        (
            "after container deletion processings keep containerId null",
            &[&["containerid"], &["null"]],
        ),
        (
            "OIDC discovery document",
            &[&["/.well-known/openid-configuration"]],
        ),
        ("discovery gives token_endpoint", &[&["token_endpoint"]]),
        ("discovery gives issuer", &[&["issuer"]]),
        (
            "token request grant_type=password",
            &[&["password"], &["grant_type"]],
        ),
        (
            "token request client_id=api-key",
            &[&["api-key"], &["client_id"]],
        ),
        ("token request scope=openid", &[&["openid"]]),
        ("alternative client_credentials", &[&["client_credentials"]]),
        ("expires_in 300 seconds", &[&["300"]]),
        ("bearer credential", &[&["bearer"]]),
        (
            "version format Major.Minor.Build-Qualifier",
            &[&["major.minor.build-qualifier"]],
        ),
        (
            "v1 logic must not be reused against v2",
            &[&["v1"], &["v2"]],
        ),
        ("unknown enumerated value kept", &[&["unknown"]]),
        (
            "page below 0 / perPage outside 1..100 answers 422, missing 400",
            &[&["422"], &["400"], &["perpage"]],
        ),
        ("metadata update replaces the whole object", &[&["replace"]]),
        (
            "output files only for status processed",
            &[&["processed"], &["output"]],
        ),
        (
            "archive deletes the result files",
            &[&["archive"], &["result files"]],
        ),
        ("file path is a valid POSIX path", &[&["posix"]]),
        (
            "file path unique within the container (409)",
            &[&["unique"], &["409"]],
        ),
        (
            "resource files must be uploaded if the configuration references them",
            &[&["resource"], &["referenc"]],
        ),
        (
            "storage answers 400 when the length differs or `file` is not last",
            &[&["400"], &["length"]],
        ),
        ("expired policy answers 403", &[&["expire"], &["403"]]),
        (
            "expired or invalid token answers 401",
            &[&["expired"], &["401"]],
        ),
        ("webhooks preferred to polling", &[&["polling"]]),
        ("webhook delivery retries: 10", &[&["retries"], &["10"]]),
    ];
    for (rule, parts) in rules {
        check_text(&mut ck, doc, &t, parts, rule);
    }
    ck.finish();
}

#[test]
fn notification_description_rules() {
    let mut ck = Ck::new("notification_description_rules");
    let doc = notification();
    let t = texts(doc);
    let rules: &[(&str, &[&[&str]])] = &[
        ("signature HMAC-SHA256", &[&["hmac-sha256"]]),
        ("signature keyed with the secret", &[&["hmac"], &["secret"]]),
        (
            "signature over timestamp + \".\" + raw body",
            &[&["timestamp"], &["raw"], &["body"]],
        ),
        ("signature lowercase hex", &[&["lowercase"], &["hex"]]),
        ("secret is whsec_ + 32 random bytes hex", &[&["whsec_"]]),
        ("Svc-Timestamp header", &[&["svc-timestamp"]]),
        ("Svc-Signature header", &[&["svc-signature"]]),
        (
            "timestamp: whole seconds since the Unix epoch",
            &[&["unix epoch", "unix time"]],
        ),
        ("up to 10 retries", &[&["10 retries"]]),
        ("retry spacing doubling", &[&["doubl"]]),
        ("retry spacing capped at 1 hour", &[&["1 hour", "one hour"]]),
        ("no answer within 10 s fails", &[&["10 s", "10 seconds"]]),
        (
            "after the retries a missed event is recorded",
            &[&["missed"]],
        ),
        ("receiver answers 2xx", &[&["2xx"]]),
        ("receiver accepts POST", &[&["post"]]),
        (
            "disabled endpoint receives nothing",
            &[&["enabled"], &["false"]],
        ),
        (
            "processing-ended on processed or canceled",
            &[&["cloud:processing-ended"], &["canceled", "cancelled"]],
        ),
        (
            "processing-error on level error or result failed",
            &[&["cloud:processing-error"], &["failed"]],
        ),
        (
            "processing-progress on status/step/progress change",
            &[&["cloud:processing-progress"], &["step"]],
        ),
        (
            "receiver identifies the processing from payload",
            &[&["payload"]],
        ),
        ("OIDC scope notification:user", &[&["notification:user"]]),
        ("delete is immediate and irreversible", &[&["irreversible"]]),
        ("unknown enumerated value kept", &[&["unknown"]]),
    ];
    for (rule, parts) in rules {
        check_text(&mut ck, doc, &t, parts, rule);
    }
    ck.finish();
}

#[test]
fn unit_description_rules() {
    let mut ck = Ck::new("unit_description_rules");
    let doc = unit();
    let t = texts(doc);
    let rules: &[(&str, &[&[&str]])] = &[
        (
            "lock ends after 60 s without a request",
            &[&["60 s", "60 seconds"], &["lock"]],
        ),
        (
            "default user: highest-role user without a password",
            &[&["default user"], &["highest"]],
        ),
        (
            "every user has a password: no auth answers 401",
            &[
                &["every user has a password", "all users have a password"],
                &["401"],
            ],
        ),
        (
            "setup becomes default when operator has a password",
            &[&["setup"], &["operator"], &["default"]],
        ),
        (
            "password change takes effect on the default user at the next reboot",
            &[&["next reboot"]],
        ),
        (
            "token only in the `auth` query parameter; header unsupported",
            &[&["auth"], &["header"]],
        ),
        ("tokens die at power-on, reset, reboot", &[&["power-on"]]),
        (
            "reboot ends every token and lock",
            &[&["reboot"], &["token"], &["lock"]],
        ),
        (
            "only setup changes other users' passwords",
            &[&["setup"], &["password"], &["403"]],
        ),
        ("an empty password clears it", &[&["empty"], &["clear"]]),
        (
            "factory password held by the manufacturer",
            &[&["manufacturer"]],
        ),
        ("HTTP port 80 only", &[&["80"]]),
        ("HTTPS unsupported", &[&["https"]]),
        (
            "unencrypted HTTP: passwords can be intercepted",
            &[&["intercept", "unencrypted"]],
        ),
        (
            "PUT, PATCH and DELETE unsupported",
            &[&["put"], &["patch"], &["delete"]],
        ),
        (
            "write answer: request successful",
            &[&["request successful"]],
        ),
        ("checkOnly validates without applying", &[&["checkonly"]]),
        (
            "409: another user is already editing the settings",
            &[&["another user is already editing the settings"]],
        ),
        (
            "422 lists every invalid node (aiding/gnss1/model)",
            &[&["aiding/gnss1/model"]],
        ),
        ("write merged recursively", &[&["merge"]]),
        ("arrays and scalars replaced whole", &[&["replaced"]]),
        (
            "write is all or nothing",
            &[&["all or nothing", "all-or-nothing", "changes nothing"]],
        ),
        (
            "unknown key, wrong type, wrong length answer 422",
            &[&["unknown key"], &["422"]],
        ),
        (
            "paths use / between levels",
            &[&["output/coma/messages/imushort"]],
        ),
        (
            "delta: only settings changed from default",
            &[&["default"], &["delta", "changed"]],
        ),
        ("sbgECom frame 0xFF 0x5A", &[&["0xff"], &["0x5a"]]),
        ("frame end 0x33", &[&["0x33"]]),
        ("frame length 0..4086", &[&["4086"]]),
        ("CRC-16/KERMIT", &[&["crc-16/kermit", "kermit"]]),
        ("CRC polynomial 0x8408", &[&["0x8408"]]),
        ("CRC check value 0x2189", &[&["0x2189"]]),
        ("large frames: class bit 0x80", &[&["0x80"]]),
        ("large frames: at most 4081 data bytes a page", &[&["4081"]]),
        ("REST over serial: class 0x10", &[&["0x10"]]),
        (
            "POST is id 47, GET is id 48, older GET 46",
            &[&["47"], &["48"], &["46"]],
        ),
        ("ACK in place of a reply is an error", &[&["ack"]]),
        (
            "reboot takes about 2 s; the unit does not answer",
            &[&["2 s", "2 seconds"]],
        ),
        (
            "version format Major.Minor.Build-Qualifier",
            &[&["major.minor"]],
        ),
        ("apiVersion is Major.Minor (e.g. 1.3)", &[&["1.3"]]),
        ("unknown enumerated value kept", &[&["unknown"]]),
        (
            "binary output logs deliver high-frequency data, not the API",
            &[&["binary"], &["log"]],
        ),
        (
            "serial request data: path NUL query NUL [body NUL]",
            &[&["nul"], &["query"]],
        ),
        (
            "serial reply: status u16 LE then the body",
            &[&["u16"], &["status"]],
        ),
        ("localParam.date is YYYY-MM-DD", &[&["yyyy-mm-dd"]]),
        ("viewer downloads logger files", &[&["download"]]),
    ];
    for (rule, parts) in rules {
        check_text(&mut ck, doc, &t, parts, rule);
    }
    // the decided sbgECom test vectors, compared without whitespace
    let compact: Vec<String> = t
        .iter()
        .map(|s| s.chars().filter(|c| !c.is_whitespace()).collect())
        .collect();
    let vectors = [
        (
            "GET /api/v1/info frame",
            "ff 5a 30 10 0e 00 2f 61 70 69 2f 76 31 2f 69 6e 66 6f 00 00 88 93 33",
        ),
        (
            "reply 200 `{}` frame",
            "ff 5a 30 10 05 00 c8 00 7b 7d 00 e3 5b 33",
        ),
        (
            "ACK class 0x10 id 48 code 0 frame",
            "ff 5a 00 10 04 00 30 10 00 00 02 6c 33",
        ),
        (
            "large page frame",
            "ff 5a 30 90 08 00 00 00 00 02 00 61 62 63 7e fa 33",
        ),
    ];
    for (label, hex) in vectors {
        let want: String = hex.chars().filter(|c| !c.is_whitespace()).collect();
        ck.check(compact.iter().any(|s| s.contains(&want)), || {
            format!(
                "ins-device.yaml: sbgECom test vector \"{label}\" ({hex}) not in any description"
            )
        });
    }
    ck.finish();
}
