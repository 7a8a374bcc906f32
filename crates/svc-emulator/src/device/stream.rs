//! A port's live output: the frames of the messages `output.<port>.messages` enables,
//! at their triggers, from the unit's power-on clock ([`super::outputs`]), for the
//! serial link that carries them (the pseudo-terminal and each TCP bridge connection
//! are the unit's Port A, `comA`) or for an Ethernet port's UDP datagrams.
//!
//! A change of a port's messages takes effect at once (the `output` settings need no
//! reboot); a reboot restarts the clock, and nothing is sent while the unit reboots.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::outputs::{Schedule, record_at};
use super::unit::Unit;

/// The serial port the emulated unit's serial links are (REST frames and its stream).
pub const SERIAL_PORT: &str = "comA";
/// The shortest period a port outputs (its fastest trigger, `1ms`).
pub const PORT_MIN_PERIOD_MS: u64 = 1;
/// How soon a port without messages is looked at again (for a change of its
/// settings).
const IDLE_LOOK: Duration = Duration::from_millis(100);
/// At most this long between looks (frames due meanwhile are sent together).
const MAX_WAIT: Duration = Duration::from_millis(100);
/// At least this long between looks (frames due meanwhile are sent together).
const MIN_WAIT: Duration = Duration::from_millis(2);

/// A link that fell further behind than this (a stalled task, a slow reader) skips
/// ahead instead of sending a burst of old frames.
const MAX_BEHIND_MS: u64 = 1000;

/// The state of one port's stream on one link.
pub struct PortStream {
    unit: Arc<Unit>,
    port: String,
    /// The boot and the messages the schedule was made for.
    current: Option<(u64, Value, Schedule)>,
    /// The power-on instant of the current schedule.
    powered_on: Option<Instant>,
    transfer_id: u8,
}

impl PortStream {
    /// The stream of `port` of `unit`, from now.
    pub fn new(unit: Arc<Unit>, port: &str) -> Self {
        Self {
            unit,
            port: port.to_owned(),
            current: None,
            powered_on: None,
            transfer_id: 0,
        }
    }

    /// When to look again: when the next message is due (between 2 and 100 ms from
    /// `now`), or in 100 ms without messages (a change of the settings is seen then).
    pub fn next_look(&self, now: Instant) -> Instant {
        let wait = match &self.current {
            Some((_, _, schedule)) => match (schedule.next_due_ms(), self.powered_on) {
                (Some(due), Some(powered_on)) => {
                    let at = powered_on + Duration::from_millis(due);
                    at.saturating_duration_since(now).clamp(MIN_WAIT, MAX_WAIT)
                }
                _ => IDLE_LOOK,
            },
            None => IDLE_LOOK,
        };
        now + wait
    }

    /// Appends to `out` the frames due up to `now`; returns the port's settings as
    /// booted (`ports.<port>`), `None` while the unit reboots.
    pub fn due(&mut self, now: Instant, out: &mut Vec<u8>) -> Option<Value> {
        let Some(output) = self.unit.port_output(&self.port) else {
            self.current = None;
            return None;
        };
        let (powered_on, powered_on_utc) = output.powered_on;
        self.powered_on = Some(powered_on);
        let now_ms = u64::try_from(now.saturating_duration_since(powered_on).as_millis())
            .unwrap_or(u64::MAX);
        let fresh = !matches!(&self.current, Some((boot, messages, _))
            if *boot == output.boot && *messages == output.messages);
        if fresh {
            let mut schedule = Schedule::from_messages(Some(&output.messages), PORT_MIN_PERIOD_MS);
            schedule.start_at(now_ms);
            self.current = Some((output.boot, output.messages, schedule));
        }
        let Some((_, _, schedule)) = self.current.as_mut() else {
            return Some(output.port);
        };
        if now_ms.saturating_sub(schedule.next_ms()) > MAX_BEHIND_MS {
            schedule.start_at(now_ms - MAX_BEHIND_MS);
        }
        let transfer_id = &mut self.transfer_id;
        schedule.run_until(now_ms, |kind, t| {
            let at = Duration::from_millis(t);
            let utc = powered_on_utc + chrono::Duration::from_std(at).unwrap_or_default();
            if let Some(record) = record_at(kind, at, utc, output.startup)
                && let Ok(frame) = svc_logs::encode_frame(&record, *transfer_id)
            {
                *transfer_id = transfer_id.wrapping_add(1);
                out.extend_from_slice(&frame);
            }
        });
        Some(output.port)
    }
}

/// The unit's Ethernet data ports.
pub const ETHERNET_PORTS: [&str; 5] = ["eth0", "eth1", "eth2", "eth3", "eth4"];
/// The most bytes of frames in one datagram.
const MAX_DATAGRAM: usize = 60_000;

/// Where an Ethernet port sends its output logs: `ports.<port>` with `protocol`
/// `udp` sends to `udpIp:udpOutPort`; the emulator only to a loopback address (it
/// reaches nothing else), other destinations being dropped as a network without that
/// host would.
fn udp_destination(port: &Value) -> Option<std::net::SocketAddr> {
    if port.get("protocol").and_then(Value::as_str) != Some("udp") {
        return None;
    }
    let ip: std::net::IpAddr = port.get("udpIp")?.as_str()?.parse().ok()?;
    let out = u16::try_from(port.get("udpOutPort")?.as_u64()?).ok()?;
    (ip.is_loopback() && out != 0).then_some(std::net::SocketAddr::new(ip, out))
}

/// The port a UDP output sends from: its `udpInPort` (where the unit listens for
/// input), as a unit does and as the vendor's tools expect (they keep only the
/// datagrams that come from the unit's address and input port).
fn udp_source_port(port: &Value) -> Option<u16> {
    u16::try_from(port.get("udpInPort")?.as_u64()?)
        .ok()
        .filter(|p| *p != 0)
}

/// Sends the output logs of the Ethernet ports set to `udp` as datagrams (frames due
/// together in one datagram), each from a socket on `host` at the port's `udpInPort`
/// (any free port when that one is taken), until `stop`. Idle while no port is (its
/// settings as booted are looked at again at each reboot).
pub async fn serve_udp(
    unit: Arc<Unit>,
    host: std::net::IpAddr,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let mut boots = unit.boots();
    let mut frames = Vec::new();
    loop {
        let mut streams = Vec::new();
        for port in ETHERNET_PORTS {
            let Some(settings) = unit.booted_port(port) else {
                continue;
            };
            let Some(to) = udp_destination(&settings) else {
                continue;
            };
            let bound = match udp_source_port(&settings) {
                Some(from) => tokio::net::UdpSocket::bind((host, from)).await,
                None => tokio::net::UdpSocket::bind((host, 0)).await,
            };
            let socket = match bound {
                Ok(socket) => socket,
                Err(_) => match tokio::net::UdpSocket::bind((host, 0)).await {
                    Ok(socket) => socket,
                    Err(_) => continue,
                },
            };
            streams.push((PortStream::new(unit.clone(), port), to, socket));
        }
        let mut next_look = Instant::now();
        loop {
            let wake = async {
                if streams.is_empty() {
                    std::future::pending::<()>().await;
                }
                tokio::time::sleep_until(next_look.into()).await;
            };
            tokio::select! {
                () = wake => {}
                changed = boots.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    break;
                }
                _ = stop.wait_for(|stopped| *stopped) => return,
            }
            let now = Instant::now();
            next_look = now + IDLE_LOOK;
            for (stream, to, socket) in &mut streams {
                frames.clear();
                stream.due(now, &mut frames);
                next_look = next_look.min(stream.next_look(now));
                // Whole frames per datagram: split between frames when many are due.
                let mut rest = frames.as_slice();
                while !rest.is_empty() {
                    let cut = frame_boundary(rest, MAX_DATAGRAM);
                    let _ = socket.send_to(&rest[..cut], *to).await;
                    rest = &rest[cut..];
                }
            }
        }
    }
}

/// The length of the longest run of whole frames at the start of `bytes` that fits in
/// `max` (at least one frame).
fn frame_boundary(bytes: &[u8], max: usize) -> usize {
    let mut at = 0;
    while at < bytes.len() {
        // Standard frame: sync (2), id, class, length (2), data, CRC (2), ETX.
        let len = match bytes.get(at + 4..at + 6) {
            Some(&[lo, hi]) => usize::from(u16::from_le_bytes([lo, hi])) + 9,
            _ => bytes.len() - at,
        };
        if at > 0 && at + len > max {
            break;
        }
        at += len;
    }
    at.min(bytes.len())
}
