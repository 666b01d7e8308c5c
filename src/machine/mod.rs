//! What the host is: topology and caches (sysfs, or `sysctl` on macOS), its load (/proc, or
//! `sysctl` and the VM counters on macOS) and its other processes (/proc), the limits of its
//! cgroups, the core clock, the vendor's bandwidth figure, the transparent huge page mode, the
//! CPU design (`cpu_id`) and what its load and store ports allow per cycle (`uarch`).
//! Everything that reads the host takes a root path, so tests run it on fixture trees (and
//! `sysctl` listings) of machines we do not have.

pub mod cgroup;
pub mod clock;
pub mod counters;
pub mod cpu_id;
pub mod fingerprint;
pub mod host;
pub mod procs;
pub mod sysctl;
pub mod thp;
pub mod topology;
pub mod uarch;
pub mod vendor;
pub mod vendor_apple;
