//! A local emulator of the cloud post-processing service, for offline use and tests:
//! its identity provider, the cloud service (v2 and `/api/v1/info`), object storage with
//! pre-signed POST uploads and GET downloads, the notification service with signed,
//! retried webhook deliveries, and a processing engine that computes real outputs
//! (trajectory CSV, GeoJSON, report) from the NMEA GNSS positions of the inputs.
//!
//! It is a second implementation of the service's specification (`openapi/cloud.yaml`,
//! `openapi/notification.yaml`; see `docs/specification.md`), not a mock: it enforces the
//! rights, conflicts, limits, signatures and lifecycle rules, so that a client tested
//! against it is tested against the specification. Request and response bodies are the
//! types generated from `openapi/cloud.yaml` and `openapi/notification.yaml`.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! let emulator = svc_emulator::Emulator::start(svc_emulator::EmulatorConfig::default()).await?;
//! println!("{}", serde_json::to_string(emulator.line())?);
//! emulator.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! It also emulates inertial navigation units ([`device`]): their REST interface over
//! HTTP, and the same API in sbgECom frames over a pseudo-terminal and a TCP serial
//! bridge. [`EmulatorConfig::devices`] units (one by default, up to [`MAX_DEVICES`])
//! run side by side, each with its own serial number, ports and state (settings,
//! users and passwords, sessions, lock); [`EmulatorLine::devices`] lists them.
//!
//! Every server listens on `config.host`; with `port` 0 each takes any free port, with
//! `port` P they take P (cloud), P+1 (identity provider), P+2 (notification), P+3
//! (storage), P+4 (unit HTTP) and P+5 (unit serial-over-TCP bridge), and unit `k`
//! (0-based) of several P+4+2k and P+5+2k. Every HTTP server
//! closes a connection whose request head does not arrive within
//! [`ReadTimeouts::header`], answers 408 (in its documented error body) a request body
//! that stops arriving for [`ReadTimeouts::body`], and answers every error, also those
//! raised before a route runs (a body over 2 MB: 413; a method a path does not take:
//! 405), with its documented error body.

#![forbid(unsafe_code)]

mod api_error;
mod cloud;
mod config;
mod engine;
mod faults;
mod http;
mod idp;
mod info;
mod notify;
mod server;
mod state;
mod storage;

pub mod cli;
pub mod device;
/// The parsers the workspace's fuzz targets reach (not part of the API).
#[doc(hidden)]
pub mod fuzzing;
pub mod receiver;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use server::ErrorFormat;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use uuid::Uuid;

pub use config::{EmulatorConfig, MAX_DEVICES};
pub use faults::{
    FaultConfig, FaultCounts, FaultHandle, Lost, LostExchange, SerialFaultConfig,
    SerialFaultCounts, SerialFaultHandle, Service,
};
pub use info::{EmulatedDevice, EmulatorInfo, EmulatorLine, OrganizationCredentials};
pub use server::{ReadTimeouts, accept, serve_http1};

/// The port `offset` above `base`, or an error naming the unit that needs it.
fn unit_port(base: u16, offset: usize, index: usize) -> anyhow::Result<u16> {
    usize::from(base)
        .checked_add(offset)
        .and_then(|port| u16::try_from(port).ok())
        .ok_or_else(|| {
            anyhow::anyhow!("port {base}: unit {index} would need port {base}+{offset}, past 65535")
        })
}

/// A running emulator. Dropping it stops the servers; [`Emulator::shutdown`] waits for them.
pub struct Emulator {
    line: EmulatorLine,
    app: Arc<state::App>,
    stop: watch::Sender<bool>,
    servers: Vec<JoinHandle<()>>,
    devices: Vec<device::DeviceEmulator>,
}

impl Emulator {
    /// Starts every server and returns once all accept connections.
    ///
    /// # Errors
    ///
    /// `devices` over [`MAX_DEVICES`], a port that cannot be bound (or, with a fixed
    /// `port`, one past 65535), an unknown user in the unit's passwords.
    pub async fn start(config: EmulatorConfig) -> anyhow::Result<Self> {
        let units = if config.device.is_some() {
            config.devices
        } else {
            0
        };
        if units > MAX_DEVICES {
            anyhow::bail!("devices must be between 0 and {MAX_DEVICES} (0: no unit), got {units}");
        }
        if config.port != 0 && units > 0 {
            unit_port(config.port, 5 + 2 * (units - 1), units - 1)?;
        }
        let bind = |offset: u16| {
            let port = if config.port == 0 {
                0
            } else {
                config.port.saturating_add(offset)
            };
            TcpListener::bind(SocketAddr::new(config.host, port))
        };
        let cloud_listener = bind(0).await?;
        let idp_listener = bind(1).await?;
        let notification_listener = bind(2).await?;
        let storage_listener = bind(3).await?;
        let url = |l: &TcpListener| -> anyhow::Result<String> {
            Ok(format!("http://{}", l.local_addr()?))
        };
        let urls = state::Urls {
            base: url(&cloud_listener)?,
            auth: url(&idp_listener)?,
            notification: url(&notification_listener)?,
            storage: url(&storage_listener)?,
        };

        let app = state::App::new(config.clone(), urls.clone())?;
        let faults = faults::Faults::new(config.faults.clone());
        let (stop, stopped) = watch::channel(false);
        let routers = [
            (
                cloud_listener,
                Service::Cloud,
                cloud::router(app.clone()),
                ErrorFormat::Cloud,
            ),
            (
                idp_listener,
                Service::IdentityProvider,
                idp::router(app.clone()),
                ErrorFormat::OAuth,
            ),
            (
                notification_listener,
                Service::Notification,
                notify::router(app.clone()),
                ErrorFormat::Cloud,
            ),
            (
                storage_listener,
                Service::Storage,
                app.storage.router(),
                ErrorFormat::S3,
            ),
        ];
        let mut servers = Vec::new();
        for (listener, service, router, format) in routers {
            servers.push(tokio::spawn(server::serve(
                listener,
                faults.wrap(service, router),
                format,
                config.read_timeouts,
                stopped.clone(),
            )));
        }
        let mut devices = Vec::with_capacity(units);
        if let Some(first) = config.device.as_ref().filter(|_| units > 0) {
            // One reading of the document for every unit; each unit has its own state.
            let spec = Arc::new(device::spec::Spec::load()?);
            for index in 0..units {
                let mut device_config = first.clone();
                device_config.host = config.host;
                device_config.http_read_timeouts = config.read_timeouts;
                device_config.serial_number =
                    device::nth_serial_number(&first.serial_number, index);
                device_config.mac_address = device::nth_mac_address(&first.mac_address, index)
                    .map_err(anyhow::Error::msg)?;
                if config.port != 0 {
                    device_config.http_port = unit_port(config.port, 4 + 2 * index, index)?;
                    device_config.serial_tcp_port = unit_port(config.port, 5 + 2 * index, index)?;
                }
                devices.push(
                    device::DeviceEmulator::start_with_spec(device_config, spec.clone()).await?,
                );
            }
        }
        let listed: Vec<EmulatedDevice> = devices
            .iter()
            .map(|d| EmulatedDevice {
                device_url: d.url().to_owned(),
                device_serial_tcp: d.serial_tcp().to_owned(),
                device_ftp: d.ftp_address().to_owned(),
                serial_number: d.serial_number().to_owned(),
                device_serial_path: d.serial_path().map(|p| p.display().to_string()),
            })
            .collect();
        let device = listed.first();
        let orgs = app.organizations();
        let first = orgs
            .first()
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("no organization"))?;
        let info = EmulatorInfo {
            base_url: urls.base,
            auth_url: urls.auth,
            notification_url: urls.notification,
            storage_url: urls.storage,
            organization_id: first.organization_id,
            api_key: first.api_key,
            api_secret: first.api_secret,
            member_api_key: first.member_api_key,
            member_api_secret: first.member_api_secret,
            organizations: orgs,
            device_url: device.map(|d| d.device_url.clone()),
            device_serial_path: device.and_then(|d| d.device_serial_path.clone()),
            device_serial_tcp: device.map(|d| d.device_serial_tcp.clone()),
        };
        Ok(Self {
            line: EmulatorLine {
                info,
                device_ftp: device.map(|d| d.device_ftp.clone()),
                devices: listed,
            },
            app,
            stop,
            servers,
            devices,
        })
    }

    /// Its addresses and credentials; the `device_*` fields name the first unit.
    pub fn info(&self) -> &EmulatorInfo {
        &self.line.info
    }

    /// What it prints as its JSON line: [`Emulator::info`] and every unit.
    pub fn line(&self) -> &EmulatorLine {
        &self.line
    }

    /// Sets an organization's processing credits (tests of the 403 "no credit" rule).
    pub fn set_credits(&self, organization_id: Uuid, credits: u32) {
        self.app.set_credits(organization_id, credits);
    }

    /// The output files the engine stored for a processing, as (path, bytes), so tests
    /// can compare downloads byte for byte.
    pub fn stored_outputs(&self, processing_id: Uuid) -> Vec<(String, Vec<u8>)> {
        self.app.stored_outputs(processing_id)
    }

    /// The outage switches and the counters of injected faults
    /// ([`EmulatorConfig::faults`]'s handle): take a server down and up, read how many
    /// faults a run met.
    pub fn faults(&self) -> &FaultHandle {
        &self.app.config.faults.handle
    }

    /// The identifiers of every webhook event raised for `endpoint_id` so far, in
    /// order, whether it was delivered, is still being retried or was missed: what a
    /// receiver must have got for no event to be lost.
    pub fn raised_webhook_events(&self, endpoint_id: Uuid) -> Vec<Uuid> {
        self.app
            .db()
            .raised
            .get(&endpoint_id)
            .cloned()
            .unwrap_or_default()
    }

    /// The (first) emulated unit, when it runs.
    pub fn device(&self) -> Option<&device::DeviceEmulator> {
        self.devices.first()
    }

    /// Every emulated unit, in the order of [`EmulatorLine::devices`].
    pub fn devices(&self) -> &[device::DeviceEmulator] {
        &self.devices
    }

    /// Stops the servers, the processings and the deliveries, and removes the files.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        self.app.stop_background();
        futures::future::join_all(self.devices.drain(..).map(device::DeviceEmulator::shutdown))
            .await;
        for server in self.servers.drain(..) {
            let _ = tokio::time::timeout(Duration::from_secs(5), server).await;
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        self.app.stop_background();
        for server in &self.servers {
            server.abort();
        }
    }
}
