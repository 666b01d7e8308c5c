//! The host panel's data and the thread that samples it once a second, off the UI thread, so
//! reading /proc never delays a frame.

use crate::machine::host::HostSample;
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

/// One other process, by CPU use.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessView {
    pub pid: u32,
    pub name: String,
    /// Percent of one CPU over the last interval.
    pub cpu_pct: f64,
}

/// What the host panel shows. Fields the host cannot give (no /proc/pressure, first sample
/// without rates) are None.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostView {
    pub load: [f64; 3],
    pub mem_total: u64,
    pub mem_available: u64,
    pub swap_total: u64,
    pub swap_used: u64,
    /// Pages swapped in and out per second.
    pub swap_in_per_s: Option<f64>,
    pub swap_out_per_s: Option<f64>,
    /// `some avg10` of /proc/pressure/cpu and /proc/pressure/memory, percent.
    pub cpu_pressure: Option<f64>,
    pub mem_pressure: Option<f64>,
    /// Steal over the last interval, percent of all CPU time.
    pub steal_pct: Option<f64>,
    /// CPU use of every process but ours, percent of one CPU.
    pub others_cpu_pct: Option<f64>,
    /// The three busiest other processes.
    pub top: Vec<ProcessView>,
}

impl From<HostSample> for HostView {
    fn from(h: HostSample) -> HostView {
        HostView {
            load: h.load,
            mem_total: h.mem_total,
            mem_available: h.mem_available,
            swap_total: h.swap_total,
            swap_used: h.swap_used,
            swap_in_per_s: h.swap_in_per_s,
            swap_out_per_s: h.swap_out_per_s,
            cpu_pressure: h.cpu_some_avg10,
            mem_pressure: h.mem_some_avg10,
            steal_pct: h.steal_pct,
            others_cpu_pct: h.others_cpu_pct,
            top: h
                .top_others
                .into_iter()
                .take(3)
                .map(|p| ProcessView {
                    pid: p.pid,
                    name: p.comm,
                    cpu_pct: p.cpu_pct,
                })
                .collect(),
        }
    }
}

/// Something that can be asked for a host sample.
pub type Sampler = Box<dyn FnMut() -> Result<HostView, String> + Send>;

/// The sampling thread; it ends when the handle is dropped or the receiver goes away.
pub struct HostThread {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl HostThread {
    /// Samples now and then every `every`, sending each result.
    pub fn start(
        mut sampler: Sampler,
        every: Duration,
    ) -> (HostThread, Receiver<Result<HostView, String>>) {
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
                Ok(HostView {
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
