//! A TCP connection the request handler can sabotage: reset it, or write garbage on it.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use crate::reply::Action;

/// Shared between a connection and its request handler.
#[derive(Clone, Default)]
pub(crate) struct Sabotage(Arc<Mutex<Option<Action>>>);

impl Sabotage {
    pub(crate) fn set(&self, action: Action) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(action);
    }

    fn take(&self) -> Option<Action> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

pub(crate) struct Conn {
    pub(crate) tcp: TcpStream,
    pub(crate) sabotage: Sabotage,
}

impl AsyncRead for Conn {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_read(cx, buf)
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.sabotage.take() {
            Some(Action::Reset) => {
                // Linger 0 makes the close that follows the error an RST.
                let _ = socket2::SockRef::from(&self.tcp).set_linger(Some(Duration::ZERO));
                return Poll::Ready(Err(io::ErrorKind::ConnectionReset.into()));
            }
            Some(Action::Raw(bytes)) => {
                // Small writes on a fresh socket go out at once.
                let _ = self.tcp.try_write(&bytes);
                return Poll::Ready(Err(io::ErrorKind::ConnectionAborted.into()));
            }
            Some(Action::Respond) | None => {}
        }
        Pin::new(&mut self.tcp).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        // Route through poll_write so that sabotage applies to vectored writes too.
        let first = bufs
            .iter()
            .find(|b| !b.is_empty())
            .map_or(&[][..], |b| &**b);
        self.as_mut().poll_write(cx, first)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}
