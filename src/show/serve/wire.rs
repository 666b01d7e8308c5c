//! A connection's bytes, as the event loop reads and writes them: straight on the socket, or
//! through a rustls server connection driven by hand on the non-blocking socket (`read_tls`,
//! `process_new_packets`, `write_tls`), so a handshake is only more bytes of the request head:
//! it runs within the head's deadline and never blocks the loop.

use mio::net::TcpStream;
use std::io::{self, Read, Write};

/// Plain, or TLS.
pub(super) enum Wire {
    Plain,
    #[cfg(web_tls)]
    Tls(Box<rustls::ServerConnection>),
}

impl Wire {
    /// Like a non-blocking read of the request's bytes: Ok(0) at the end, WouldBlock while
    /// nothing more has come (a handshake in progress included).
    pub(super) fn read(&mut self, stream: &TcpStream, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Wire::Plain => (&*stream).read(buf),
            #[cfg(web_tls)]
            Wire::Tls(tls) => loop {
                match tls.reader().read(buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    other => return other,
                }
                // Handshake replies first: the client waits on them before it sends more.
                flush(tls, stream).or_else(would_block_is_fine)?;
                if tls.read_tls(&mut &*stream)? == 0 {
                    return Ok(0);
                }
                if let Err(e) = tls.process_new_packets() {
                    // The alert that says why, if the socket takes it now.
                    let _ = tls.write_tls(&mut &*stream);
                    return Err(io::Error::new(io::ErrorKind::InvalidData, e));
                }
            },
        }
    }

    /// Like a non-blocking write of response bytes: how many were taken, or WouldBlock.
    pub(super) fn write(&mut self, stream: &TcpStream, buf: &[u8]) -> io::Result<usize> {
        match self {
            Wire::Plain => (&*stream).write(buf),
            #[cfg(web_tls)]
            Wire::Tls(tls) => {
                let n = tls.writer().write(buf)?;
                flush(tls, stream).or_else(|e| {
                    if n > 0 {
                        would_block_is_fine(e)
                    } else {
                        Err(e)
                    }
                })?;
                if n == 0 {
                    // Its buffer was full and is now sent: take some more at once.
                    return tls.writer().write(buf);
                }
                Ok(n)
            }
        }
    }

    /// After the last write: ends the TLS session (close_notify) and sends what is buffered.
    /// WouldBlock until all of it is on the socket.
    // A plain connection has nothing to finish (and only Linux builds have TLS).
    #[cfg_attr(not(web_tls), allow(unused_variables))]
    pub(super) fn finish(&mut self, stream: &TcpStream) -> io::Result<()> {
        match self {
            Wire::Plain => Ok(()),
            #[cfg(web_tls)]
            Wire::Tls(tls) => {
                tls.send_close_notify();
                flush(tls, stream)
            }
        }
    }
}

/// Writes what rustls holds until it is all sent or the socket would block.
#[cfg(web_tls)]
fn flush(tls: &mut rustls::ServerConnection, stream: &TcpStream) -> io::Result<()> {
    while tls.wants_write() {
        if tls.write_tls(&mut &*stream)? == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
    }
    Ok(())
}

#[cfg(web_tls)]
fn would_block_is_fine(e: io::Error) -> io::Result<()> {
    if e.kind() == io::ErrorKind::WouldBlock {
        Ok(())
    } else {
        Err(e)
    }
}
