//! The emulator's command line, shared by the `svc-emulator` binary and `svc emulator`.
//!
//! When every server accepts connections, [`run`] prints exactly one JSON object on one
//! line on stdout (addresses and credentials, [`crate::EmulatorLine`]), then serves
//! until SIGINT or SIGTERM.
//! Nothing else goes to stdout.

use std::net::IpAddr;
use std::process::ExitCode;
use std::time::Duration;

use crate::Emulator;
use crate::config::{EmulatorConfig, MAX_DEVICES};
use crate::faults::FaultConfig;

/// Local emulator of the cloud post-processing service, its identity provider, object
/// storage and notification service.
#[derive(clap::Args, Debug, Clone)]
pub struct EmulatorArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: IpAddr,
    /// First port (cloud; then identity provider, notification, storage); 0 = any free ports.
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// How long a processing takes, in seconds.
    #[arg(long, default_value_t = 3.0)]
    pub processing_seconds: f64,
    /// Lifetime of access tokens, in seconds.
    #[arg(long, default_value_t = 300)]
    pub token_lifetime_seconds: u64,
    /// First webhook retry delay in milliseconds (doubles on each retry).
    #[arg(long, default_value_t = 1000)]
    pub webhook_retry_base_ms: u64,
    /// Processing credits of each organization.
    #[arg(long, default_value_t = 100)]
    pub credits: u32,
    /// Share of requests answered 500, delayed or cut (0 to 1).
    #[arg(long, default_value_t = 0.0)]
    pub fault_rate: f64,
    /// Share of the chunks crossing the emulated units' serial links (the TCP bridge
    /// and the pty, both ways) that lose a run of bytes or have one corrupted (0 to 1):
    /// a noisy line.
    #[arg(long, default_value_t = 0.0)]
    pub serial_fault_rate: f64,
    /// An initial password of the emulated unit, USER=PASSWORD (repeatable), e.g.
    /// `--device-password setup=secret`. Users not named have none (factory: `factory`).
    #[arg(long = "device-password", value_name = "USER=PASSWORD")]
    pub device_passwords: Vec<String>,
    /// How long a reboot keeps the emulated unit silent, in seconds.
    #[arg(long, default_value_t = 2.0)]
    pub device_reboot_seconds: f64,
    /// How long every HTTP answer of the emulated units waits, in milliseconds (a unit
    /// over Wi-Fi or a cellular link).
    #[arg(long, default_value_t = 0)]
    pub device_latency_ms: u64,
    /// How long after each power-on the emulated units take to be ready to log, in
    /// seconds: a GNSS fix, UTC and an aligned filter in their output logs (0: at once).
    #[arg(long, default_value_t = 0.0)]
    pub device_startup_seconds: f64,
    /// Do not serve the unit's serial protocol on a pseudo-terminal (TCP bridge only).
    #[arg(long)]
    pub no_device_pty: bool,
    /// Run the cloud side only, without the emulated unit.
    #[arg(long)]
    pub no_device: bool,
    /// How many emulated units to run (0 to 256; 0 is `--no-device`), each with its own
    /// serial number, HTTP port, serial bridge, FTP server and state; the JSON line
    /// lists them under `devices` (`device_url`, `device_ftp` etc. name the first).
    /// With `--port P`, unit k (0-based) takes P+4+2k and P+5+2k; FTP servers always
    /// take any free port.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        conflicts_with = "no_device"
    )]
    pub devices: usize,
    /// A field added to every upload form the storage hands out, after the standard
    /// ones and signed into the form's policy, NAME=VALUE (repeatable): for tests that a
    /// client sends the form fields it does not know, e.g.
    /// `--upload-extra-field x-amz-meta-origin=tests`.
    #[arg(long = "upload-extra-field", value_name = "NAME=VALUE")]
    pub upload_extra_fields: Vec<String>,
    /// The speed at which the storage reads uploads, in bytes per second (0: as fast
    /// as they come): a slow uplink, e.g. `--upload-bytes-per-second 1000000`.
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    pub upload_bytes_per_second: u64,
}

impl EmulatorArgs {
    /// The configuration these flags describe.
    ///
    /// # Errors
    /// A message naming the flag whose value is out of range.
    pub fn config(&self) -> Result<EmulatorConfig, String> {
        if !(self.processing_seconds.is_finite() && self.processing_seconds >= 0.0) {
            return Err("--processing-seconds must be a number of seconds ≥ 0".into());
        }
        if !(0.0..=1.0).contains(&self.fault_rate) {
            return Err("--fault-rate must be between 0 and 1".into());
        }
        if !(0.0..=1.0).contains(&self.serial_fault_rate) {
            return Err("--serial-fault-rate must be between 0 and 1".into());
        }
        if !(self.device_reboot_seconds.is_finite() && self.device_reboot_seconds >= 0.0) {
            return Err("--device-reboot-seconds must be a number of seconds ≥ 0".into());
        }
        if !(self.device_startup_seconds.is_finite()
            && (0.0..=86_400.0).contains(&self.device_startup_seconds))
        {
            return Err(
                "--device-startup-seconds must be a number of seconds from 0 to 86400".into(),
            );
        }
        if self.devices > MAX_DEVICES {
            return Err(format!(
                "--devices must be between 0 and {MAX_DEVICES} (0: no unit), got {}",
                self.devices
            ));
        }
        if self.port != 0
            && self.devices > 0
            && !self.no_device
            && usize::from(self.port) + 5 + 2 * (self.devices - 1) > usize::from(u16::MAX)
        {
            return Err(format!(
                "--port {} leaves no room for {} units (unit k takes P+4+2k and P+5+2k)",
                self.port, self.devices
            ));
        }
        let mut passwords = std::collections::BTreeMap::new();
        for entry in &self.device_passwords {
            let (user, password) = entry.split_once('=').ok_or_else(|| {
                format!(
                    "--device-password takes USER=PASSWORD, got `{}`",
                    entry.split('=').next().unwrap_or("")
                )
            })?;
            passwords.insert(user.to_owned(), password.to_owned());
        }
        let mut upload_extra_fields: Vec<(String, String)> = Vec::new();
        for entry in &self.upload_extra_fields {
            let (name, value) = entry
                .split_once('=')
                .ok_or_else(|| format!("--upload-extra-field takes NAME=VALUE, got `{entry}`"))?;
            if let Some(problem) =
                crate::storage::extra_field_problem(name, value, &upload_extra_fields)
            {
                return Err(format!("--upload-extra-field: {problem}"));
            }
            upload_extra_fields.push((name.to_owned(), value.to_owned()));
        }
        let device = (!self.no_device && self.devices > 0).then(|| crate::device::DeviceConfig {
            passwords,
            pty: !self.no_device_pty,
            reboot_time: Duration::from_secs_f64(self.device_reboot_seconds),
            latency: Duration::from_millis(self.device_latency_ms),
            startup: Duration::from_secs_f64(self.device_startup_seconds),
            serial_faults: crate::faults::SerialFaultConfig {
                rate: self.serial_fault_rate,
                ..crate::faults::SerialFaultConfig::default()
            },
            ..crate::device::DeviceConfig::default()
        });
        Ok(EmulatorConfig {
            device,
            devices: self.devices,
            host: self.host,
            port: self.port,
            processing_time: Duration::from_secs_f64(self.processing_seconds),
            token_lifetime: Duration::from_secs(self.token_lifetime_seconds),
            webhook_retry_base: Duration::from_millis(self.webhook_retry_base_ms),
            credits: self.credits,
            faults: FaultConfig {
                rate: self.fault_rate,
                ..FaultConfig::default()
            },
            upload_extra_fields,
            upload_bytes_per_second: self.upload_bytes_per_second,
            ..EmulatorConfig::default()
        })
    }
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
pub async fn wait_for_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}

/// Starts the emulator, prints its one JSON line, serves until a signal, stops.
/// `program` names the command in error messages.
pub async fn run(program: &str, args: &EmulatorArgs) -> ExitCode {
    let config = match args.config() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{program}: {e}");
            return ExitCode::from(2);
        }
    };
    let emulator = match Emulator::start(config).await {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{program}: could not start: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    match serde_json::to_string(emulator.line()) {
        Ok(line) => println!("{line}"),
        Err(e) => {
            eprintln!("{program}: {e}");
            return ExitCode::FAILURE;
        }
    }
    wait_for_signal().await;
    emulator.shutdown().await;
    ExitCode::SUCCESS
}
