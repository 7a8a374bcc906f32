//! A pseudo-terminal standing for the unit's serial port, with safe APIs only (`nix`'s
//! `openpty`, `ttyname`, termios and `fcntl`; tokio's `pipe` streams).
//!
//! The slave side is put in raw mode (no echo, no line editing, no CR/LF or XON/XOFF
//! translation: every byte of a frame goes through as is) and its path (e.g.
//! `/dev/pts/7`) is what a client opens as its serial port. The emulator keeps its
//! own descriptor of the slave open for the pty's whole life, so that a client may
//! open and close the path any number of times without the master seeing a hang-up.
//!
//! Unix only: the module (and the `nix` dependency) exists there only; elsewhere the
//! unit has no pty and the serial-over-TCP bridge is its serial line.

use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::pty::{OpenptyResult, openpty};
use nix::sys::stat::Mode;
use nix::sys::termios::{SetArg, cfmakeraw, tcgetattr, tcsetattr};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::unix::pipe;

/// A terminal device (a pty end) as a tokio stream. The descriptor is duplicated:
/// one copy reads, the other writes, each registered with the reactor through
/// tokio's safe `pipe` constructors (which accept any pollable descriptor, not only
/// pipes), so no `unsafe` and no deprecated `AsyncFd::new` is needed.
#[derive(Debug)]
pub struct FdStream {
    reader: pipe::Receiver,
    writer: pipe::Sender,
}

impl FdStream {
    /// Makes `fd` non-blocking and registers it with the tokio reactor.
    pub fn new(fd: OwnedFd) -> io::Result<Self> {
        let flags = fcntl(&fd, FcntlArg::F_GETFL).map_err(io::Error::from)?;
        let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
        fcntl(&fd, FcntlArg::F_SETFL(flags)).map_err(io::Error::from)?;
        let writer = nix::unistd::dup(&fd).map_err(io::Error::from)?;
        Ok(Self {
            reader: pipe::Receiver::from_owned_fd_unchecked(fd)?,
            writer: pipe::Sender::from_owned_fd_unchecked(writer)?,
        })
    }

    /// Opens a terminal device by path (the client's side of the pty).
    pub fn open(path: &Path) -> io::Result<Self> {
        let fd = nix::fcntl::open(
            path,
            OFlag::O_RDWR | OFlag::O_NOCTTY | OFlag::O_NONBLOCK,
            Mode::empty(),
        )
        .map_err(io::Error::from)?;
        Self::new(fd)
    }
}

impl AsyncRead for FdStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match ready!(Pin::new(&mut self.reader).poll_read(cx, buf)) {
            // A pty master whose slave is gone reads EIO: that is an end of file.
            Err(e) if e.raw_os_error() == Some(Errno::EIO as i32) => Poll::Ready(Ok(())),
            other => Poll::Ready(other),
        }
    }
}

impl AsyncWrite for FdStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.writer).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.writer).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.writer).poll_shutdown(cx)
    }
}

/// An open pseudo-terminal: the master the unit serves, the slave kept open, the
/// slave's path for clients.
#[derive(Debug)]
pub struct Pty {
    pub master: FdStream,
    pub slave: OwnedFd,
    pub path: PathBuf,
}

impl Pty {
    /// Opens a pseudo-terminal with its slave in raw mode.
    pub fn open() -> io::Result<Self> {
        let OpenptyResult { master, slave } = openpty(None, None).map_err(io::Error::from)?;
        let mut termios = tcgetattr(&slave).map_err(io::Error::from)?;
        cfmakeraw(&mut termios);
        tcsetattr(&slave, SetArg::TCSANOW, &termios).map_err(io::Error::from)?;
        let path = nix::unistd::ttyname(&slave).map_err(io::Error::from)?;
        Ok(Self {
            master: FdStream::new(master)?,
            slave,
            path,
        })
    }
}
