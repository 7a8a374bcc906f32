//! Direct access (the engine's): keys never escape the bucket folder, writes, the
//! public address, abandoned uploads.

use super::*;

#[tokio::test]
async fn keys_never_escape_the_bucket_folder() {
    let h = Harness::start().await;
    let long = "x/".repeat(300);
    let keys = [
        "../../escape",
        "/etc/passwd",
        "a/b/../../../c",
        "..",
        ".",
        "",
        "a%2Fb",
        long.as_str(),
    ];
    for (i, key) in keys.iter().enumerate() {
        h.storage
            .put_object(BUCKET, key, format!("object {i}").as_bytes())
            .await
            .unwrap();
    }
    for (i, key) in keys.iter().enumerate() {
        let path = h.storage.object_path(BUCKET, key).unwrap();
        assert_eq!(
            path.parent().unwrap(),
            h.root.join(BUCKET),
            "{key:?} → {path:?}"
        );
        assert!(path.file_name().unwrap().len() <= 202);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("object {i}")
        );
    }
    assert_eq!(h.bucket_files(BUCKET).len(), keys.len());
    assert_eq!(
        std::fs::read_dir(&h.root).unwrap().count(),
        REGIONS.len(),
        "only the bucket folders at the root"
    );

    for key in keys {
        h.storage.delete_object(BUCKET, key).await.unwrap();
        assert!(h.storage.object_path(BUCKET, key).is_none());
    }
    h.storage
        .delete_object(BUCKET, "never-existed")
        .await
        .unwrap();
    assert!(h.storage.put_object("../outside", "k", b"x").await.is_err());
    assert!(h.storage.object_path("../outside", "k").is_none());
    assert!(h.bucket_files(BUCKET).is_empty());
}

#[tokio::test]
async fn put_object_replaces_and_is_downloadable() {
    let h = Harness::start().await;
    h.storage
        .put_object("svc-ap-southeast-2", "p/out.kml", b"first")
        .await
        .unwrap();
    h.storage
        .put_object("svc-ap-southeast-2", "p/out.kml", b"second")
        .await
        .unwrap();
    let url = h
        .storage
        .presign_download("svc-ap-southeast-2", "p/out.kml");
    assert!(
        url.contains("%2Fap-southeast-2%2Fs3%2Faws4_request"),
        "{url}"
    );
    let (status, _, body) = h.get(&url).await;
    assert_eq!(
        (status.as_u16(), body.as_slice()),
        (200, b"second".as_slice())
    );
}

#[test]
fn public_url_splits_into_origin_and_prefix() {
    assert_eq!(
        split_public_url("http://127.0.0.1:4566"),
        ("http://127.0.0.1:4566", "")
    );
    assert_eq!(
        split_public_url("http://127.0.0.1:4566/"),
        ("http://127.0.0.1:4566", "")
    );
    assert_eq!(
        split_public_url("https://h/storage/"),
        ("https://h", "/storage")
    );
}

#[tokio::test]
async fn an_abandoned_upload_leaves_no_partial_file() {
    use tokio::io::AsyncWriteExt as _;
    let h = Harness::start().await;
    let size: usize = 8 * 1024 * 1024;
    let (_, fields) = h.presign("abandoned", size as u64);
    let boundary = "XBOUNDARYX";
    let mut head = String::new();
    for (name, value) in &fields {
        head.push_str(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
        ));
    }
    head.push_str(&format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\
         Content-Type: application/octet-stream\r\n\r\n"
    ));
    let total = head.len() + size + format!("\r\n--{boundary}--\r\n").len();
    let address = h.base.trim_start_matches("http://");
    let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
    let request = format!(
        "POST /{BUCKET} HTTP/1.1\r\nHost: {address}\r\nContent-Type: multipart/form-data; boundary={boundary}\r\n\
         Content-Length: {total}\r\n\r\n{head}"
    );
    socket.write_all(request.as_bytes()).await.unwrap();
    socket.write_all(&content(size / 2)).await.unwrap();
    socket.flush().await.unwrap();
    // Wait until the partial file shows up, then hang up.
    for _ in 0..200 {
        if !h.bucket_files(BUCKET).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        h.bucket_files(BUCKET).len(),
        1,
        "a temporary file while the upload runs"
    );
    drop(socket);
    for _ in 0..200 {
        if h.bucket_files(BUCKET).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    h.assert_nothing_stored();
}
