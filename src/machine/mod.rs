//! What the host is: topology and caches (sysfs), its load (/proc), the limits of its cgroups,
//! the core clock and the vendor's bandwidth figure. Everything that reads files takes a root
//! path, so tests run it on fixture trees of machines we do not have.

pub mod cgroup;
pub mod clock;
pub mod host;
pub mod topology;
pub mod vendor;
