//! The serial transport: sbgECom frames (the `svc_protocol::serial` codec) carrying the
//! REST API, served on any byte stream: the pseudo-terminal and each connection of
//! the TCP serial-over-IP bridge.
//!
//! - A REST request (class 0x10, id 48/46 GET or 47 POST, standard or large frames)
//!   goes to [`Unit::handle`]; the reply has the request's id, in a standard frame or
//!   in large frames when its data exceed 4086 bytes (a new transfer id each time).
//! - Bytes that are not a valid frame (bad CRC, bad ETX, bad length, noise) are
//!   skipped by the decoder, without an answer. A frame left incomplete while the line
//!   is silent for longer than the inter-byte timeout (a corrupt header announcing a
//!   length in range, a frame cut off) is abandoned, and the bytes after its start are
//!   searched for the next sync at once.
//! - A valid frame the unit cannot serve is answered by an ACK carrying an sbgECom
//!   error code: [`ACK_INVALID_FRAME`] (4) for a REST request whose data are not
//!   `path NUL query NUL [body NUL]` in UTF-8, [`ACK_INVALID_PARAMETER`] (9) for a
//!   message id or class that is not a REST request. ACKs sent to the unit (id 0,
//!   class 0x10) are ignored.
//! - While the unit reboots it answers nothing: frames are read and dropped (the link
//!   itself, pty or TCP connection, stays open as a real serial line would).
//! - The link is the unit's Port A ([`SERIAL_PORT`]): the output logs
//!   `output.comA.messages` enables stream on it, between the answers, at their
//!   triggers ([`PortStream`]). Written when the host reads them: a host that does not
//!   read (a pseudo-terminal nobody opened) loses them, as a serial line would, and
//!   never holds up an answer.
//! - With [`DeviceConfig::serial_faults`](super::DeviceConfig::serial_faults), the line
//!   is noisy: a share of the chunks read from the host and of the answers written
//!   back lose bytes or have one corrupted ([`SerialFaults`]); the CRC turns each into
//!   a frame skipped, so the host meets silence and must recover (a GET sent again, a
//!   POST read back before it is repeated).

use std::sync::Arc;
use std::time::{Duration, Instant};

use svc_protocol::serial::{
    Ack, CLASS_REST, Decoder, ID_ACK, Message, RestReply, RestRequest, SerialError,
};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::stream::{PortStream, SERIAL_PORT};
use super::unit::{Outcome, Unit};
use crate::faults::SerialFaults;

/// sbgECom `SBG_INVALID_FRAME`: a REST request whose data are malformed.
pub const ACK_INVALID_FRAME: u16 = 4;
/// sbgECom `SBG_BUFFER_OVERFLOW`: a reply too long for the protocol.
pub const ACK_BUFFER_OVERFLOW: u16 = 8;
/// sbgECom `SBG_INVALID_PARAMETER`: a message that is not a REST request.
pub const ACK_INVALID_PARAMETER: u16 = 9;

/// How long the stream's frames may wait for the host to read them before they are
/// dropped.
const STREAM_WRITE_TIMEOUT: Duration = Duration::from_millis(50);

/// Largest request accepted (a large-frame message); larger ones are dropped by the
/// decoder.
const MAX_REQUEST: usize = 4 << 20;

/// The bytes to send back for one received message, if any.
pub fn answer(unit: &Unit, message: &Message, transfer_id: &mut u8) -> Option<Vec<u8>> {
    if message.class == CLASS_REST && message.id == ID_ACK {
        return None;
    }
    let ack = |error| {
        Ack {
            id: message.id,
            class: message.class,
            error,
        }
        .encode()
    };
    match RestRequest::decode(message) {
        Ok(request) => {
            let body = request.body.as_deref().unwrap_or_default();
            match unit.handle(request.method.as_str(), &request.path, &request.query, body) {
                Outcome::Reply(reply) => {
                    *transfer_id = transfer_id.wrapping_add(1) & 0x0F;
                    match RestReply::new(reply.status, reply.body)
                        .try_encode(message.id, *transfer_id)
                    {
                        Ok(bytes) => Some(bytes),
                        Err(_) => Some(ack(ACK_BUFFER_OVERFLOW)),
                    }
                }
                Outcome::Silent => None,
            }
        }
        Err(_) if unit.is_booting() => None,
        Err(SerialError::UnexpectedMessage { .. }) => Some(ack(ACK_INVALID_PARAMETER)),
        Err(_) => Some(ack(ACK_INVALID_FRAME)),
    }
}

/// Serves one link (a pty master, a TCP connection) until it ends or `stop` turns true;
/// a frame left incomplete for `inter_byte_timeout` of silence is abandoned. `faults`
/// damages what crosses the line both ways.
pub async fn serve_link<S>(
    mut link: S,
    unit: Arc<Unit>,
    inter_byte_timeout: Duration,
    faults: SerialFaults,
    mut stop: watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut decoder = Decoder::with_max_message_len(MAX_REQUEST)
        .with_inter_byte_timeout(inter_byte_timeout.max(Duration::from_millis(1)));
    let mut buf = vec![0_u8; 8192];
    let mut transfer_id = 0_u8;
    let mut stream = PortStream::new(unit.clone(), SERIAL_PORT);
    let mut next_look = Instant::now();
    let mut frames = Vec::new();
    loop {
        let deadline = decoder.partial_frame_deadline();
        let expiry = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        let event = tokio::select! {
            // Bytes already waiting win over the timers: a task that ran late must not
            // drop a frame whose rest has arrived meanwhile.
            biased;
            read = link.read(&mut buf) => Event::Read(read),
            () = expiry => Event::Gap,
            () = tokio::time::sleep_until(next_look.into()) => Event::Tick,
            _ = stop.wait_for(|stopped| *stopped) => return,
        };
        match event {
            // The line stayed silent in the middle of a frame: give it up, decode what
            // was held behind its start.
            Event::Gap => {
                if !decoder.expire_partial_frame(Instant::now()) {
                    continue;
                }
            }
            Event::Tick => {
                frames.clear();
                let now = Instant::now();
                stream.due(now, &mut frames);
                next_look = stream.next_look(now);
                if frames.is_empty() {
                    continue;
                }
                faults.apply(&mut frames);
                let written = tokio::select! {
                    written = tokio::time::timeout(STREAM_WRITE_TIMEOUT, link.write_all(&frames)) => written,
                    _ = stop.wait_for(|stopped| *stopped) => return,
                };
                match written {
                    Ok(Err(_)) => return,
                    // Not read in time: lost, as on a serial line nobody listens to.
                    Err(_) => continue,
                    Ok(Ok(())) => {
                        if link.flush().await.is_err() {
                            return;
                        }
                    }
                }
                continue;
            }
            Event::Read(Ok(0) | Err(_)) => return,
            Event::Read(Ok(n)) => {
                let mut chunk = buf[..n].to_vec();
                faults.apply(&mut chunk);
                decoder.push_at(&chunk, Instant::now());
            }
        }
        while let Some(message) = decoder.next_message() {
            if let Some(mut bytes) = answer(&unit, &message, &mut transfer_id) {
                faults.apply(&mut bytes);
                let written = tokio::select! {
                    written = link.write_all(&bytes) => written,
                    _ = stop.wait_for(|stopped| *stopped) => return,
                };
                if written.is_err() || link.flush().await.is_err() {
                    return;
                }
            }
        }
    }
}

/// What woke a link up.
enum Event {
    Read(std::io::Result<usize>),
    Gap,
    Tick,
}

/// The serial-over-IP bridge: every TCP connection is one serial link.
pub async fn serve_tcp(
    listener: TcpListener,
    unit: Arc<Unit>,
    inter_byte_timeout: Duration,
    faults: SerialFaults,
    mut stop: watch::Receiver<bool>,
) {
    let mut links = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.wait_for(|stopped| *stopped) => break,
        };
        while links.try_join_next().is_some() {}
        match accepted {
            Ok((stream, _)) => {
                let _ = stream.set_nodelay(true);
                links.spawn(serve_link(
                    stream,
                    unit.clone(),
                    inter_byte_timeout,
                    faults.clone(),
                    stop.clone(),
                ));
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(20)).await,
        }
    }
    links.shutdown().await;
}
