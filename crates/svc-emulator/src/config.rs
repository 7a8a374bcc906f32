//! How an emulator runs: [`EmulatorConfig`], which every server and emulated unit reads
//! its addresses, pace, limits and faults from.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use crate::device;
use crate::faults::FaultConfig;
use crate::server::ReadTimeouts;

/// The most emulated units one emulator runs ([`EmulatorConfig::devices`]).
pub const MAX_DEVICES: usize = 256;

/// How the emulator runs. `Default` gives the service's real rules with a quick pace.
#[derive(Clone, Debug)]
pub struct EmulatorConfig {
    pub host: IpAddr,
    /// 0: any free port for each server; P: P, P+1, P+2, P+3.
    pub port: u16,
    /// How long a processing takes from start to end.
    pub processing_time: Duration,
    /// `expires_in` of access tokens (the real service: 300 s).
    pub token_lifetime: Duration,
    /// First webhook retry delay; each retry doubles it (the real service: 1 s).
    pub webhook_retry_base: Duration,
    /// Longest delay between two webhook retries (the real service: 1 hour).
    pub webhook_retry_cap: Duration,
    /// A delivery with no answer within this time counts as failed (the real service: 10 s).
    pub webhook_timeout: Duration,
    /// Processing credits of each organization; each started processing uses one.
    pub credits: u32,
    /// How long a container lives (the real service: 30 days).
    pub container_lifetime: Duration,
    /// Validity of pre-signed upload forms and download addresses.
    pub upload_ttl: Duration,
    pub download_ttl: Duration,
    pub faults: FaultConfig,
    /// Header and body read timeouts of every server (cloud, identity provider,
    /// notification, storage, the unit's HTTP): a half-sent request does not hold a
    /// connection longer (default 10 s each).
    pub read_timeouts: ReadTimeouts,
    /// The emulated unit; `None` runs the cloud side only. Its host, ports (P+4, P+5)
    /// and HTTP read timeouts follow `host`, `port` and `read_timeouts`.
    pub device: Option<device::DeviceConfig>,
    /// How many units of `device` to run (default 1, at most [`MAX_DEVICES`]; 0 runs
    /// none, as `device: None`). Each has its own state, serial number and MAC address:
    /// the first keeps `device`'s, the others count on from them
    /// ([`device::nth_serial_number`], [`device::nth_mac_address`]). With `port` P,
    /// unit `k` (0-based) listens on P+4+2k (HTTP) and P+5+2k (serial bridge).
    pub devices: usize,
    /// `operationId`s of `openapi/cloud.yaml` the cloud service does not serve: their
    /// routes answer as missing (404, or 405 where the path serves other methods). A
    /// client's fallbacks are tested with them, e.g. a service that cancels only at the
    /// vendor collection's `/processings/{id}/cancel` (`["cancelProcessing"]`).
    pub missing_operations: Vec<String>,
    /// Fields (name, value) the storage adds to every upload form it hands out, after
    /// the standard ones, each signed into the form's policy: an upload without one, or
    /// with another value, is refused with 403. For tests that a client sends the fields
    /// it does not know; empty by default (the service's forms). A name may not be a
    /// standard field's, `file` or `x-ignore-*`, nor repeat (the emulator does not start).
    pub upload_extra_fields: Vec<(String, String)>,
    /// The speed at which the storage reads upload bodies, in bytes per second (0, the
    /// default: as fast as they come). A slow uplink: an upload stays in flight long
    /// enough for a test to cancel it there.
    pub upload_bytes_per_second: u64,
}

impl Default for EmulatorConfig {
    fn default() -> Self {
        Self {
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            processing_time: Duration::from_secs(3),
            token_lifetime: Duration::from_secs(300),
            webhook_retry_base: Duration::from_secs(1),
            webhook_retry_cap: Duration::from_secs(3600),
            webhook_timeout: Duration::from_secs(10),
            credits: 100,
            container_lifetime: Duration::from_secs(30 * 24 * 3600),
            upload_ttl: Duration::from_secs(3600),
            download_ttl: Duration::from_secs(3600),
            faults: FaultConfig::default(),
            read_timeouts: ReadTimeouts::default(),
            device: Some(device::DeviceConfig::default()),
            devices: 1,
            missing_operations: Vec::new(),
            upload_extra_fields: Vec::new(),
            upload_bytes_per_second: 0,
        }
    }
}
