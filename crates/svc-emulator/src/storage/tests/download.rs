//! Pre-signed GET downloads: tampered, expired, missing.

use super::*;

#[tokio::test]
async fn a_presigned_download_is_refused_when_tampered_or_expired() {
    let h = Harness::start().await;
    h.storage
        .put_object(BUCKET, "out/a.txt", b"aaa")
        .await
        .unwrap();
    h.storage
        .put_object(BUCKET, "out/b.txt", b"bbb")
        .await
        .unwrap();
    let url = h.storage.presign_download(BUCKET, "out/a.txt");
    let (status, _, body) = h.get(&url).await;
    assert_eq!((status.as_u16(), body.as_slice()), (200, b"aaa".as_slice()));

    let denied = |url: String| {
        let h = &h;
        async move {
            let (status, _, body) = h.get(&url).await;
            let body = String::from_utf8(body).unwrap();
            assert_eq!(status.as_u16(), 403, "{url}: {body}");
            assert!(body.contains("<Code>AccessDenied</Code>"), "{body}");
            body
        }
    };
    let (address, query) = url.split_once('?').unwrap();
    denied(address.to_owned()).await;
    denied(url.replace("out/a.txt", "out/b.txt")).await;
    denied(url.replace("X-Amz-Expires=600", "X-Amz-Expires=6000")).await;
    let signature_at = url.find("X-Amz-Signature=").unwrap() + "X-Amz-Signature=".len();
    let flipped = if url.as_bytes()[signature_at] == b'0' {
        "1"
    } else {
        "0"
    };
    let tampered = format!(
        "{}{flipped}{}",
        &url[..signature_at],
        &url[signature_at + 1..]
    );
    assert!(denied(tampered).await.contains("Signature does not match"));
    let without_date: Vec<&str> = query
        .split('&')
        .filter(|p| !p.starts_with("X-Amz-Date="))
        .collect();
    denied(format!("{address}?{}", without_date.join("&"))).await;

    h.shift_clock(601);
    assert!(denied(url.clone()).await.contains("expired"));
    h.shift_clock(599);
    assert_eq!(h.get(&url).await.0.as_u16(), 200);
}

#[tokio::test]
async fn a_presigned_download_of_a_missing_object_answers_404() {
    let h = Harness::start().await;
    let (status, _, body) = h
        .get(&h.storage.presign_download(BUCKET, "nothing/here"))
        .await;
    assert_eq!(status.as_u16(), 404);
    assert!(
        String::from_utf8(body)
            .unwrap()
            .contains("<Code>NoSuchKey</Code>")
    );
    let (status, _, body) = h
        .get(&h.storage.presign_download("svc-mars-1", "nothing"))
        .await;
    assert_eq!(status.as_u16(), 404);
    assert!(
        String::from_utf8(body)
            .unwrap()
            .contains("<Code>NoSuchBucket</Code>")
    );
}
