//! The multipart form of an upload, streamed with `multer`: the fields before `file`,
//! then the file itself written to disk as it arrives (see the parent module for the order
//! of the checks).

use std::path::Path;

use axum::body::Body;
use axum::http::StatusCode;
use futures::StreamExt as _;
use tokio::io::AsyncWriteExt as _;

use super::error::S3Error;
use super::files::{TempFile, object_file_name};
use super::policy::{Expected, MAX_FIELD_LEN};
use super::{Storage, UploadEvent};

/// Most non-file form fields accepted.
const MAX_FIELDS: usize = 100;
/// Write buffer when streaming an upload to disk.
const WRITE_BUFFER: usize = 256 * 1024;

impl Storage {
    pub(super) async fn receive_form(
        &self,
        bucket: &str,
        dir: &Path,
        form: &mut multer::Multipart<'_>,
    ) -> Result<UploadEvent, S3Error> {
        // Values that are not UTF-8 are kept as `None`: such a field cannot match its
        // signature (403), unless it is ignored (`x-ignore-*`).
        let mut fields: Vec<(String, Option<String>)> = Vec::new();
        while let Some(mut field) = form.next_field().await.map_err(malformed)? {
            let name = field.name().unwrap_or_default().to_owned();
            if name == "file" {
                return match self.check_upload(bucket, &fields) {
                    Ok(expected) => self.receive_file(bucket, dir, expected, field, form).await,
                    Err(denied) => {
                        while field.chunk().await.map_err(malformed)?.is_some() {}
                        drop(field);
                        if form.next_field().await.map_err(malformed)?.is_some() {
                            return Err(S3Error::file_not_last());
                        }
                        Err(denied)
                    }
                };
            }
            if fields.len() >= MAX_FIELDS {
                return Err(S3Error::invalid_argument("Too many form fields"));
            }
            let value = read_text_field(&name, &mut field).await?;
            fields.push((name, value));
        }
        self.check_upload(bucket, &fields)?;
        Err(S3Error::invalid_argument("Field file missing"))
    }

    /// The form's checks ([`Storage::check_form`]), then whether its object is still
    /// wanted ([`Storage::with_upload_gate`]): 403 otherwise.
    fn check_upload(
        &self,
        bucket: &str,
        fields: &[(String, Option<String>)],
    ) -> Result<Expected, S3Error> {
        let expected = self.check_form(bucket, fields)?;
        if !self.wanted(bucket, &expected.key) {
            return Err(S3Error::not_wanted());
        }
        Ok(expected)
    }

    /// Streams the `file` part to a temporary file, checks that it is the last part and
    /// its length, then moves it into place.
    async fn receive_file(
        &self,
        bucket: &str,
        dir: &Path,
        expected: Expected,
        mut field: multer::Field<'_>,
        form: &mut multer::Multipart<'_>,
    ) -> Result<UploadEvent, S3Error> {
        let (min, max) = expected.length_range.unwrap_or((0, u64::MAX));
        let mut temp = TempFile::new(dir);
        // Created synchronously (it is quick) so that a cancelled request cannot leave a
        // file created after the guard ran.
        let file = std::fs::File::create(temp.path()).map_err(S3Error::internal)?;
        let file = tokio::fs::File::from_std(file);
        let mut writer = tokio::io::BufWriter::with_capacity(WRITE_BUFFER, file);
        let mut size: u64 = 0;
        while let Some(chunk) = field.chunk().await.map_err(malformed)? {
            size = size.saturating_add(chunk.len() as u64);
            // Past the limit: keep reading (to answer cleanly) but stop writing.
            if size <= max {
                writer.write_all(&chunk).await.map_err(S3Error::internal)?;
            }
        }
        writer.flush().await.map_err(S3Error::internal)?;
        drop(writer);
        drop(field);
        if form.next_field().await.map_err(malformed)?.is_some() {
            return Err(S3Error::file_not_last());
        }
        if size > max {
            return Err(S3Error::new(
                StatusCode::BAD_REQUEST,
                "EntityTooLarge",
                format!(
                    "Your proposed upload exceeds the maximum allowed size: {size} bytes sent, at most {max} allowed"
                ),
            ));
        }
        if size < min {
            return Err(S3Error::new(
                StatusCode::BAD_REQUEST,
                "EntityTooSmall",
                format!(
                    "Your proposed upload is smaller than the minimum allowed size: {size} bytes sent, at least {min} required"
                ),
            ));
        }
        let object = dir.join(object_file_name(&expected.key));
        temp.persist(&object).map_err(S3Error::internal)?;
        // Asked again once the object is in place: deleted meanwhile, it goes (a deletion
        // after this answer removes it with its file).
        if !self.wanted(bucket, &expected.key) {
            let _ = std::fs::remove_file(&object);
            return Err(S3Error::not_wanted());
        }
        Ok(UploadEvent {
            bucket: bucket.to_owned(),
            key: expected.key,
            size,
        })
    }
}

pub(super) fn malformed(e: multer::Error) -> S3Error {
    S3Error::new(
        StatusCode::BAD_REQUEST,
        "MalformedPOSTRequest",
        format!("The body is not well-formed multipart/form-data: {e}"),
    )
}

/// A text field's value; `None` when it is not UTF-8.
async fn read_text_field(
    name: &str,
    field: &mut multer::Field<'_>,
) -> Result<Option<String>, S3Error> {
    let mut buf = Vec::new();
    while let Some(chunk) = field.chunk().await.map_err(malformed)? {
        if buf.len().saturating_add(chunk.len()) > MAX_FIELD_LEN {
            return Err(S3Error::invalid_argument(format!(
                "Field {name} is too long"
            )));
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8(buf).ok())
}

/// Reads and discards what is left of a form (so the client reads the answer).
pub(super) async fn drain_form(form: &mut multer::Multipart<'_>) {
    while let Ok(Some(mut field)) = form.next_field().await {
        while let Ok(Some(_)) = field.chunk().await {}
    }
}

pub(super) async fn drain_body(body: Body) {
    let mut stream = body.into_data_stream();
    while let Some(Ok(_)) = stream.next().await {}
}
