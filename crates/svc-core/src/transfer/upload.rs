//! Uploads: checks before sending, then one streamed multipart POST per file.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::FutureExt as _;
use reqwest::multipart::{Form, Part};
use reqwest::{Body, Url};
use tokio::io::AsyncReadExt as _;
use tokio::sync::Notify;
use tokio::time::Instant;
use tracing::Instrument as _;
use tracing::field::Empty;

use super::error::{Failure, TransferError, Transient, retryable_status, stalled, storage_error};
use super::progress::Tracker;
use super::redact_url;
use super::run::{self, FileWork};
use super::{TransferOptions, TransferReport, UPLOAD_REFUSED_REASON, UploadJob};

/// Bytes read from disk at a time (and the granularity of progress).
const CHUNK: usize = 128 * 1024;
/// Most bytes of an error answer read.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// The whole upload: checks every job, then sends the files.
pub(crate) async fn run(
    http: reqwest::Client,
    options: TransferOptions,
    tracker: Tracker,
    jobs: Vec<UploadJob>,
) -> Result<TransferReport, TransferError> {
    let started = Instant::now();
    let mut urls = Vec::with_capacity(jobs.len());
    for (index, job) in jobs.iter().enumerate() {
        match check(job).await {
            Ok(url) => urls.push(url),
            Err(e) => {
                run::refuse_before_start(&tracker, index);
                return Err(e);
            }
        }
    }
    let files: Vec<FileWork> = jobs
        .into_iter()
        .zip(urls)
        .enumerate()
        .map(|(index, (job, url))| {
            let file = Arc::new(FileUpload {
                http: http.clone(),
                job,
                url,
                tracker: tracker.clone(),
                index,
                idle_timeout: options.idle_timeout,
            });
            let retry = options.retry;
            let span = tracing::debug_span!(
                "file",
                index,
                name = %file.job.container_path,
                size = file.job.size
            );
            async move {
                run::with_retries(
                    &retry,
                    &file.tracker,
                    index,
                    &file.job.container_path,
                    |_| attempt(file.clone()),
                )
                .await
            }
            .instrument(span)
            .boxed()
        })
        .collect();
    run::run_files(&tracker, &options, files, started).await
}

/// Checks a job before anything is sent: the form can be sent as it is, and the local
/// file exists with the registered size. Returns the form's address.
async fn check(job: &UploadJob) -> Result<Url, TransferError> {
    let name = &job.container_path;
    let url = Url::parse(&job.upload_info.url).map_err(|e| TransferError::InvalidAddress {
        file: name.clone(),
        address: redact_url(&job.upload_info.url),
        reason: e.to_string(),
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(TransferError::InvalidAddress {
            file: name.clone(),
            address: redact_url(url.as_str()),
            reason: "not an http(s) address".to_owned(),
        });
    }
    for field in job.upload_info.fields.keys() {
        let problem = if field.is_empty() {
            Some("a field has an empty name".to_owned())
        } else if field.eq_ignore_ascii_case("file") {
            Some(
                "a field is named `file`, which must be the file itself and the last field"
                    .to_owned(),
            )
        } else if field.contains(['"', '\r', '\n', '\0']) {
            Some(format!(
                "the field name {field:?} cannot be written in a form"
            ))
        } else {
            None
        };
        if let Some(reason) = problem {
            return Err(TransferError::InvalidUploadForm {
                file: name.clone(),
                reason,
            });
        }
    }
    let meta = tokio::fs::metadata(&job.local_path)
        .await
        .map_err(|source| TransferError::LocalFile {
            file: job.local_path.clone(),
            source: Arc::new(source),
        })?;
    if !meta.is_file() {
        return Err(TransferError::LocalFile {
            file: job.local_path.clone(),
            source: Arc::new(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file",
            )),
        });
    }
    check_size(job, meta.len())?;
    Ok(url)
}

fn check_size(job: &UploadJob, actual: u64) -> Result<(), TransferError> {
    if actual == job.size {
        Ok(())
    } else {
        Err(TransferError::SizeMismatch {
            file: job.local_path.clone(),
            name: job.container_path.clone(),
            registered: job.size,
            actual,
        })
    }
}

/// One file to upload, with what its attempts need.
struct FileUpload {
    http: reqwest::Client,
    job: UploadJob,
    url: Url,
    tracker: Tracker,
    index: usize,
    idle_timeout: std::time::Duration,
}

/// One POST of the whole file.
async fn attempt(upload: Arc<FileUpload>) -> Result<u64, Failure> {
    let FileUpload {
        http,
        job,
        url,
        tracker,
        index,
        idle_timeout,
    } = &*upload;
    let (index, idle_timeout) = (*index, *idle_timeout);
    let local_file = |source| {
        Failure::Fatal(TransferError::LocalFile {
            file: job.local_path.clone(),
            source: Arc::new(source),
        })
    };
    let file = tokio::fs::File::open(&job.local_path)
        .await
        .map_err(local_file)?;
    // The file may have changed since the checks.
    let size = file.metadata().await.map_err(local_file)?.len();
    check_size(job, size).map_err(Failure::Fatal)?;

    let activity = Arc::new(Notify::new());
    let read_error = Arc::new(Mutex::new(None));
    let stream = file_stream(
        file,
        Reading {
            size: job.size,
            tracker: tracker.clone(),
            index,
            activity: activity.clone(),
            read_error: read_error.clone(),
        },
    );
    let part = Part::stream_with_length(Body::wrap_stream(stream), job.size)
        .file_name(file_name(&job.container_path));
    let form = build_form(&job.upload_info.fields, part);

    let span = tracing::debug_span!(
        "http",
        method = "POST",
        url = %crate::observe::parsed_url(url),
        status = Empty
    );
    let started = Instant::now();
    let exchange = async {
        let response = match http.post(url.clone()).multipart(form).send().await {
            Ok(r) => r,
            Err(e) => {
                let taken = read_error.lock().ok().and_then(|mut slot| slot.take());
                if let Some(source) = taken {
                    return Err(local_file(source));
                }
                return Err(Failure::Transient(Transient::network(e)));
            }
        };
        let status = response.status();
        tracing::Span::current().record("status", status.as_u16());
        tracing::debug!(
            elapsed_ms = crate::observe::millis(started.elapsed()),
            "storage answered"
        );
        if status.is_success() {
            return Ok(job.size);
        }
        let body = read_limited(response, &activity).await;
        let (code, storage_message) = storage_error(&body);
        let status = status.as_u16();
        let file = job.container_path.clone();
        Err(if status == 403 {
            Failure::Fatal(TransferError::UploadRefused {
                file,
                reason: UPLOAD_REFUSED_REASON,
                storage_message,
            })
        } else if retryable_status(status) {
            Failure::Transient(Transient::Status {
                status,
                code,
                message: storage_message,
            })
        } else {
            let reason = refusal_reason(status, &code);
            Failure::Fatal(TransferError::Rejected {
                file,
                status,
                code,
                reason,
                storage_message,
            })
        })
    };
    tokio::select! {
        result = exchange.instrument(span) => result,
        () = run::stalled(&activity, idle_timeout) => {
            tracing::debug!(idle_s = idle_timeout.as_secs_f64(), "the upload stalled");
            Err(Failure::Transient(stalled(idle_timeout)))
        }
    }
}

/// Every field unchanged, in the order given, then `file` last. Field names are
/// written as they are (no percent-encoding): storage compares them literally.
fn build_form(fields: &svc_cloud_api::UploadFields, file: Part) -> Form {
    let mut form = Form::new().percent_encode_noop();
    for (name, value) in fields {
        form = form.text(name.clone(), value.clone());
    }
    form.part("file", file)
}

/// What a non-retried status other than 403 means for an upload.
fn refusal_reason(status: u16, code: &str) -> &'static str {
    match (status, code) {
        (400, "EntityTooSmall" | "EntityTooLarge") => {
            "the file's length differs from its registered size"
        }
        (400, _) => "the form is malformed (`file` must be the last field)",
        (411, _) => "the upload had no Content-Length",
        (404, _) => "the bucket of the form does not exist",
        _ => "storage refused the upload",
    }
}

/// The `filename` of the `file` part: the last segment of the container path, with
/// each character that cannot stand in a multipart header (control characters such
/// as CR and LF, which would end the header line, `"` and `\`) written as `_`. The
/// name is informative only: storage files the upload under the form's `key`, so the
/// container path keeps its characters.
fn file_name(container_path: &str) -> String {
    container_path
        .rsplit('/')
        .find(|s| !s.is_empty())
        .unwrap_or("file")
        .chars()
        .map(|c| {
            if c.is_control() || c == '"' || c == '\\' {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// Reads at most [`MAX_ERROR_BODY`] bytes of an error answer, as text.
pub(crate) async fn read_limited(mut response: reqwest::Response, activity: &Notify) -> String {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        activity.notify_one();
        let room = MAX_ERROR_BODY.saturating_sub(body.len());
        body.extend_from_slice(chunk.get(..room.min(chunk.len())).unwrap_or_default());
        if body.len() >= MAX_ERROR_BODY {
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// What the file stream reports to.
struct Reading {
    size: u64,
    tracker: Tracker,
    index: usize,
    activity: Arc<Notify>,
    /// A read error, kept so that the failed request is reported as a local problem
    /// rather than a network one.
    read_error: Arc<Mutex<Option<std::io::Error>>>,
}

impl Reading {
    fn fail(&self, e: std::io::Error) -> std::io::Error {
        let copy = std::io::Error::new(e.kind(), e.to_string());
        if let Ok(mut slot) = self.read_error.lock() {
            *slot = Some(e);
        }
        copy
    }
}

/// Exactly `reading.size` bytes of `file`, read [`CHUNK`] bytes at a time as the
/// request body is sent (so never the whole file in memory), each chunk counted in
/// the progress. A file that became shorter ends the stream with an error.
fn file_stream(
    file: tokio::fs::File,
    reading: Reading,
) -> impl futures::Stream<Item = std::io::Result<Bytes>> + Send + 'static {
    futures::stream::try_unfold(
        (file, 0_u64, reading),
        |(mut file, sent, reading)| async move {
            let left = reading.size.saturating_sub(sent);
            if left == 0 {
                return Ok(None);
            }
            let want = usize::try_from(left).map_or(CHUNK, |l| l.min(CHUNK));
            let mut buf = vec![0_u8; want];
            let n = match file.read(&mut buf).await {
                Ok(0) => {
                    return Err(reading.fail(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "the file became shorter while it was sent",
                    )));
                }
                Ok(n) => n,
                Err(e) => return Err(reading.fail(e)),
            };
            buf.truncate(n);
            reading.tracker.add(reading.index, n as u64);
            reading.activity.notify_one();
            Ok(Some((Bytes::from(buf), (file, sent + n as u64, reading))))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::TryStreamExt as _;

    #[test]
    fn file_names_cannot_break_the_part_header() {
        assert_eq!(file_name("c/rover/track.nmea"), "track.nmea");
        assert_eq!(file_name("day\r\n1/a\rb\nc.nmea"), "a_b_c.nmea");
        assert_eq!(file_name("say \"hi\"\\x.csv"), "say _hi__x.csv");
        assert_eq!(file_name("dir/"), "dir");
        assert_eq!(file_name("ünï\u{7f}.txt"), "ünï_.txt");
    }

    #[tokio::test]
    async fn the_form_sends_every_field_in_order_then_the_file() {
        let fields: svc_cloud_api::UploadFields = [
            ("key", "c/rover/track.nmea"),
            ("bucket", "svc-eu-west-3"),
            ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"),
            (
                "x-ignore-Ünïcode name",
                "value with \"quotes\" and\r\nlines",
            ),
            ("Policy", "eyJ4Ijoi+/=="),
            ("X-Amz-Signature", "abc123"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let form = build_form(
            &fields,
            Part::bytes(b"FILE-BYTES".as_slice()).file_name("t.nmea"),
        );
        let boundary = form.boundary().to_owned();
        let chunks: Vec<Bytes> = form.into_stream().try_collect().await.expect("body");
        let body = String::from_utf8(chunks.concat()).expect("text");
        let mut at = 0;
        for (name, value) in &fields {
            let part = format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            );
            let found = body[at..]
                .find(&part)
                .unwrap_or_else(|| panic!("{name} in order: {body}"));
            at += found + part.len();
        }
        let file = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"t.nmea\"\r\n\r\nFILE-BYTES\r\n--{boundary}--\r\n"
        );
        assert_eq!(&body[at..], file, "`file` is last");
    }

    #[test]
    fn the_file_part_is_named_after_the_last_segment() {
        assert_eq!(file_name("rover/day1/track.nmea"), "track.nmea");
        assert_eq!(file_name("track.nmea"), "track.nmea");
        assert_eq!(file_name("dir/"), "dir");
        assert_eq!(file_name(""), "file");
    }
}
