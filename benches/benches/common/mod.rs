//! What the upload benches share: memory readings, and the emulator's storage with a
//! client of its organization (`mod common;` in each bench that needs it).

use std::time::Duration;

use svc_core::cloud::{CloudClient, CloudConfig};
use svc_emulator::{Emulator, EmulatorConfig};

/// A `kB` field of `/proc/self/status` (`VmRSS:`, `VmHWM:`), in KiB.
pub fn vm_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The peak RSS of the largest child process waited for (`getrusage(RUSAGE_CHILDREN)`).
#[cfg(target_os = "linux")]
pub fn children_peak_kib() -> Option<u64> {
    nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .ok()
        .and_then(|u| u64::try_from(u.max_rss()).ok())
}

#[cfg(not(target_os = "linux"))]
pub fn children_peak_kib() -> Option<u64> {
    None
}

/// The emulator's cloud side (no unit; upload forms valid for an hour, so that a long
/// bench never meets an expired one) and a client of its first organization.
pub fn storage_emulator(runtime: &tokio::runtime::Runtime) -> (Emulator, CloudClient) {
    let config = EmulatorConfig {
        device: None,
        upload_ttl: Duration::from_secs(3600),
        ..EmulatorConfig::default()
    };
    let emulator = runtime
        .block_on(Emulator::start(config))
        .expect("the emulator starts");
    let info = emulator.info().clone();
    let config = CloudConfig::from_vars(|name| info.var(name)).expect("the emulator's settings");
    let client = CloudClient::new(config).expect("a client");
    (emulator, client)
}
