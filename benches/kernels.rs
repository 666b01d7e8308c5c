//! Kernel-level benchmark: every loop this CPU has of an op (`OP`, default the triad),
//! single-threaded, against likwid-bench's hand-written kernels for the same op (of any ISA),
//! on the same working sets, interleaved, as ratios of medians.
//!
//! ```text
//! cargo bench --bench kernels                      # l1, l2, dram, dram-4k; 7 repetitions
//! OP=copy,read,write,update cargo bench --bench kernels
//! REPS=9 SETS=l1,24kB cargo bench --bench kernels  # more repetitions, likwid's classic 24 kB
//! KERNELS=avx2,avx2-nt LIKWID=0 cargo bench --bench kernels
//! ```
//!
//! Environment: `OP` (ops, as `--op` takes them: `triad`, `copy,read`, `stream`, `all`;
//! default `triad`), `REPS` (repetitions, default 7), `SETS` (`l1`, `l2`, `dram`, or a total size of
//! the three arrays as likwid-bench's `-w` takes it: `24kB`, `256KiB`, `384MiB`; a `-4k` suffix,
//! as in the default `dram-4k`, leaves out `MADV_HUGEPAGE` for that set; default
//! `l1,l2,dram,dram-4k`), `KERNELS`
//! (short names: `avx2`, `avx2-nt`, ...), `SAMPLE_MS` (length of one timed sample, default
//! 100), `CPU` (the CPU both sides are pinned to, default 0, which is where likwid-bench's
//! `S0` domain starts), `LIKWID` (0: stream-top's kernels only), `HUGE` (0: no
//! `MADV_HUGEPAGE`), `OFFSETS` (bytes from the 2 MiB boundary of `a`, `b`, `c`, default
//! `0,0,0` as in the engine), `NICE` (niceness of the benchmark and likwid-bench, default 0),
//! `FENCED` (1: call `Kernel::function`, which fences non-temporal stores every pass, instead
//! of `Kernel::pass_function` and one `Kernel::fence` per sample as the engine should),
//! `RESIDENCE` (`cache` or `memory`: the loop for every set, instead of `Memory` for `dram`
//! and `Cache` for the rest).
//!
//! Sizes follow stream-top's engine: `l1` and `l2` are half of one CPU's share of that cache,
//! split over three arrays, rounded down to 128 bytes (per thread); `dram` is 4 × the
//! last-level cache per array. Arrays are 2 MiB aligned, like the engine's. One sample is a
//! clock read, `passes` calls through the function pointer (`pass_function(Memory)` for
//! `dram`, `pass_function(Cache)` otherwise), one `fence`, a clock read; likwid-bench runs
//! with `-i` set to the same number of passes, so both sides time about as long. GB/s counts
//! the op's bytes per element the STREAM way (`Op::bytes_per_element`: triad 24, copy 16,
//! read 8, …), decimal, as likwid-bench's MByte/s does. likwid-bench's counterparts: copy ↔
//! `copy*`, read ↔ `load*`/`sum*`, write ↔ `store*`, update ↔ `update*`, triad ↔ `stream*`,
//! non-temporal stores ↔ the `*_mem*` kernels; its arrays are as long as ours (`-w` is the
//! total of its arrays). Scale, add and the mixes have none; they run without.
// A benchmark's report is what it prints: its own stdout and stderr, not the monitor's writer.
#![allow(clippy::print_stdout, clippy::print_stderr)]
// A benchmark that cannot set itself up has nothing to report: it stops there.
#![allow(clippy::unwrap_used)]

use std::cell::Cell;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::process::Command;
use std::time::Instant;
use stream_top::engine::kernel::{Isa, Kernel, Op, OpFn, READ_LANES, Residence, Stores};
use stream_top::platform::{Mapping, pin_current_thread};

/// What the environment asks of this run (see the module's comment).
struct Settings {
    reps: usize,
    sample_ms: u64,
    cpu: usize,
    use_likwid: bool,
    huge: bool,
    fenced: bool,
    offsets: [usize; 3],
    ops: Vec<Op>,
    sets: String,
    filter: Option<Vec<String>>,
    nice: i32,
}

impl Settings {
    fn from_env() -> Settings {
        let offsets = std::env::var("OFFSETS")
            .ok()
            .and_then(|v| {
                let o: Vec<usize> = v.split(',').filter_map(|x| x.trim().parse().ok()).collect();
                (o.len() == 3 && o.iter().all(|x| x % 8 == 0)).then(|| [o[0], o[1], o[2]])
            })
            .unwrap_or([0, 0, 0]);
        let ops = Op::parse_list(&std::env::var("OP").unwrap_or_else(|_| "triad".into()))
            .unwrap_or_else(|e| {
                eprintln!("OP: {e}");
                std::process::exit(2);
            });
        Settings {
            reps: env_or("REPS", 7),
            sample_ms: env_or("SAMPLE_MS", 100),
            cpu: env_or("CPU", 0),
            use_likwid: std::env::var("LIKWID").map(|v| v != "0").unwrap_or(true),
            huge: std::env::var("HUGE").map(|v| v != "0").unwrap_or(true),
            fenced: std::env::var("FENCED").map(|v| v == "1").unwrap_or(false),
            offsets,
            ops,
            sets: std::env::var("SETS").unwrap_or_else(|_| "l1,l2,dram,dram-4k".into()),
            filter: std::env::var("KERNELS")
                .ok()
                .map(|k| k.split(',').map(|s| s.trim().to_string()).collect()),
            nice: env_or("NICE", 0),
        }
    }
}

fn main() {
    let settings = Settings::from_env();
    pin(settings.cpu);
    if settings.nice != 0 {
        let nice = settings.nice;
        // SAFETY: setpriority on this process; children (likwid-bench) inherit it.
        if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) } != 0 {
            eprintln!("warning: could not set nice {nice}");
        }
    }
    let caches = Caches::read();
    let kernels: Vec<Kernel> = Kernel::all_available()
        .into_iter()
        .filter(|k| {
            let filter = settings.filter.as_ref();
            filter.is_none_or(|f| f.contains(&k.short_name()))
        })
        .collect();
    let likwid = settings.use_likwid && likwid_available();
    print_preamble(&settings, &caches, likwid);

    if let Ok(layouts) = std::env::var("LAYOUTS") {
        let s = &settings;
        compare_layouts(
            &layouts,
            &s.sets,
            &caches,
            &kernels,
            s.huge,
            s.reps,
            s.sample_ms,
        );
        return;
    }
    let mut rows: Vec<Row> = Vec::new();
    for set in settings
        .sets
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        for &op in &settings.ops {
            rows.extend(bench_set(&settings, &caches, &kernels, likwid, set, op));
        }
    }
    print_table(&rows);
}

/// The run's header: the CPU, its caches, huge pages, load, and what each side runs.
fn print_preamble(s: &Settings, caches: &Caches, likwid: bool) {
    println!("# stream-top kernel benchmark");
    println!("cpu: {}", cpu_model());
    println!(
        "caches (cpu0): L1d {} KiB, L2 {} KiB, L3 {} KiB in all; pinned to cpu {}",
        caches.l1_share / 1024,
        caches.l2_share / 1024,
        caches.l3_total / 1024,
        s.cpu
    );
    println!(
        "transparent huge pages: {}; MADV_HUGEPAGE on the arrays: {}",
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default()
            .trim(),
        if s.huge { "yes" } else { "no" }
    );
    println!(
        "load average at start: {}; nice {} (both sides)",
        load_average(),
        s.nice
    );
    for isa in Isa::ALL {
        if !isa.available() {
            println!("{isa}: this CPU lacks it; stream-top's {isa} kernels do not run here");
        }
    }
    if !likwid {
        println!(
            "likwid-bench: {}",
            if s.use_likwid {
                "not found (apt-get install -y likwid); stream-top's kernels only"
            } else {
                "skipped (LIKWID=0)"
            }
        );
    }
    println!(
        "repetitions: {}, sample {} ms, interleaved; GB/s = the op's bytes per element (STREAM's count) / ns; {}",
        s.reps,
        s.sample_ms,
        if s.fenced {
            "Kernel::function (nt fenced every pass)"
        } else {
            "Kernel::pass_function (dram: Memory, else Cache), one Kernel::fence per sample"
        }
    );
    println!();
}

/// One working set and op: both sides measured interleaved, as rows of the table.
fn bench_set(
    s: &Settings,
    caches: &Caches,
    kernels: &[Kernel],
    likwid: bool,
    set: &str,
    op: Op,
) -> Vec<Row> {
    // `-4k`: without MADV_HUGEPAGE, as likwid-bench's arrays are (it does not ask for huge
    // pages, so with THP in `madvise` mode it gets 4 KiB pages).
    let (base, huge) = match set.strip_suffix("-4k") {
        Some(base) => (base, false),
        None => (set, s.huge),
    };
    let per_array = caches.per_array(base).unwrap_or_else(|e| {
        eprintln!("SETS: {e}");
        std::process::exit(2);
    });
    let n = (per_array / 8) as usize;
    let arrays = Arrays::new(n, huge, s.offsets, op);
    println!(
        "op {op}, set {set}: {n} elements per array ({} bytes, {} per pass), MADV_HUGEPAGE {}{}",
        n * 8,
        n as u64 * op.bytes_per_element(),
        if huge { "yes" } else { "no" },
        arrays.huge_note(),
    );
    let how = How {
        op,
        residence: residence(base),
        fenced: s.fenced,
        alternative: None,
    };
    let kernels: Vec<Kernel> = kernels
        .iter()
        .copied()
        .filter(|k| k.loops(op).next().is_some())
        .collect();
    // Passes per sample, calibrated on the first kernel (the fastest ISA).
    let passes = arrays.calibrate(kernels[0], how, s.sample_ms);
    let variants = variants_of(&kernels, how);
    let likwid_kernels = if likwid {
        likwid_kernels_for(&kernels, op)
    } else {
        Vec::new()
    };
    let measured = measure(s.reps, &arrays, &variants, &likwid_kernels, n, passes);
    arrays.verify();
    for (lk, len) in &measured.likwid_len {
        if *len != n {
            println!(
                "note: likwid-bench {lk} ran {len} elements per array at {set}, stream-top {n}"
            );
        }
    }
    eprintln!("  {passes} passes per sample");
    rows_of(&measured, &variants, op, set, n)
}

/// What runs on our side: each kernel as the engine calls it, and beside it, where the choice
/// matters, the alternative (interleaved the same way), so the table shows what each choice is
/// worth: the ymm loop for avx2 at dram, a fence every pass for nt.
fn variants_of(kernels: &[Kernel], how: How) -> Vec<(String, Kernel, How)> {
    let op = how.op;
    let mut variants: Vec<(String, Kernel, How)> = Vec::new();
    for k in kernels {
        variants.push((k.short_name(), *k, how));
        if how.fenced {
            continue;
        }
        let chosen = k.pass_function(op, how.residence) as usize;
        for v in k.loops(op) {
            if v.pass as usize != chosen {
                let alt = How {
                    alternative: Some(v.pass),
                    ..how
                };
                // `avx2 [ymm fma]` for the table's `avx2 ymm fma`.
                let short = k.short_name();
                let shape = v.name.strip_prefix(short.as_str()).unwrap_or(v.name).trim();
                variants.push((format!("{short} [{shape}]"), *k, alt));
            }
        }
        if k.stores == Stores::Nt && how.residence == Residence::Cache {
            let every = How {
                fenced: true,
                ..how
            };
            variants.push((format!("{} [fence every pass]", k.short_name()), *k, every));
        }
    }
    variants
}

/// likwid-bench's kernels for `op` with the store kinds of `kernels`, each once.
fn likwid_kernels_for(kernels: &[Kernel], op: Op) -> Vec<&'static str> {
    let mut found = Vec::new();
    for lk in kernels
        .iter()
        .flat_map(|k| likwid_counterparts(op, k.stores))
    {
        if !found.contains(&lk) {
            found.push(lk);
        }
    }
    found
}

/// Each side's GB/s per repetition, and the array length likwid-bench reported.
struct Measured {
    ours: BTreeMap<String, Vec<f64>>,
    theirs: BTreeMap<&'static str, Vec<f64>>,
    likwid_len: BTreeMap<&'static str, usize>,
}

/// `reps` repetitions of every variant and every likwid-bench kernel, interleaved.
fn measure(
    reps: usize,
    arrays: &Arrays,
    variants: &[(String, Kernel, How)],
    likwid_kernels: &[&'static str],
    n: usize,
    passes: u64,
) -> Measured {
    let mut m = Measured {
        ours: BTreeMap::new(),
        theirs: BTreeMap::new(),
        likwid_len: BTreeMap::new(),
    };
    for rep in 0..reps {
        // Alternate which side goes first, so a drift in the machine's load or clock does not
        // favour one side.
        let run_ours = |ours: &mut BTreeMap<String, Vec<f64>>| {
            for (name, k, how) in variants {
                let gbs = arrays.sample(*k, *how, passes);
                ours.entry(name.clone()).or_default().push(gbs);
            }
        };
        if rep % 2 == 0 {
            run_ours(&mut m.ours);
        }
        for lk in likwid_kernels {
            match run_likwid(lk, n * 8 * likwid_arrays(lk), passes) {
                Ok((gbs, len)) => {
                    m.theirs.entry(lk).or_default().push(gbs);
                    m.likwid_len.insert(lk, len);
                }
                Err(e) => eprintln!("likwid-bench -t {lk}: {e}"),
            }
        }
        if rep % 2 == 1 {
            run_ours(&mut m.ours);
        }
        eprintln!("  repetition {}/{reps} done", rep + 1);
    }
    m
}

/// The table's rows for one set and op: each variant against likwid-bench's best kernel of its
/// store kind, then that kind's other likwid-bench kernels on rows of their own.
fn rows_of(
    m: &Measured,
    variants: &[(String, Kernel, How)],
    op: Op,
    set: &str,
    n: usize,
) -> Vec<Row> {
    let mut rows = Vec::new();
    for (name, k, _) in variants {
        let best_lk = likwid_counterparts(op, k.stores)
            .into_iter()
            .filter(|lk| m.theirs.contains_key(*lk))
            .max_by(|x, y| median(&m.theirs[*x]).total_cmp(&median(&m.theirs[*y])));
        rows.push(Row {
            op,
            set: set.to_string(),
            per_array: n * 8,
            kernel: name.clone(),
            ours: m.ours[name].clone(),
            likwid: best_lk
                .map(|lk| lk.to_string())
                .unwrap_or_else(|| "-".into()),
            theirs: best_lk.map(|lk| m.theirs[lk].clone()).unwrap_or_default(),
        });
        for lk in likwid_counterparts(op, k.stores) {
            if let Some(v) = m.theirs.get(lk)
                && Some(lk) != best_lk
                && name == &k.short_name()
            {
                rows.push(Row {
                    op,
                    set: set.to_string(),
                    per_array: n * 8,
                    kernel: String::new(),
                    ours: Vec::new(),
                    likwid: lk.to_string(),
                    theirs: v.clone(),
                });
            }
        }
    }
    rows
}

/// `LAYOUTS="0,0,0;0,64,128"`: for each set and kernel, the same kernel over arrays placed at
/// those byte offsets from a 2 MiB boundary, alternating short samples in one process (`REPS`
/// × 20 samples each), median and best. Shows what placement alone does to a kernel.
fn compare_layouts(
    layouts: &str,
    sets: &str,
    caches: &Caches,
    kernels: &[Kernel],
    huge: bool,
    reps: usize,
    sample_ms: u64,
) {
    let layouts: Vec<[usize; 3]> = layouts
        .split(';')
        .filter_map(|l| {
            let o: Vec<usize> = l.split(',').filter_map(|x| x.trim().parse().ok()).collect();
            (o.len() == 3 && o.iter().all(|x| x % 8 == 0)).then(|| [o[0], o[1], o[2]])
        })
        .collect();
    println!("| set | kernel | offsets of a, b, c (bytes) | median GB/s | best GB/s |");
    println!("|---|---|---|---:|---:|");
    for set in sets.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let n = (caches.per_array(set).expect("SETS") / 8) as usize;
        let arrays: Vec<Arrays> = layouts
            .iter()
            .map(|o| Arrays::new(n, huge, *o, Op::Triad))
            .collect();
        for k in kernels {
            let how = How {
                op: Op::Triad,
                residence: residence(set),
                fenced: false,
                alternative: None,
            };
            let passes = arrays[0].calibrate(*k, how, sample_ms);
            let mut samples = vec![Vec::new(); arrays.len()];
            for _ in 0..reps * 20 {
                for (arr, out) in arrays.iter().zip(samples.iter_mut()) {
                    out.push(arr.sample(*k, how, passes));
                }
            }
            for (o, v) in layouts.iter().zip(&samples) {
                println!(
                    "| {set} | {} | {},{},{} | {:.1} | {:.1} |",
                    k.short_name(),
                    o[0],
                    o[1],
                    o[2],
                    median(v),
                    best(v)
                );
            }
        }
        for arr in &arrays {
            arr.verify();
        }
    }
}

/// One line of the table: the samples of one stream-top variant and of one likwid-bench
/// kernel (either may be empty).
struct Row {
    op: Op,
    set: String,
    per_array: usize,
    kernel: String,
    ours: Vec<f64>,
    likwid: String,
    theirs: Vec<f64>,
}

fn print_table(rows: &[Row]) {
    println!(
        "| op | set | per array | stream-top | median GB/s | best | likwid-bench | median GB/s | best | ratio of medians | ratio of bests |"
    );
    println!("|---|---|---|---|---:|---:|---|---:|---:|---:|---:|");
    let f = |x: f64, d: usize| {
        if x.is_nan() {
            "-".to_string()
        } else {
            format!("{x:.d$}")
        }
    };
    for r in rows {
        let (m, b) = (median(&r.ours), best(&r.ours));
        let (lm, lb) = (median(&r.theirs), best(&r.theirs));
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.op,
            r.set,
            size_text(r.per_array),
            r.kernel,
            f(m, 1),
            f(b, 1),
            r.likwid,
            f(lm, 1),
            f(lb, 1),
            f(m / lm, 3),
            f(b / lb, 3),
        );
    }
    println!();
    println!(
        "ratio = stream-top / the likwid-bench kernel of the same op and store kind, of any ISA this CPU has, with the best median (the others on the rows below it); one sample per repetition on each side, interleaved"
    );
}

/// likwid-bench's kernels that do what `op` does with `stores`, of every ISA this CPU has; the
/// table compares against whichever measured best.
fn likwid_counterparts(op: Op, stores: Stores) -> Vec<&'static str> {
    let all: &[&'static str] = match (op, stores) {
        (Op::Triad, Stores::Normal) => &[
            "stream_avx512_fma",
            "stream_avx512",
            "stream_avx_fma",
            "stream_avx",
            "stream_sse",
        ],
        (Op::Triad, Stores::Nt) => &[
            "stream_mem_avx512",
            "stream_mem_avx_fma",
            "stream_mem_avx",
            "stream_mem_sse",
        ],
        (Op::Copy, Stores::Normal) => &["copy_avx512", "copy_avx", "copy_sse"],
        (Op::Copy, Stores::Nt) => &["copy_mem_avx512", "copy_mem_avx", "copy_mem_sse"],
        (Op::Read, _) => &[
            "load_avx512",
            "load_avx",
            "load_sse",
            "sum_avx512",
            "sum_avx",
            "sum_sse",
        ],
        (Op::Write, Stores::Normal) => &["store_avx512", "store_avx", "store_sse"],
        (Op::Write, Stores::Nt) => &["store_mem_avx512", "store_mem_avx", "store_mem_sse"],
        (Op::Update, Stores::Normal) => &["update_avx512", "update_avx", "update_sse"],
        _ => &[],
    };
    all.iter()
        .copied()
        .filter(|lk| !lk.contains("avx512") || Isa::Avx512.available())
        .filter(|lk| !lk.contains("avx") || lk.contains("avx512") || Isa::Avx2.available())
        .collect()
}

/// The arrays a likwid-bench kernel streams (its `-w` is their total).
fn likwid_arrays(kernel: &str) -> usize {
    match kernel.split('_').next() {
        Some("stream") => 3,
        Some("copy") => 2,
        _ => 1,
    }
}

fn likwid_available() -> bool {
    Command::new("likwid-bench")
        .arg("-h")
        .output()
        .map(|o| o.status.success() || !o.stdout.is_empty())
        .unwrap_or(false)
}

/// Runs likwid-bench once: `-w S0:<total>B:1 -i <passes>` (likwid-bench pins its thread to the
/// first CPU of `S0` itself, cpu 0 on one-socket machines: hence `CPU` defaults to 0). Returns
/// GB/s and the elements per array it ran.
fn run_likwid(kernel: &str, total_bytes: usize, passes: u64) -> Result<(f64, usize), String> {
    let out = Command::new("likwid-bench")
        .args([
            "-t",
            kernel,
            "-w",
            &format!("S0:{total_bytes}B:1"),
            "-i",
            &passes.to_string(),
        ])
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().last())
            .and_then(|v| v.parse::<f64>().ok())
    };
    let mbs = field("MByte/s:").ok_or_else(|| {
        format!(
            "no MByte/s in its output: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .chain(text.lines())
                .take(3)
                .collect::<Vec<_>>()
                .join(" / ")
        )
    })?;
    let len = text
        .lines()
        .find(|l| l.contains("Vector length") && l.starts_with("Group"))
        .and_then(|l| l.split("Vector length").nth(1))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    Ok((mbs / 1000.0, len))
}

/// The loop for a set: `Memory` for `dram`, `Cache` for the rest, unless `RESIDENCE` says.
fn residence(set: &str) -> Residence {
    match std::env::var("RESIDENCE").as_deref() {
        Ok("cache") => Residence::Cache,
        Ok("memory") => Residence::Memory,
        _ if set == "dram" => Residence::Memory,
        _ => Residence::Cache,
    }
}

/// How a sample calls the kernel.
#[derive(Clone, Copy)]
struct How {
    op: Op,
    residence: Residence,
    fenced: bool,
    /// One of `Kernel::loops` instead of the one `pass_function` picks.
    alternative: Option<OpFn>,
}

impl How {
    fn function(self, k: Kernel) -> OpFn {
        if let Some(f) = self.alternative {
            f
        } else if self.fenced {
            k.function(self.op)
        } else {
            k.pass_function(self.op, self.residence)
        }
    }
}

/// Three 2 MiB-aligned arrays of `n` elements: `b`, `c` small integers, `a` written.
struct Arrays {
    a: *mut f64,
    b: *mut f64,
    c: *mut f64,
    n: usize,
    op: Op,
    /// Passes run so far: what in-place ops leave depends on whether the count is odd.
    passes: Cell<u64>,
    /// The three mappings, unmapped when the arrays drop.
    _maps: Vec<Mapping>,
}

impl Arrays {
    fn new(n: usize, huge: bool, offsets: [usize; 3], op: Op) -> Arrays {
        const ALIGN: usize = 2 << 20;
        let max_off = offsets.iter().copied().max().unwrap_or(0);
        let bytes = (n * 8 + max_off).div_ceil(ALIGN).max(1) * ALIGN;
        let mut maps = Vec::new();
        let mut alloc = |off: usize| {
            let mut m = Mapping::new(bytes, ALIGN)
                .unwrap_or_else(|e| panic!("cannot map {bytes} bytes: {e}"));
            if huge {
                m.advise_huge_pages(true);
            }
            // SAFETY: off + n*8 <= bytes, inside the mapping.
            let p = unsafe { m.as_mut_ptr().add(off) as *mut f64 };
            maps.push(m);
            p
        };
        let (a, b, c) = (alloc(offsets[0]), alloc(offsets[1]), alloc(offsets[2]));
        // SAFETY: each array holds at least n elements.
        unsafe {
            for i in 0..n {
                (*a.add(i), *b.add(i), *c.add(i)) = start(i);
            }
        }
        Arrays {
            a,
            b,
            c,
            n,
            op,
            passes: Cell::new(0),
            _maps: maps,
        }
    }

    /// How much of the arrays got huge pages (AnonHugePages of the whole process).
    fn huge_note(&self) -> String {
        let smaps = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
        let kb = smaps
            .lines()
            .find(|l| l.starts_with("AnonHugePages:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok());
        match kb {
            Some(kb) => format!(" (AnonHugePages {kb} kB in the process)"),
            None => String::new(),
        }
    }

    /// Times `passes` passes as the engine runs them: the unfenced pass function for the
    /// set's residence, one fence after the last pass (or, with `FENCED=1`, the fenced
    /// function every pass); GB/s.
    fn sample(&self, k: Kernel, how: How, passes: u64) -> f64 {
        let f = black_box(how.function(k));
        let s = self.op.scalar();
        // Warm-up: a few passes (cache sets: also the clock).
        for _ in 0..passes.div_ceil(20).max(1) {
            // SAFETY: the arrays hold n elements and do not overlap.
            unsafe { f(black_box(self.a), self.b, self.c, self.n, s) };
        }
        let t = Instant::now();
        for _ in 0..passes {
            // SAFETY: as above.
            unsafe { f(black_box(self.a), self.b, self.c, self.n, s) };
        }
        k.fence();
        let ns = t.elapsed().as_nanos() as f64;
        self.passes
            .set(self.passes.get() + passes + passes.div_ceil(20).max(1));
        (self.op.bytes_per_element() as usize * self.n) as f64 * passes as f64 / ns
    }

    /// Passes so that one sample lasts about `ms`.
    fn calibrate(&self, k: Kernel, how: How, ms: u64) -> u64 {
        let f = how.function(k);
        let mut passes = 1u64;
        loop {
            let t = Instant::now();
            for _ in 0..passes {
                // SAFETY: the arrays hold n elements and do not overlap.
                unsafe {
                    black_box(f)(black_box(self.a), self.b, self.c, self.n, self.op.scalar())
                };
            }
            self.passes.set(self.passes.get() + passes);
            let el = t.elapsed().as_secs_f64();
            if el > 0.02 || passes > 1 << 40 {
                return ((ms as f64 / 1000.0) / el * passes as f64).ceil().max(1.0) as u64;
            }
            passes *= 4;
        }
    }

    /// Every element of `a` is `b + s*c`: the kernels ran, and right.
    fn verify(&self) {
        let passes = self.passes.get();
        // read leaves its sum of b in the first lanes of a, as partial sums.
        let lanes = if self.op == Op::Read && passes > 0 {
            self.n.min(READ_LANES)
        } else {
            0
        };
        // SAFETY: lanes ≤ n.
        let total: f64 = (0..lanes).map(|i| unsafe { *self.a.add(i) }).sum();
        let sum: f64 = (0..self.n).map(|i| start(i).1).sum();
        assert!(
            lanes == 0 || total == sum,
            "read's lanes sum to {total}, want {sum}"
        );
        for i in lanes..self.n {
            // SAFETY: i < n.
            let got = unsafe { (*self.a.add(i), *self.b.add(i)) };
            let want = self.op.after(passes, start(i));
            assert_eq!(got, want, "{} wrong at {i} after {passes} passes", self.op);
        }
    }
}

/// Cache sizes of cpu0 as stream-top's engine sizes its working sets from them.
/// What `a`, `b`, `c` hold at `i` before the first pass (small integers: every op is exact).
fn start(i: usize) -> (f64, f64, f64) {
    (-1.0, (i % 1009) as f64, (i % 7) as f64 + 1.0)
}

struct Caches {
    /// One CPU's share of its L1d and L2, bytes.
    l1_share: u64,
    l2_share: u64,
    /// All last-level cache, bytes.
    l3_total: u64,
}

impl Caches {
    fn read() -> Caches {
        let mut c = Caches {
            l1_share: 32 << 10,
            l2_share: 512 << 10,
            l3_total: 32 << 20,
        };
        let base = "/sys/devices/system/cpu/cpu0/cache";
        let online = cpu_count("/sys/devices/system/cpu/online").max(1);
        for idx in 0..8 {
            let read = |f: &str| std::fs::read_to_string(format!("{base}/index{idx}/{f}"));
            let (Ok(level), Ok(kind), Ok(size)) = (read("level"), read("type"), read("size"))
            else {
                continue;
            };
            if kind.trim() == "Instruction" {
                continue;
            }
            let size = parse_size(size.trim()).unwrap_or(0);
            let sharing = read("shared_cpu_list")
                .map(|l| cpu_list_len(l.trim()))
                .unwrap_or(1)
                .max(1) as u64;
            match level.trim() {
                "1" => c.l1_share = size / sharing,
                "2" => c.l2_share = size / sharing,
                // Instances of the last level: online CPUs / CPUs per instance.
                "3" => c.l3_total = size * (online as u64).div_ceil(sharing),
                _ => {}
            }
        }
        c
    }

    /// Bytes per array for a set name or an explicit total of three arrays.
    fn per_array(&self, set: &str) -> Result<u64, String> {
        let round = |b: u64| b / 128 * 128;
        match set {
            "l1" => Ok(round(self.l1_share / 2 / 3)),
            "l2" => Ok(round(self.l2_share / 2 / 3)),
            "dram" => Ok(4 * self.l3_total),
            total => {
                let t = parse_size(total).ok_or_else(|| {
                    format!("'{total}' is not l1, l2, dram or a size like 24kB or 384MiB")
                })?;
                let per = round(t / 3);
                if per == 0 {
                    return Err(format!("'{total}' is smaller than 3 × 128 bytes"));
                }
                Ok(per)
            }
        }
    }
}

/// `32K`, `24kB` (1000), `256KiB` (1024), `384MiB`, `1GB`, plain bytes.
fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s.find(|ch: char| !ch.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let num: u64 = num.parse().ok()?;
    let mult = match unit.trim() {
        "" | "B" => 1,
        "K" | "KiB" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        "kB" | "KB" => 1000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        _ => return None,
    };
    Some(num * mult)
}

fn cpu_list_len(list: &str) -> usize {
    list.split(',')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('-') {
            Some((a, b)) => b.parse::<usize>().unwrap_or(0) - a.parse::<usize>().unwrap_or(0) + 1,
            None => 1,
        })
        .sum()
}

fn cpu_count(path: &str) -> usize {
    std::fs::read_to_string(path)
        .map(|s| cpu_list_len(s.trim()))
        .unwrap_or(1)
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn pin(cpu: usize) {
    if let Err(e) = pin_current_thread(cpu) {
        eprintln!("warning: could not pin to cpu {cpu}: {e}");
    }
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.is_empty() {
        f64::NAN
    } else if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

fn best(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NAN, f64::max)
}

fn size_text(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{:.2} KiB", bytes as f64 / 1024.0)
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
