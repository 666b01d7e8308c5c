//! Where a working set's pages sit, and putting them where its threads are.
//!
//! Each page of an array belongs to one partition: the one that holds the first of the array's
//! elements on it (so a page two partitions share is counted and moved once). After the arrays
//! are in place for a cell, a sample of each partition's pages is asked of the kernel
//! (`move_pages(2)` in query mode) and tallied against the node the partition is meant for.
//! When a working set is partitioned for another thread count on a NUMA machine, each worker
//! moves the pages its new partition owns to its own node.

use super::buffers::Arrays;
use super::events::{PagePlacement, Placement};
use crate::platform;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

/// At most this many pages are asked about per cell (one system call's worth).
const MAX_SAMPLED: usize = 4096;
/// At most this many pages per partition of each array.
const PER_PART: usize = 64;
/// Pages moved per system call, between looks at the stop flag.
const MOVE_BATCH: usize = 1024;

/// The start addresses of the pages partition `part` owns in an array of f64 at `base`: those
/// whose first element of the array lies in it (the first partition also owns the page the
/// array starts on, which may begin before it).
fn owned_pages(base: usize, part: &Range<usize>, page: usize) -> Range<usize> {
    if part.is_empty() {
        return 0..0;
    }
    let start = base + part.start * 8;
    let end = base + part.end * 8;
    let first = if part.start == 0 {
        start / page * page
    } else {
        start.div_ceil(page) * page
    };
    // Pages are counted by their start: a page is owned when it starts before the part ends.
    let last = end.div_ceil(page) * page;
    if first >= last { 0..0 } else { first..last }
}

/// `k` of the `n` pages from `pages` (step `page`), evenly spaced, the first always among them.
fn sample(pages: &Range<usize>, page: usize, k: usize) -> impl Iterator<Item = usize> {
    let n = pages.len() / page;
    let k = k.min(n);
    let start = pages.start;
    (0..k).map(move |i| start + (i * n / k) * page)
}

/// Tallies the kernel's answer for each sampled page against the node its partition is meant
/// for (`meant[i]` for page i).
pub(crate) fn tally(status: &[i32], meant: &[Option<usize>]) -> PagePlacement {
    let mut p = PagePlacement {
        sampled: status.len() as u64,
        ..PagePlacement::default()
    };
    for (&s, &m) in status.iter().zip(meant) {
        let node = usize::try_from(s).ok();
        match node {
            Some(n) => *p.by_node.entry(n).or_default() += 1,
            None => p.absent += 1,
        }
        if let Some(m) = m {
            p.meant += 1;
            if node == Some(m) {
                p.on_meant += 1;
            }
        }
    }
    p
}

/// Where a sample of the pages of partitions `parts` of `arrays` sits, against the node
/// `meant(i)` says partition i is meant for.
pub(crate) fn sample_placement(
    arrays: &Arrays,
    parts: &[Range<usize>],
    meant: impl Fn(usize) -> Option<usize>,
) -> Placement {
    if let Some(why) = platform::NUMA_NOTE {
        return Placement::Unknown(why.to_string());
    }
    let page = platform::page_size();
    let per_part = (MAX_SAMPLED / (3 * parts.len().max(1))).clamp(1, PER_PART);
    let mut addrs = Vec::new();
    let mut nodes = Vec::new();
    for base in [arrays.a.as_ptr(), arrays.b.as_ptr(), arrays.c.as_ptr()] {
        for (i, part) in parts.iter().enumerate() {
            let owned = owned_pages(base as usize, part, page);
            for addr in sample(&owned, page, per_part) {
                addrs.push(addr);
                nodes.push(meant(i));
            }
        }
    }
    match platform::page_nodes(&addrs) {
        Ok(status) => Placement::Sampled(tally(&status, &nodes)),
        Err(e) => Placement::Unknown(format!("move_pages refused: {e}")),
    }
}

/// Moves the pages `part` owns in an array of f64 at `base` to `node`, a batch at a time,
/// until done or `stop` is set. Pages the kernel will not move stay (the placement sample
/// shows them).
pub(crate) fn move_part(base: usize, part: &Range<usize>, node: usize, stop: &AtomicBool) {
    let page = platform::page_size();
    let owned = owned_pages(base, part, page);
    let mut batch = Vec::with_capacity(MOVE_BATCH);
    let mut addr = owned.start;
    while addr < owned.end && !stop.load(Ordering::Relaxed) {
        batch.clear();
        while addr < owned.end && batch.len() < MOVE_BATCH {
            batch.push(addr);
            addr += page;
        }
        let _ = platform::move_pages_to(&batch, node);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: usize = 4096;

    #[test]
    fn each_page_has_one_owner() {
        // 1000 elements (8000 bytes) split at 512 elements: byte 4096 starts the second part,
        // which owns the page from 4096; the first owns the page from 0.
        let base = 1 << 21;
        let a = owned_pages(base, &(0..512), PAGE);
        let b = owned_pages(base, &(512..1000), PAGE);
        assert_eq!(a, base..base + PAGE);
        assert_eq!(b, base + PAGE..base + 2 * PAGE);
        // A cut inside a page: the page goes to the part that holds its first element.
        let a = owned_pages(base, &(0..600), PAGE);
        let b = owned_pages(base, &(600..1200), PAGE);
        assert_eq!(a, base..base + 2 * PAGE);
        assert_eq!(b, base + 2 * PAGE..base + 3 * PAGE);
        // A part inside one page owns none; an empty part owns none.
        assert!(owned_pages(base, &(520..530), PAGE).is_empty());
        assert!(owned_pages(base, &(0..0), PAGE).is_empty());
        // An array that starts past a page boundary (staggered): its first part owns the page
        // it starts on.
        assert_eq!(owned_pages(base + 1408, &(0..16), PAGE), base..base + PAGE);
    }

    #[test]
    fn a_sample_is_spread_over_the_pages_and_starts_at_the_first() {
        let pages = 0..100 * PAGE;
        let s: Vec<usize> = sample(&pages, PAGE, 4).collect();
        assert_eq!(s, vec![0, 25 * PAGE, 50 * PAGE, 75 * PAGE]);
        assert_eq!(sample(&(0..2 * PAGE), PAGE, 64).count(), 2);
        assert_eq!(sample(&(0..0), PAGE, 64).count(), 0);
    }

    #[test]
    fn pages_are_tallied_by_node_and_against_the_node_meant() {
        let status = [0, 1, 1, -2, 0];
        let meant = [Some(0), Some(0), Some(1), Some(1), None];
        let p = tally(&status, &meant);
        assert_eq!((p.sampled, p.meant, p.on_meant, p.absent), (5, 4, 2, 1));
        assert_eq!(p.by_node.get(&0), Some(&2));
        assert_eq!(p.by_node.get(&1), Some(&2));
        assert_eq!(p.share_on_meant(), Some(0.5));
        assert_eq!(tally(&[0], &[None]).share_on_meant(), None);
    }
}
