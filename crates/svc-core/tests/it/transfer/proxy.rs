//! A small TCP proxy the client uses as its HTTP proxy: connection number N is
//! answered, cut or stalled as planned.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use reqwest::Client;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// What the proxy does with one connection.
#[derive(Clone, Copy, Debug)]
pub(super) enum Plan {
    /// Forwards everything.
    Pass,
    /// Forwards this many bytes of the request, then closes both sides.
    CutRequestAfter(usize),
    /// Forwards this many bytes of the answer, then closes both sides.
    CutAnswerAfter(usize),
    /// Forwards this many bytes of the answer, then holds the connection open, silent.
    StallAnswerAfter(usize),
    /// Reads the whole request (up to its `Content-Length`), answers this status with
    /// an S3 error document, and closes.
    Answer(u16),
}

/// An HTTP proxy (the client sends absolute-form requests) in front of the storage.
pub(super) struct Proxy {
    url: String,
    connections: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    /// Connection N follows `plans[N]`; later ones pass.
    pub(super) async fn start(target: SocketAddr, plans: Vec<Plan>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let connections = Arc::new(AtomicUsize::new(0));
        let counter = connections.clone();
        let task = tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                let n = counter.fetch_add(1, Ordering::SeqCst);
                let plan = plans.get(n).copied().unwrap_or(Plan::Pass);
                tokio::spawn(serve(inbound, target, plan));
            }
        });
        Self {
            url,
            connections,
            task,
        }
    }

    /// A client that goes through the proxy, one connection per request.
    pub(super) fn client(&self) -> Client {
        Client::builder()
            .proxy(reqwest::Proxy::http(&self.url).expect("proxy"))
            .pool_max_idle_per_host(0)
            .build()
            .expect("client")
    }

    pub(super) fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(mut inbound: TcpStream, target: SocketAddr, plan: Plan) {
    if let Plan::Answer(status) = plan {
        answer(&mut inbound, status).await;
        return;
    }
    let Ok(mut outbound) = TcpStream::connect(target).await else {
        return;
    };
    let (mut client_read, mut client_write) = inbound.split();
    let (mut server_read, mut server_write) = outbound.split();
    let (up_limit, down_limit, stall) = match plan {
        Plan::CutRequestAfter(n) => (n, usize::MAX, false),
        Plan::CutAnswerAfter(n) => (usize::MAX, n, false),
        Plan::StallAnswerAfter(n) => (usize::MAX, n, true),
        Plan::Pass | Plan::Answer(_) => (usize::MAX, usize::MAX, false),
    };
    let up = copy_at_most(&mut client_read, &mut server_write, up_limit);
    let down = copy_at_most(&mut server_read, &mut client_write, down_limit);
    tokio::pin!(up, down);
    let mut up_done = false;
    loop {
        tokio::select! {
            cut = &mut up, if !up_done => {
                if cut { break; }
                up_done = true;
            }
            cut = &mut down => {
                if cut && stall {
                    std::future::pending::<()>().await;
                }
                break;
            }
        }
    }
    // Dropping both sides closes the connections.
}

/// Copies until the end of `from`, or until `limit` bytes: `true` when cut at the limit.
async fn copy_at_most(
    from: &mut (impl tokio::io::AsyncRead + Unpin),
    to: &mut (impl tokio::io::AsyncWrite + Unpin),
    limit: usize,
) -> bool {
    let mut buf = vec![0_u8; 16 * 1024];
    let mut copied = 0;
    loop {
        let room = (limit - copied).min(buf.len());
        if room == 0 {
            return true;
        }
        match from.read(&mut buf[..room]).await {
            Ok(0) | Err(_) => {
                let _ = to.shutdown().await;
                return false;
            }
            Ok(n) => {
                if to.write_all(&buf[..n]).await.is_err() {
                    return false;
                }
                copied += n;
            }
        }
    }
}

/// Reads a whole request, then answers `status`.
async fn answer(inbound: &mut TcpStream, status: u16) {
    let mut request = Vec::new();
    let mut buf = vec![0_u8; 16 * 1024];
    let header_end = loop {
        if let Some(i) = request.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match inbound.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&request[..header_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = request.len() - header_end;
    while body < length {
        match inbound.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => body += n,
        }
    }
    let document = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>InternalError</Code><Message>injected by the test proxy</Message></Error>";
    let response = format!(
        "HTTP/1.1 {status} Injected\r\ncontent-type: application/xml\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{document}",
        document.len()
    );
    let _ = inbound.write_all(response.as_bytes()).await;
    let _ = inbound.shutdown().await;
}
