//! Records and enums that cross the boundary, and their conversions from and to
//! svc-core's types. Conversions only: no behaviour lives here.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use svc_core::Metadata;
use svc_core::cloud as sc;
use svc_core::unit as su;

use crate::bytes::Utf8Bytes;
use crate::config::ProcessingConfig;
use crate::error::{SvcError, json_error, parse_id};

// ---------------------------------------------------------------- secrets

/// A secret value (an API secret, a webhook signing secret, a pre-signed address).
/// Its `toString()` / `description` is `[redacted]`: records holding one can be
/// printed or logged. `reveal()` gives the value.
#[derive(uniffi::Object)]
#[uniffi::export(Display, Debug)]
pub struct Secret {
    value: String,
}

#[uniffi::export]
impl Secret {
    /// Wraps a secret value.
    #[uniffi::constructor]
    pub fn new(value: String) -> Arc<Self> {
        Arc::new(Self { value })
    }

    /// The secret itself. Do not log it.
    pub fn reveal(&self) -> String {
        self.value.clone()
    }
}

impl Secret {
    pub(crate) fn wrap(value: impl Into<String>) -> Arc<Self> {
        Arc::new(Self {
            value: value.into(),
        })
    }

    pub(crate) fn expose(&self) -> &str {
        &self.value
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

// ---------------------------------------------------------------- helpers

pub(crate) fn time(t: svc_core::cloud::Timestamp) -> SystemTime {
    SystemTime::from(t.0)
}

/// An integer of the API that stays small (a page, an attempt, a count of workers, an
/// HTTP status): 32 bits across the boundary; Swift `Int` (the platform's integer),
/// Kotlin `Int`. Signed: the unsigned forms (`UInt`, `ULong`) are awkward to use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Count(pub i32);
uniffi::custom_newtype!(Count, i32);

/// An integer of the API that can be large (bytes, records, items over all pages): 64
/// bits across the boundary; Swift `Int`, Kotlin `Long`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LongCount(pub i64);
uniffi::custom_newtype!(LongCount, i64);

/// A count or size of svc-core as a [`LongCount`].
pub(crate) fn signed(n: u64) -> LongCount {
    LongCount(i64::try_from(n).unwrap_or(i64::MAX))
}

/// A small count of svc-core as a [`Count`].
pub(crate) fn small(n: u32) -> Count {
    Count(i32::try_from(n).unwrap_or(i32::MAX))
}

/// A count from the foreign side, at least `min`.
pub(crate) fn at_least(n: Count, min: u32) -> u32 {
    u32::try_from(n.0).unwrap_or(0).max(min)
}

pub(crate) fn metadata_out(m: Metadata) -> HashMap<String, String> {
    m.into_iter().collect()
}

/// Metadata from the foreign side, in key order (a foreign map has none of its own).
pub(crate) fn metadata_in(m: HashMap<String, String>) -> Metadata {
    m.into_iter()
        .collect::<BTreeMap<_, _>>()
        .into_iter()
        .collect()
}

pub(crate) fn json_object_out(m: serde_json::Map<String, serde_json::Value>) -> String {
    serde_json::Value::Object(m).to_string()
}

/// A JSON object argument (a processing configuration).
pub(crate) fn json_object_in(
    what: &str,
    text: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, SvcError> {
    match serde_json::from_str(text).map_err(|e| json_error(what, &e))? {
        serde_json::Value::Object(m) => Ok(m),
        _ => Err(SvcError::invalid(format!("{what} must be a JSON object"))),
    }
}

/// A JSON argument of any shape (a settings tree or node value).
pub(crate) fn json_in(what: &str, text: &impl AsRef<[u8]>) -> Result<serde_json::Value, SvcError> {
    serde_json::from_slice(text.as_ref()).map_err(|e| json_error(what, &e))
}

/// A JSON document (a settings tree) as its UTF-8 bytes. The foreign code sees a
/// `String` (`uniffi.toml` converts it): a string of tens of kilobytes crosses much
/// faster as bytes (`toByteArray(UTF_8)` in Kotlin, `Data(s.utf8)` in Swift) than
/// through uniffi's checked string encoder, which was most of the time of a settings
/// diff from Kotlin. Text that is not UTF-8 is not JSON: the parser reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonText(Utf8Bytes);

uniffi::custom_type!(JsonText, Utf8Bytes, {
    lower: |text| text.0,
    try_lift: |bytes| Ok(JsonText(bytes)),
});

impl AsRef<[u8]> for JsonText {
    fn as_ref(&self) -> &[u8] {
        self.0.as_slice()
    }
}

impl From<Vec<u8>> for JsonText {
    fn from(bytes: Vec<u8>) -> Self {
        Self(Utf8Bytes::new(bytes))
    }
}

impl From<&str> for JsonText {
    fn from(text: &str) -> Self {
        text.as_bytes().to_vec().into()
    }
}

impl From<String> for JsonText {
    fn from(text: String) -> Self {
        text.into_bytes().into()
    }
}

// ---------------------------------------------------------------- open enums

macro_rules! open_enum {
    ($(#[$doc:meta])* $name:ident from $m:ident :: $src:ident { $($variant:ident),+ $(,)? }) => {
        $(#[$doc])*
        ///
        /// An open enumeration: a value this version does not know is `Unknown`, with
        /// the value as sent.
        #[derive(Clone, Debug, PartialEq, Eq, Hash, uniffi::Enum)]
        pub enum $name {
            $( #[allow(missing_docs)] $variant, )+
            /// A value this version does not know, as sent.
            Unknown(String),
        }

        impl From<$m::$src> for $name {
            fn from(value: $m::$src) -> Self {
                match value {
                    $( $m::$src::$variant => Self::$variant, )+
                    $m::$src::Unknown(other) => Self::Unknown(other),
                }
            }
        }

        impl From<$name> for $m::$src {
            fn from(value: $name) -> Self {
                match value {
                    $( $name::$variant => Self::$variant, )+
                    $name::Unknown(other) => Self::from(other),
                }
            }
        }
    };
}

use svc_core::unit::enums as de;

open_enum!(
    /// Status of a container file.
    ContainerFileStatus from sc::ContainerFileStatus { Pending, Ready, Deleting, Deleted });
open_enum!(
    /// Role of a container file.
    ContainerFileType from sc::ContainerFileType { Input, Resources });
open_enum!(
    /// Where a container's files are stored and its processings run.
    ContainerRegion from sc::ContainerRegion { EuWest3, UsWest1, ApNortheast1, ApSoutheast2 });
open_enum!(
    /// Status of a container.
    ContainerStatus from sc::ContainerStatus { Empty, Valid, Archived });
open_enum!(
    /// Type of a webhook event.
    EventType from sc::EventType { CloudProcessingEnded, CloudProcessingProgress, CloudProcessingError });
open_enum!(
    /// Level of a processing's error record.
    ProcessingErrorLevel from sc::ProcessingErrorLevel { Error, Warning });
open_enum!(
    /// Result of a processed processing.
    ProcessingResult from sc::ProcessingResult { Succeeded, Failed });
open_enum!(
    /// Status of a processing.
    ProcessingStatus from sc::ProcessingStatus { Pending, Processing, Processed, Canceled, Archived });
open_enum!(
    /// Step a running processing is at.
    ProcessingStep from sc::ProcessingStep { Import, BaseStation, Preprocessing, Processing, Export, Report });
open_enum!(
    /// Type of a processing.
    ProcessingType from sc::ProcessingType { Gnss, Ins });
open_enum!(
    /// Status of a region of the service.
    RegionStatus from sc::RegionStatus { Online, Degraded, Offline });
open_enum!(
    /// A user of the unit.
    UserName from de::UserName { Viewer, Operator, PowerUser, Setup, Factory });
open_enum!(
    /// State of the unit's data logger.
    DataLoggerState from de::DataLoggerState { Idle, Logging });

// ---------------------------------------------------------------- cloud records

/// The upload form of a `pending` container file: a pre-signed storage address and
/// its form fields. Opaque (it is a credential until it expires); pass it to
/// `Transfers.upload`.
#[derive(uniffi::Object)]
pub struct UploadInfo {
    pub(crate) inner: sc::UploadInfo,
}

#[uniffi::export]
impl UploadInfo {
    /// The storage address without its query (the signature).
    pub fn redacted_url(&self) -> String {
        svc_core::transfer::redact_url(&self.inner.url)
    }
}

impl std::fmt::Debug for UploadInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UploadInfo")
            .field("url", &svc_core::transfer::redact_url(&self.inner.url))
            .finish_non_exhaustive()
    }
}

/// A file registered in a container.
#[derive(Clone, Debug, uniffi::Record)]
pub struct ContainerFile {
    pub id: String,
    pub creator_id: Option<String>,
    pub created_at: Option<SystemTime>,
    pub updated_at: Option<SystemTime>,
    /// Its path in the container.
    pub path: String,
    pub size: Option<LongCount>,
    pub status: ContainerFileStatus,
    pub file_type: Option<ContainerFileType>,
    pub metadata: Option<HashMap<String, String>>,
    /// Present while the file is `pending`.
    pub upload_info: Option<Arc<UploadInfo>>,
}

impl From<sc::ContainerFile> for ContainerFile {
    fn from(f: sc::ContainerFile) -> Self {
        Self {
            id: f.id.to_string(),
            creator_id: f.creator_id.map(|id| id.to_string()),
            created_at: f.created_at.map(time),
            updated_at: f.updated_at.map(time),
            path: f.path,
            size: f.size.map(LongCount),
            status: f.status.into(),
            file_type: f.type_.map(Into::into),
            metadata: f.metadata.map(metadata_out),
            upload_info: f.upload_info.map(|inner| Arc::new(UploadInfo { inner })),
        }
    }
}

/// A container of files.
#[derive(Clone, Debug, uniffi::Record)]
pub struct Container {
    pub id: String,
    pub organization_id: Option<String>,
    pub creator_id: Option<String>,
    pub created_at: Option<SystemTime>,
    pub updated_at: Option<SystemTime>,
    pub expiration_date: Option<SystemTime>,
    pub files: Vec<ContainerFile>,
    pub metadata: Option<HashMap<String, String>>,
    pub region: Option<ContainerRegion>,
    pub status: ContainerStatus,
}

impl From<sc::Container> for Container {
    fn from(c: sc::Container) -> Self {
        Self {
            id: c.id.to_string(),
            organization_id: c.organization_id.map(|id| id.to_string()),
            creator_id: c.creator_id.map(|id| id.to_string()),
            created_at: c.created_at.map(time),
            updated_at: c.updated_at.map(time),
            expiration_date: c.expiration_date.map(time),
            files: c.files.into_iter().map(Into::into).collect(),
            metadata: c.metadata.map(metadata_out),
            region: c.region.map(Into::into),
            status: c.status.into(),
        }
    }
}

/// One page of containers, with the total over all pages.
#[derive(Clone, Debug, uniffi::Record)]
pub struct ContainerPage {
    pub containers: Vec<Container>,
    pub num_items: LongCount,
}

/// A file to register in a container.
#[derive(Clone, Debug, uniffi::Record)]
pub struct CreateContainerFile {
    pub path: String,
    pub size: LongCount,
    pub file_type: ContainerFileType,
    #[uniffi(default = None)]
    pub metadata: Option<HashMap<String, String>>,
}

impl From<CreateContainerFile> for sc::CreateContainerFile {
    fn from(f: CreateContainerFile) -> Self {
        Self {
            path: f.path,
            size: f.size.0,
            type_: f.file_type.into(),
            metadata: f.metadata.map(metadata_in),
        }
    }
}

/// A container to create, with files registered at once.
#[derive(Clone, Debug, uniffi::Record)]
pub struct CreateContainerRequest {
    pub region: ContainerRegion,
    #[uniffi(default = None)]
    pub metadata: Option<HashMap<String, String>>,
    #[uniffi(default = [])]
    pub files: Vec<CreateContainerFile>,
}

impl From<CreateContainerRequest> for sc::CreateContainerRequest {
    fn from(r: CreateContainerRequest) -> Self {
        Self {
            region: r.region.into(),
            metadata: r.metadata.map(metadata_in),
            files: r.files.into_iter().map(Into::into).collect(),
        }
    }
}

/// Changes to a container file; absent fields are left unchanged.
#[derive(Clone, Debug, uniffi::Record)]
pub struct UpdateContainerFileRequest {
    #[uniffi(default = None)]
    pub file_type: Option<ContainerFileType>,
    #[uniffi(default = None)]
    pub path: Option<String>,
    #[uniffi(default = None)]
    pub metadata: Option<HashMap<String, String>>,
}

impl From<UpdateContainerFileRequest> for sc::UpdateContainerFileRequest {
    fn from(r: UpdateContainerFileRequest) -> Self {
        Self {
            type_: r.file_type.map(Into::into),
            path: r.path,
            metadata: r.metadata.map(metadata_in),
        }
    }
}

/// Errors and warnings recorded for a processing.
#[derive(Clone, Debug, uniffi::Record)]
pub struct ErrorCount {
    pub errors: LongCount,
    pub warnings: LongCount,
}

/// A processing job run on a container. Only `id` and `status` are certain: the
/// service sends the other fields, and one it leaves out reads as `None`.
#[derive(Clone, Debug, uniffi::Record)]
pub struct Processing {
    pub id: String,
    pub organization_id: Option<String>,
    pub creator_id: Option<String>,
    /// `None` once its container is deleted.
    pub container_id: Option<String>,
    pub name: Option<String>,
    pub status: ProcessingStatus,
    pub processing_type: Option<ProcessingType>,
    pub processing_step: Option<ProcessingStep>,
    /// 0 to 1.
    pub processing_progress: Option<f64>,
    pub processing_result: Option<ProcessingResult>,
    pub error_count: Option<ErrorCount>,
    pub region: Option<ContainerRegion>,
    pub created_at: Option<SystemTime>,
    pub updated_at: Option<SystemTime>,
    pub archive_scheduled_at: Option<SystemTime>,
    pub metadata: Option<HashMap<String, String>>,
    /// How long the mission in the input data lasts (whole seconds).
    pub mission_length: Option<Duration>,
    pub mission_location_country: Option<String>,
    pub mission_location_place: Option<String>,
    pub mission_location_region: Option<String>,
    /// How long the processing ran (whole seconds); `None` until it is known.
    pub processing_duration: Option<Duration>,
    /// The processing configuration (an empty shorthand when the service left it out).
    pub processing_config: ProcessingConfig,
}

impl From<sc::Processing> for Processing {
    fn from(p: sc::Processing) -> Self {
        Self {
            id: p.id.to_string(),
            organization_id: p.organization_id.map(|id| id.to_string()),
            creator_id: p.creator_id.map(|id| id.to_string()),
            container_id: p.container_id.map(|id| id.to_string()),
            name: p.name,
            status: p.status.into(),
            processing_type: p.type_.map(Into::into),
            processing_step: p.processing_step.map(Into::into),
            processing_progress: p.processing_progress,
            processing_result: p.processing_result.map(Into::into),
            error_count: p.error_count.map(|c| ErrorCount {
                errors: signed(c.errors),
                warnings: signed(c.warnings),
            }),
            region: p.region.map(Into::into),
            created_at: p.created_at.map(time),
            updated_at: p.updated_at.map(time),
            archive_scheduled_at: p.archive_scheduled_at.map(time),
            metadata: p.metadata.map(metadata_out),
            mission_length: p.mission_length.and_then(seconds),
            mission_location_country: p.mission_location_country,
            mission_location_place: p.mission_location_place,
            mission_location_region: p.mission_location_region,
            processing_duration: p.processing_duration.and_then(seconds),
            processing_config: ProcessingConfig::from_service(p.processing_json),
        }
    }
}

/// A count of seconds the service gave as a duration (`None` for a negative one, which
/// the service's schema excludes).
fn seconds(count: i64) -> Option<Duration> {
    u64::try_from(count).ok().map(Duration::from_secs)
}

/// One page of processings, with the total over all pages.
#[derive(Clone, Debug, uniffi::Record)]
pub struct ProcessingPage {
    pub processings: Vec<Processing>,
    pub num_items: LongCount,
}

/// An error or warning recorded for a processing.
#[derive(Clone, Debug, uniffi::Record)]
pub struct ProcessingError {
    pub id: String,
    pub date: Option<SystemTime>,
    pub level: Option<ProcessingErrorLevel>,
    pub message: Option<String>,
}

impl From<sc::ProcessingError> for ProcessingError {
    fn from(e: sc::ProcessingError) -> Self {
        Self {
            id: e.id.to_string(),
            date: e.date.map(time),
            level: e.level.map(Into::into),
            message: e.message,
        }
    }
}

/// A file a processing produced, with its pre-signed download address (a [`Secret`]:
/// anyone holding it can download the file until it expires).
#[derive(Clone, Debug, uniffi::Record)]
pub struct OutputFile {
    pub path: String,
    pub url: Arc<Secret>,
}

impl From<sc::OutputFile> for OutputFile {
    fn from(o: sc::OutputFile) -> Self {
        Self {
            path: o.path,
            url: Secret::wrap(o.url),
        }
    }
}

impl From<OutputFile> for sc::OutputFile {
    fn from(o: OutputFile) -> Self {
        Self {
            path: o.path,
            url: o.url.expose().to_owned(),
        }
    }
}

/// What to start: a container and a complete processing configuration.
#[derive(Clone, Debug, uniffi::Record)]
pub struct StartProcessingRequest {
    pub container_id: String,
    /// The processing configuration.
    pub processing_config: ProcessingConfig,
    #[uniffi(default = None)]
    pub name: Option<String>,
    #[uniffi(default = None)]
    pub metadata: Option<HashMap<String, String>>,
}

impl TryFrom<StartProcessingRequest> for sc::StartProcessingRequest {
    type Error = SvcError;
    fn try_from(r: StartProcessingRequest) -> Result<Self, SvcError> {
        Ok(Self {
            container_id: parse_id("containerId", &r.container_id)?,
            processing_json: r.processing_config.into_map()?,
            name: r.name,
            metadata: r.metadata.map(metadata_in),
        })
    }
}

/// The service's versions and the status of each region.
#[derive(Clone, Debug, uniffi::Record)]
pub struct ServerInfo {
    pub api_version: Option<String>,
    pub version: Option<String>,
    pub engine_versions: Vec<String>,
    pub regions_status: HashMap<String, RegionStatus>,
}

impl From<sc::ServerInfo> for ServerInfo {
    fn from(s: sc::ServerInfo) -> Self {
        Self {
            api_version: s.api_version,
            version: s.version,
            engine_versions: s.engine_versions,
            regions_status: s
                .regions_status
                .into_iter()
                .map(|(k, v)| (k, v.into()))
                .collect(),
        }
    }
}

/// A webhook endpoint, with its signing secret.
#[derive(Clone, Debug, uniffi::Record)]
pub struct WebhookEndpoint {
    pub id: String,
    pub url: Option<String>,
    pub enabled: Option<bool>,
    pub enabled_event_types: Vec<EventType>,
    pub metadata: Option<HashMap<String, String>>,
    /// The signing secret (`whsec_…`): give `secret.reveal()` to `Webhook`.
    pub secret: Option<Arc<Secret>>,
}

impl From<sc::WebhookEndpoint> for WebhookEndpoint {
    fn from(e: sc::WebhookEndpoint) -> Self {
        Self {
            id: e.id.to_string(),
            url: e.url,
            enabled: e.enabled,
            enabled_event_types: e.enabled_event_types.into_iter().map(Into::into).collect(),
            metadata: e.metadata.map(metadata_out),
            secret: e.secret.map(|s| Secret::wrap(s.expose_secret())),
        }
    }
}

/// A webhook endpoint to register.
#[derive(Clone, Debug, uniffi::Record)]
pub struct CreateWebhookEndpointRequest {
    pub url: String,
    pub enabled_event_types: Vec<EventType>,
    #[uniffi(default = None)]
    pub metadata: Option<HashMap<String, String>>,
}

impl From<CreateWebhookEndpointRequest> for sc::CreateWebhookEndpointRequest {
    fn from(r: CreateWebhookEndpointRequest) -> Self {
        Self {
            url: r.url,
            enabled_event_types: r.enabled_event_types.into_iter().map(Into::into).collect(),
            metadata: r.metadata.map(metadata_in),
        }
    }
}

/// Changes to a webhook endpoint; absent fields are left unchanged.
#[derive(Clone, Debug, uniffi::Record)]
pub struct UpdateWebhookEndpointRequest {
    #[uniffi(default = None)]
    pub url: Option<String>,
    #[uniffi(default = None)]
    pub enabled: Option<bool>,
    /// Empty: unchanged.
    #[uniffi(default = [])]
    pub enabled_event_types: Vec<EventType>,
    #[uniffi(default = None)]
    pub metadata: Option<HashMap<String, String>>,
}

impl From<UpdateWebhookEndpointRequest> for sc::UpdateWebhookEndpointRequest {
    fn from(r: UpdateWebhookEndpointRequest) -> Self {
        Self {
            url: r.url,
            enabled: r.enabled,
            enabled_event_types: r.enabled_event_types.into_iter().map(Into::into).collect(),
            metadata: r.metadata.map(metadata_in),
        }
    }
}

/// An event that could not be delivered to a webhook endpoint.
#[derive(Clone, Debug, uniffi::Record)]
pub struct MissedWebhook {
    pub id: String,
    pub created_at: Option<SystemTime>,
    pub event_type: EventType,
    /// Empty when the service leaves it out.
    pub endpoint_metadata: HashMap<String, String>,
    /// The event's payload, a JSON object (`{}` when left out).
    pub payload: String,
}

impl From<sc::MissedWebhook> for MissedWebhook {
    fn from(m: sc::MissedWebhook) -> Self {
        Self {
            id: m.id.to_string(),
            created_at: m.created_at.map(time),
            event_type: m.event_type.into(),
            endpoint_metadata: m.endpoint_metadata.map(metadata_out).unwrap_or_default(),
            payload: json_object_out(m.payload),
        }
    }
}

/// A verified webhook delivery.
#[derive(Clone, Debug, uniffi::Record)]
pub struct WebhookEvent {
    pub id: String,
    pub created_at: Option<SystemTime>,
    pub event_type: EventType,
    /// Empty when the service leaves it out.
    pub endpoint_metadata: HashMap<String, String>,
    /// The processing the event is about.
    pub payload: Processing,
}

impl From<svc_core::WebhookEvent> for WebhookEvent {
    fn from(e: svc_core::WebhookEvent) -> Self {
        Self {
            id: e.id.to_string(),
            created_at: e.created_at.map(time),
            event_type: e.event_type.into(),
            endpoint_metadata: e.endpoint_metadata.map(metadata_out).unwrap_or_default(),
            payload: e.payload.into(),
        }
    }
}

// ---------------------------------------------------------------- unit records

/// The unit's identity and versions.
#[derive(Clone, Debug, uniffi::Record)]
pub struct DeviceInfo {
    pub product_code: String,
    pub product_type: String,
    pub serial_number: String,
    pub hw_revision: String,
    pub fmw_version: String,
    pub bt_version: String,
    pub api_version: String,
    pub e_com_version: String,
    pub mac_address: String,
    pub mnf_date: String,
    pub mnf_version: String,
}

impl From<svc_core::unit::types::DeviceInfo> for DeviceInfo {
    fn from(i: svc_core::unit::types::DeviceInfo) -> Self {
        Self {
            product_code: i.product_code,
            product_type: i.product_type,
            serial_number: i.serial_number,
            hw_revision: i.hw_revision,
            fmw_version: i.fmw_version,
            bt_version: i.bt_version,
            api_version: i.api_version,
            e_com_version: i.e_com_version,
            mac_address: i.mac_address,
            mnf_date: i.mnf_date,
            mnf_version: i.mnf_version,
        }
    }
}

/// The data logger's state.
#[derive(Clone, Debug, uniffi::Record)]
pub struct DataLoggerStatus {
    pub state: DataLoggerState,
    pub session_name: String,
    pub total_bytes: LongCount,
    pub used_bytes: LongCount,
}

impl From<svc_core::unit::types::DataLoggerStatus> for DataLoggerStatus {
    fn from(s: svc_core::unit::types::DataLoggerStatus) -> Self {
        Self {
            state: s.state.into(),
            session_name: s.session_name,
            total_bytes: LongCount(s.total_bytes),
            used_bytes: LongCount(s.used_bytes),
        }
    }
}

/// One file of a logger session.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct LoggerFile {
    /// `<session>.NNN`.
    pub name: String,
    /// Its size now, in bytes.
    pub size: LongCount,
}

/// One session of the unit's data logger.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct LoggerSession {
    /// The session's folder name.
    pub name: String,
    /// The bytes of all its files.
    pub size: LongCount,
    /// Whether the data logger is writing it now.
    pub recording: Option<bool>,
    /// Its files, in order.
    pub files: Vec<LoggerFile>,
}

impl From<su::LoggerSession> for LoggerSession {
    fn from(s: su::LoggerSession) -> Self {
        Self {
            size: signed(s.size()),
            name: s.name,
            recording: s.recording,
            files: s
                .files
                .into_iter()
                .map(|f| LoggerFile {
                    name: f.name,
                    size: signed(f.size),
                })
                .collect(),
        }
    }
}

/// What a logger download wrote.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct Downloaded {
    /// The files written (`dest/<session>/<file>`), in order.
    pub files: Vec<String>,
    /// Their bytes.
    pub bytes: LongCount,
    /// How many times a dropped transfer was resumed.
    pub resumed: Count,
    /// Whether what was downloaded was then deleted from the unit.
    pub deleted: bool,
}

impl From<su::Downloaded> for Downloaded {
    fn from(d: su::Downloaded) -> Self {
        Self {
            files: d
                .files
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect(),
            bytes: signed(d.bytes),
            resumed: Count(i32::try_from(d.resumed).unwrap_or(i32::MAX)),
            deleted: d.deleted,
        }
    }
}

/// The answer of a settings write.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct WriteOutcome {
    /// Whether the change takes effect only after a reboot.
    pub need_reboot: bool,
}

impl From<su::WriteOutcome> for WriteOutcome {
    fn from(w: su::WriteOutcome) -> Self {
        Self {
            need_reboot: w.need_reboot,
        }
    }
}

/// How `InsUnit.applyWanted` applies a wanted tree.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct ApplyOptions {
    /// Only validate the change on the unit; apply nothing.
    #[uniffi(default = false)]
    pub check_only: bool,
    /// Hold the settings lock while reading, writing and reading back.
    #[uniffi(default = false)]
    pub lock: bool,
    /// When the change takes effect only after a reboot: save the settings and reboot
    /// the unit.
    #[uniffi(default = false)]
    pub reboot: bool,
    /// After that reboot, wait until the unit answers again, at most this long
    /// (`null`/`nil`: return once the reboot was asked for).
    #[uniffi(default = None)]
    pub wait_until_back: Option<std::time::Duration>,
}

impl From<ApplyOptions> for su::ApplyOptions {
    fn from(o: ApplyOptions) -> Self {
        Self {
            check_only: o.check_only,
            lock: o.lock,
            reboot: o.reboot,
            wait_until_back: o.wait_until_back,
        }
    }
}

/// What `InsUnit.applyWanted` did.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct ApplyReport {
    /// The nodes that differed (and were written unless `checkOnly`).
    pub changed: Vec<String>,
    pub need_reboot: bool,
    /// Whether anything was written.
    pub written: bool,
    /// Whether the unit was saved and rebooted (`reboot` and a change that needs it).
    pub rebooted: bool,
    /// A reboot was asked for and needed, and its answer was lost without the unit
    /// being seen to reboot: the change is written and saved; reboot it again.
    pub reboot_pending: bool,
    /// The unlock's answer was lost (the change is written and confirmed); the unit
    /// ends the lock after 60 s without a request, or at a reboot.
    pub unlock_unconfirmed: bool,
}

impl From<su::ApplyReport> for ApplyReport {
    fn from(r: su::ApplyReport) -> Self {
        Self {
            changed: r.changed,
            need_reboot: r.need_reboot,
            written: r.written,
            rebooted: r.rebooted,
            reboot_pending: r.reboot_pending,
            unlock_unconfirmed: r.unlock_unconfirmed,
        }
    }
}
