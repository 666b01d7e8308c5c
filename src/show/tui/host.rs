//! The thread that samples the host for the host panel (and, in the same pass, the other
//! processes for the suspects and the timeline) once a second, off the UI thread, so reading
//! /proc never delays a frame.

use crate::base::error::Result;
use crate::machine::host::HostSample;
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

/// Something that can be asked for a host sample.
pub(crate) type Sampler = Box<dyn FnMut() -> Result<HostSample> + Send>;

/// The sampling thread; it ends when the handle is dropped or the receiver goes away.
pub(crate) struct HostThread {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl HostThread {
    /// Samples now and then every `every`, sending each result.
    pub fn start(
        mut sampler: Sampler,
        every: Duration,
    ) -> (HostThread, Receiver<Result<HostSample>>) {
        let (tx, rx) = crossbeam_channel::bounded(2);
        let (stop_tx, stop_rx) = crossbeam_channel::bounded::<()>(0);
        let thread = std::thread::Builder::new()
            .name("host-sampler".into())
            .spawn(move || {
                loop {
                    if tx.send(sampler()).is_err() {
                        return;
                    }
                    match stop_rx.recv_timeout(every) {
                        Err(RecvTimeoutError::Timeout) => {}
                        _ => return,
                    }
                }
            })
            .ok();
        (
            HostThread {
                stop: Some(stop_tx),
                thread,
            },
            rx,
        )
    }
}

impl Drop for HostThread {
    fn drop(&mut self) {
        self.stop.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_at_once_and_stops_when_dropped() {
        let mut n = 0;
        let (t, rx) = HostThread::start(
            Box::new(move || {
                n += 1;
                Ok(HostSample {
                    load: [n as f64, 0.0, 0.0],
                    ..Default::default()
                })
            }),
            Duration::from_secs(3600),
        );
        let first = rx.recv_timeout(Duration::from_secs(10)).unwrap().unwrap();
        assert_eq!(first.load[0], 1.0);
        drop(t); // joins promptly although the interval is an hour
    }
}
