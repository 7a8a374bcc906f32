//! What a started emulator tells its user: its addresses, the credentials of its
//! organizations and its units, printed as one JSON line.

use serde::Serialize;
use uuid::Uuid;

/// The credentials of one organization: an administrator key (both scopes) and a
/// member key (a known identity without the administrator role: 403 everywhere).
#[derive(Clone, Debug, Serialize)]
pub struct OrganizationCredentials {
    pub organization_id: Uuid,
    pub api_key: String,
    pub api_secret: String,
    pub member_api_key: String,
    pub member_api_secret: String,
}

/// What a started emulator prints as one JSON line: its addresses and the credentials of
/// the first organization (all organizations under `organizations`).
#[derive(Clone, Debug, Serialize)]
pub struct EmulatorInfo {
    pub base_url: String,
    pub auth_url: String,
    pub notification_url: String,
    pub storage_url: String,
    pub organization_id: Uuid,
    pub api_key: String,
    pub api_secret: String,
    pub member_api_key: String,
    pub member_api_secret: String,
    pub organizations: Vec<OrganizationCredentials>,
    /// The emulated unit's HTTP address (`{device_url}`, without `/api/v1`).
    pub device_url: Option<String>,
    /// The pseudo-terminal carrying the unit's serial protocol (sbgECom frames).
    pub device_serial_path: Option<String>,
    /// The unit's serial-over-TCP bridge, `host:port`.
    pub device_serial_tcp: Option<String>,
}

impl EmulatorInfo {
    /// The SDK's environment for this emulator: the variables a client is configured
    /// from (`svc_core::cloud::CloudConfig::from_env` and `from_vars`, the `svc`
    /// command), with the first organization's administrator key.
    pub fn env(&self) -> [(&'static str, String); 6] {
        [
            ("SVC_BASE_URL", self.base_url.clone()),
            ("SVC_AUTH_URL", self.auth_url.clone()),
            ("SVC_NOTIFICATION_URL", self.notification_url.clone()),
            ("SVC_API_KEY", self.api_key.clone()),
            ("SVC_API_SECRET", self.api_secret.clone()),
            ("SVC_ORGANIZATION_ID", self.organization_id.to_string()),
        ]
    }

    /// The variable `name` of [`EmulatorInfo::env`], `None` for another name: the
    /// lookup of `CloudConfig::from_vars(|name| info.var(name))`.
    pub fn var(&self, name: &str) -> Option<String> {
        self.env()
            .into_iter()
            .find(|(var, _)| *var == name)
            .map(|(_, value)| value)
    }
}

/// One emulated unit of [`EmulatorLine::devices`].
#[derive(Clone, Debug, Serialize)]
pub struct EmulatedDevice {
    /// Its HTTP address (`{device_url}`, without `/api/v1`).
    pub device_url: String,
    /// Its serial-over-TCP bridge, `host:port`.
    pub device_serial_tcp: String,
    /// Its FTP server of the data logger's files, `host:port` (plain FTP, passive mode;
    /// the unit's users log in, see `docs/emulator.md`).
    pub device_ftp: String,
    /// The serial number it reports in `/info`.
    pub serial_number: String,
    /// Its pseudo-terminal, when it has one.
    pub device_serial_path: Option<String>,
}

/// The JSON line a started emulator prints: every field of [`EmulatorInfo`] (whose
/// `device_*` fields name the first unit) and `devices`, every unit in order
/// (empty without a unit).
#[derive(Clone, Debug, Serialize)]
pub struct EmulatorLine {
    #[serde(flatten)]
    pub info: EmulatorInfo,
    /// The first unit's FTP server of its data logger's files, `host:port` (beside
    /// `device_url`; `None` without a unit).
    pub device_ftp: Option<String>,
    pub devices: Vec<EmulatedDevice>,
}
