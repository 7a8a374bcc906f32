//! The emulator's state: organizations, API keys and tokens, containers and their files,
//! processings, webhook endpoints and missed webhooks. Everything is in memory (files in
//! a temporary folder), behind one mutex that is never held across an `.await`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, Utc};
use indexmap::IndexMap;
use svc_cloud_api::cloud::types::{
    Container, ContainerFile, Processing, ProcessingError, UploadInfo,
};
use svc_cloud_api::enums::{
    ContainerFileStatus, ContainerFileType, ContainerRegion, ContainerStatus, EventType,
};
use svc_cloud_api::notification::types::MissedWebhook;
use svc_cloud_api::{Metadata, Timestamp};
use tokio::sync::watch;
use uuid::Uuid;

use crate::config::EmulatorConfig;
use crate::info::OrganizationCredentials;
use crate::storage::{Storage, StorageConfig, UploadEvent};

/// The addresses of the four servers.
#[derive(Clone, Debug)]
pub struct Urls {
    pub base: String,
    pub auth: String,
    pub notification: String,
    pub storage: String,
}

/// Now, at the millisecond precision of the service's timestamps.
pub fn now() -> Timestamp {
    Timestamp::now()
}

/// `n` random bytes as lowercase hex.
pub fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    if getrandom::fill(&mut bytes).is_err() {
        // No system randomness: fall back to UUIDs (still unpredictable enough for an emulator).
        bytes = (0..n.div_ceil(16))
            .flat_map(|_| *Uuid::new_v4().as_bytes())
            .take(n)
            .collect();
    }
    hex::encode(bytes)
}

pub struct Organization {
    pub credits: u32,
    pub credentials: OrganizationCredentials,
}

pub struct ApiKey {
    pub secret: String,
    pub organization_id: Uuid,
    pub user_id: Uuid,
    pub admin: bool,
}

/// Who a valid access token belongs to.
#[derive(Clone, Debug)]
pub struct Caller {
    pub organization_id: Uuid,
    pub user_id: Uuid,
    pub admin: bool,
    pub scopes: Vec<String>,
    pub expires_at: DateTime<Utc>,
}

pub struct ContainerRecord {
    pub id: Uuid,
    pub organization_id: Uuid,
    pub region: ContainerRegion,
    pub metadata: Metadata,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub expiration_date: Timestamp,
    pub creator_id: Uuid,
    /// The container's files, in registration order.
    pub files: Vec<Uuid>,
}

pub struct FileRecord {
    pub id: Uuid,
    pub container_id: Uuid,
    pub type_: ContainerFileType,
    pub status: ContainerFileStatus,
    pub size: u64,
    pub path: String,
    pub metadata: Metadata,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub creator_id: Uuid,
    pub bucket: String,
    pub key: String,
}

pub struct ProcessingRecord {
    pub processing: Processing,
    pub errors: Vec<ProcessingError>,
    /// Result files: container path and storage key.
    pub outputs: Vec<(String, String)>,
    pub bucket: String,
}

pub struct EndpointRecord {
    pub organization_id: Uuid,
    pub endpoint: svc_cloud_api::notification::types::WebhookEndpoint,
}

#[derive(Default)]
pub struct Db {
    pub organizations: IndexMap<Uuid, Organization>,
    pub keys: HashMap<String, ApiKey>,
    pub tokens: HashMap<String, Caller>,
    pub containers: IndexMap<Uuid, ContainerRecord>,
    pub files: HashMap<Uuid, FileRecord>,
    pub processings: IndexMap<Uuid, ProcessingRecord>,
    pub endpoints: IndexMap<Uuid, EndpointRecord>,
    pub missed: HashMap<Uuid, Vec<MissedWebhook>>,
    /// Every event raised for each endpoint (delivered or not), in order: tests check
    /// that their receiver got each one.
    pub raised: HashMap<Uuid, Vec<Uuid>>,
}

pub struct App {
    pub config: EmulatorConfig,
    pub urls: Urls,
    pub storage: Storage,
    db: Arc<Mutex<Db>>,
    pub http: reqwest::Client,
    stop: watch::Sender<bool>,
    /// The temporary folder of the objects; removed when the emulator goes.
    _dir: tempfile::TempDir,
}

impl App {
    pub fn new(config: EmulatorConfig, urls: Urls) -> anyhow::Result<Arc<Self>> {
        let dir = tempfile::Builder::new().prefix("svc-emulator-").tempdir()?;
        let db = Arc::new(Mutex::new(Db::default()));
        let uploads = db.clone();
        let files = db.clone();
        let storage = Storage::new(StorageConfig {
            root: dir.path().to_path_buf(),
            public_url: urls.storage.clone(),
            access_key: format!("EMU{}", random_hex(8).to_uppercase()),
            secret_key: random_hex(20),
            session_token: crate::storage::new_session_token(),
            extra_fields: config.upload_extra_fields.clone(),
            upload_bytes_per_second: config.upload_bytes_per_second,
            upload_ttl: config.upload_ttl,
            download_ttl: config.download_ttl,
            on_upload: Arc::new(move |event: &UploadEvent| mark_uploaded(&uploads, event)),
        })?
        // The forms of a deleted file (alone or with its container) are refused: an
        // upload would leave an object no file names.
        .with_upload_gate(Arc::new(move |bucket: &str, key: &str| {
            file_of_object(&lock(&files), bucket, key).is_some()
        }));
        let http = reqwest::Client::builder()
            .timeout(config.webhook_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        let (stop, _) = watch::channel(false);
        let app = Arc::new(Self {
            config,
            urls,
            storage,
            db,
            http,
            stop,
            _dir: dir,
        });
        {
            let mut db = app.db();
            for _ in 0..2 {
                let org = Organization {
                    credits: app.config.credits,
                    credentials: OrganizationCredentials {
                        organization_id: Uuid::new_v4(),
                        api_key: format!("svc_key_{}", random_hex(12)),
                        api_secret: format!("svc_secret_{}", random_hex(24)),
                        member_api_key: format!("svc_key_{}", random_hex(12)),
                        member_api_secret: format!("svc_secret_{}", random_hex(24)),
                    },
                };
                let c = &org.credentials;
                for (key, secret, admin) in [
                    (&c.api_key, &c.api_secret, true),
                    (&c.member_api_key, &c.member_api_secret, false),
                ] {
                    db.keys.insert(
                        key.clone(),
                        ApiKey {
                            secret: secret.clone(),
                            organization_id: c.organization_id,
                            user_id: Uuid::new_v4(),
                            admin,
                        },
                    );
                }
                db.organizations.insert(c.organization_id, org);
            }
        }
        Ok(app)
    }

    /// The state, locked. Never hold the guard across an `.await`.
    pub fn db(&self) -> MutexGuard<'_, Db> {
        lock(&self.db)
    }

    pub fn organizations(&self) -> Vec<OrganizationCredentials> {
        self.db()
            .organizations
            .values()
            .map(|o| o.credentials.clone())
            .collect()
    }

    pub fn set_credits(&self, organization_id: Uuid, credits: u32) {
        if let Some(org) = self.db().organizations.get_mut(&organization_id) {
            org.credits = credits;
        }
    }

    pub fn caller_for_token(&self, token: &str) -> Option<Caller> {
        let mut db = self.db();
        let caller = db.tokens.get(token)?.clone();
        if caller.expires_at <= Utc::now() {
            db.tokens.remove(token);
            return None;
        }
        Some(caller)
    }

    /// A receiver that turns true when the emulator stops (background tasks watch it).
    pub fn stopped(&self) -> watch::Receiver<bool> {
        self.stop.subscribe()
    }

    pub fn stop_background(&self) {
        self.stop.send_replace(true);
    }

    /// Sleeps, unless the emulator stops first (then `false`).
    pub async fn sleep(&self, duration: std::time::Duration) -> bool {
        let mut stopped = self.stopped();
        if *stopped.borrow() {
            return false;
        }
        tokio::select! {
            _ = tokio::time::sleep(duration) => true,
            _ = stopped.wait_for(|s| *s) => false,
        }
    }

    pub fn stored_outputs(&self, processing_id: Uuid) -> Vec<(String, Vec<u8>)> {
        let outputs = {
            let db = self.db();
            match db.processings.get(&processing_id) {
                Some(p) => p
                    .outputs
                    .iter()
                    .map(|(path, key)| (path.clone(), p.bucket.clone(), key.clone()))
                    .collect(),
                None => Vec::new(),
            }
        };
        outputs
            .into_iter()
            .filter_map(|(path, bucket, key)| {
                let file = self.storage.object_path(&bucket, &key)?;
                Some((path, std::fs::read(file).ok()?))
            })
            .collect()
    }

    /// A container as the service answers it, with fresh upload information for each
    /// file still `pending`.
    pub fn container_view(&self, db: &Db, record: &ContainerRecord) -> Container {
        self.container_view_unsigned(db, record).sign(&self.storage)
    }

    /// [`App::container_view`] without its upload forms, which [`UnsignedView::sign`]
    /// adds: a page of containers can hold a hundred pending files, whose forms are
    /// signed once the state's lock is released.
    pub fn container_view_unsigned(&self, db: &Db, record: &ContainerRecord) -> UnsignedView {
        let mut forms = Vec::new();
        let files: Vec<ContainerFile> = record
            .files
            .iter()
            .filter_map(|id| db.files.get(id))
            .enumerate()
            .map(|(index, f)| {
                if f.status == ContainerFileStatus::Pending {
                    forms.push(PendingForm {
                        index,
                        bucket: f.bucket.clone(),
                        key: f.key.clone(),
                        size: f.size,
                    });
                }
                file_view_unsigned(f)
            })
            .collect();
        UnsignedView {
            container: Container {
                id: record.id,
                status: if files.is_empty() {
                    ContainerStatus::Empty
                } else {
                    ContainerStatus::Valid
                },
                region: Some(record.region.clone()),
                expiration_date: Some(record.expiration_date),
                created_at: Some(record.created_at),
                updated_at: Some(record.updated_at),
                creator_id: Some(record.creator_id),
                organization_id: Some(record.organization_id),
                metadata: Some(record.metadata.clone()),
                files,
            },
            forms,
        }
    }

    pub fn file_view(&self, f: &FileRecord) -> ContainerFile {
        let mut view = file_view_unsigned(f);
        if f.status == ContainerFileStatus::Pending {
            view.upload_info = Some(upload_info(&self.storage, &f.bucket, &f.key, f.size));
        }
        view
    }

    /// Removes containers past their expiration date, as the service does: their files
    /// go, their processings stay with `containerId` null. A container whose processing
    /// still runs is kept until it ends.
    pub fn purge_expired(&self) {
        let now = Utc::now();
        let removed = {
            let mut db = self.db();
            let expired: Vec<Uuid> = db
                .containers
                .values()
                .filter(|c| c.expiration_date.0 <= now && !has_running_processing(&db, c.id))
                .map(|c| c.id)
                .collect();
            expired
                .into_iter()
                .filter_map(|id| remove_container(&mut db, id))
                .flatten()
                .collect::<Vec<_>>()
        };
        self.delete_objects(removed);
    }

    /// Deletes storage objects in the background.
    pub fn delete_objects(&self, objects: Vec<(String, String)>) {
        if objects.is_empty() {
            return;
        }
        let storage = self.storage.clone();
        tokio::spawn(async move {
            for (bucket, key) in objects {
                let _ = storage.delete_object(&bucket, &key).await;
            }
        });
    }
}

/// The state, locked.
fn lock(db: &Mutex<Db>) -> MutexGuard<'_, Db> {
    match db.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// The file whose object is `key` in `bucket` (`containers/{container}/files/{file}`),
/// if it exists.
fn file_of_object<'a>(db: &'a Db, bucket: &str, key: &str) -> Option<&'a FileRecord> {
    let id: Uuid = key.rsplit('/').next()?.parse().ok()?;
    db.files
        .get(&id)
        .filter(|f| f.bucket == bucket && f.key == key)
}

/// Storage accepted an upload: the file becomes `ready`.
fn mark_uploaded(db: &Mutex<Db>, event: &UploadEvent) {
    let mut db = lock(db);
    let Some(id) = file_of_object(&db, &event.bucket, &event.key).map(|f| f.id) else {
        return;
    };
    if let Some(file) = db
        .files
        .get_mut(&id)
        .filter(|f| f.status == ContainerFileStatus::Pending)
    {
        file.status = ContainerFileStatus::Ready;
        file.updated_at = now();
    }
}

pub fn has_running_processing(db: &Db, container_id: Uuid) -> bool {
    db.processings
        .values()
        .any(|p| p.processing.container_id == Some(container_id) && is_running(&p.processing))
}

pub fn is_running(p: &Processing) -> bool {
    use svc_cloud_api::enums::ProcessingStatus::{Pending, Processing as Running};
    matches!(p.status, Pending | Running)
}

/// Removes a container and its files; its processings keep their result files and get
/// `containerId` null. Returns the storage objects to delete.
pub fn remove_container(db: &mut Db, id: Uuid) -> Option<Vec<(String, String)>> {
    let record = db.containers.shift_remove(&id)?;
    let objects = record
        .files
        .iter()
        .filter_map(|f| db.files.remove(f))
        .map(|f| (f.bucket, f.key))
        .collect();
    for p in db.processings.values_mut() {
        if p.processing.container_id == Some(id) {
            p.processing.container_id = None;
        }
    }
    Some(objects)
}

/// The event types a processing change raises (`openapi/notification.yaml`, "Events" and
/// the `EventType` schema).
pub fn event_types_for(p: &Processing, error_recorded: bool) -> Vec<EventType> {
    use svc_cloud_api::enums::{ProcessingResult, ProcessingStatus};
    let mut events = vec![EventType::CloudProcessingProgress];
    if matches!(
        p.status,
        ProcessingStatus::Processed | ProcessingStatus::Canceled
    ) {
        events.push(EventType::CloudProcessingEnded);
    }
    if error_recorded || p.processing_result == Some(ProcessingResult::Failed) {
        events.push(EventType::CloudProcessingError);
    }
    events
}

/// A container's view whose pending files have no upload form yet
/// ([`App::container_view_unsigned`]).
pub struct UnsignedView {
    container: Container,
    forms: Vec<PendingForm>,
}

/// A pending file of an [`UnsignedView`]: where its form goes.
struct PendingForm {
    /// Its place in the container's `files`.
    index: usize,
    bucket: String,
    key: String,
    size: u64,
}

impl UnsignedView {
    /// The view with a freshly signed upload form for each pending file.
    pub fn sign(mut self, storage: &Storage) -> Container {
        for form in self.forms {
            if let Some(file) = self.container.files.get_mut(form.index) {
                file.upload_info = Some(upload_info(storage, &form.bucket, &form.key, form.size));
            }
        }
        self.container
    }
}

fn upload_info(storage: &Storage, bucket: &str, key: &str, size: u64) -> UploadInfo {
    let (url, fields) = storage.presign_upload(bucket, key, size);
    UploadInfo {
        url,
        fields: svc_cloud_api::UploadFields(fields),
    }
}

/// A file as the service answers it, without its upload form.
fn file_view_unsigned(f: &FileRecord) -> ContainerFile {
    ContainerFile {
        id: f.id,
        type_: Some(f.type_.clone()),
        status: f.status.clone(),
        size: Some(i64::try_from(f.size).unwrap_or(i64::MAX)),
        path: f.path.clone(),
        created_at: Some(f.created_at),
        updated_at: Some(f.updated_at),
        creator_id: Some(f.creator_id),
        metadata: Some(f.metadata.clone()),
        upload_info: None,
    }
}
