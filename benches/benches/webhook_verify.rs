//! Group `webhook_verify`: verifying a delivery with `svc_core::webhook` (signature in
//! constant time, timestamp window, then decoding the typed event) against a plain
//! `hmac` baseline (the HMAC-SHA256 over `timestamp.body` and a comparison, nothing else),
//! for bodies of 1 KiB, 64 KiB and 1 MiB, in the same run.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hmac::{KeyInit, Mac};
use svc_core::WebhookSecret;
use svc_core::webhook::{Webhook, sign};

const SECRET: &str = "whsec_4b1d0c7a9e3f25688d1e6b0a3c5f7e92d4a6c8e0f2b4d6a8c0e2f4a6b8d0c2e4";
const NOW: i64 = 1_780_000_000;

/// A `cloud:processing-progress` delivery of about `size` bytes: the processing's
/// `processingJson` carries the bulk, as a large configuration would.
fn body(size: usize) -> Vec<u8> {
    let head = r#"{"id":"2e4f6a8c-1b3d-4e5f-9a7b-c8d9e0f1a2b3","eventType":"cloud:processing-progress","createdAt":"2024-07-02T09:17:02.500Z","endpointMetadata":{"team":"field-ops"},"payload":{"id":"6f1c2a4e-8b3d-4c1e-9a7f-2d5e8b1c3a90","name":"Survey","type":"ins","status":"processing","region":"eu-west-3","processingResult":null,"processingDuration":null,"processingStep":"preprocessing","processingProgress":0.42,"archiveScheduledAt":null,"createdAt":"2024-07-02T09:15:30.123Z","updatedAt":"2024-07-02T09:17:02.456Z","creatorId":"0b8e7d6c-5a4f-4e3d-8c2b-1a0f9e8d7c6b","organizationId":"3c9d5e7f-1a2b-4c3d-8e4f-5a6b7c8d9e0f","containerId":"8a7b6c5d-4e3f-4a1b-9c8d-7e6f5a4b3c2d","errorCount":{"errors":0,"warnings":2},"missionLength":null,"missionLocationCountry":null,"missionLocationRegion":null,"missionLocationPlace":null,"metadata":{"project":"survey"},"processingJson":{"steps":["#;
    let tail = r#""]}}}"#;
    let mut out = head.as_bytes().to_vec();
    let mut i = 0;
    while out.len() + tail.len() + 40 < size {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(format!("\"step {i:06} of the processing\"").as_bytes());
        i += 1;
    }
    out.extend_from_slice(&tail.as_bytes()[1..]);
    out
}

fn plain_hmac(secret: &[u8], timestamp: &str, body: &[u8], signature: &str) -> bool {
    let Ok(mut mac) = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret) else {
        return false;
    };
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body);
    let Ok(expected) = hex::decode(signature) else {
        return false;
    };
    mac.verify_slice(&expected).is_ok()
}

fn bench(c: &mut Criterion) {
    let secret = WebhookSecret::new(SECRET);
    let webhook = Webhook::new(secret.clone());
    let timestamp = NOW.to_string();
    let mut group = c.benchmark_group("webhook_verify");
    for (label, size) in [("1KiB", 1 << 10), ("64KiB", 64 << 10), ("1MiB", 1 << 20)] {
        let body = body(size);
        let signature = sign(&secret, NOW, &body);
        assert!(
            webhook
                .verify_parts(Some(&timestamp), Some(&signature), &body, NOW)
                .is_ok(),
            "{label}"
        );
        assert!(plain_hmac(SECRET.as_bytes(), &timestamp, &body, &signature));
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_with_input(BenchmarkId::new("svc_core", label), &body, |b, body| {
            b.iter(|| webhook.verify_parts(Some(&timestamp), Some(&signature), body, NOW))
        });
        group.bench_with_input(BenchmarkId::new("hmac", label), &body, |b, body| {
            b.iter(|| plain_hmac(SECRET.as_bytes(), &timestamp, body, &signature))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
