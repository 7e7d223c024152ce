//! Times two commands in turn for `bench/run`: the baseline, then the command
//! measured, then the baseline again, and so on, so that a machine whose speed
//! drifts during the measurement slows both sides of a pair alike.
//!
//! `bench_pairs RUNS [--prepare SH] BASELINE... --vs COMMAND...`
//!
//! Each side is run without a shell (its words as given), its output thrown
//! away; `--prepare` is run through `sh -c` before each run of COMMAND,
//! untimed (the transcript growing between two hook events). Three pairs are
//! run first and not counted. Prints one line: the baseline's median, the
//! command's median (milliseconds, wall clock from the start to the reaped
//! exit), the median of the pairs' ratios, the lowest and highest ratio, and
//! the median of the pairs' differences (milliseconds).
use std::process::{Command, Stdio};
use std::time::Instant;

const WARMUP: usize = 3;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(Plan {
        runs,
        prepare,
        baseline,
        measured,
    }) = parse(&args)
    else {
        eprintln!("usage: bench_pairs RUNS [--prepare SH] BASELINE... --vs COMMAND...");
        std::process::exit(2);
    };
    let mut base_ms = Vec::with_capacity(runs);
    let mut ms = Vec::with_capacity(runs);
    let mut ratios = Vec::with_capacity(runs);
    let mut differences = Vec::with_capacity(runs);
    for i in 0..WARMUP + runs {
        let b = time(baseline);
        if let Some(sh) = prepare {
            let ok = Command::new("sh").args(["-c", sh]).status();
            if !ok.is_ok_and(|s| s.success()) {
                eprintln!("bench_pairs: the prepare command failed: {sh}");
                std::process::exit(1);
            }
        }
        let m = time(measured);
        if i >= WARMUP {
            base_ms.push(b);
            ms.push(m);
            ratios.push(m / b);
            differences.push(m - b);
        }
    }
    let (lo, hi) = ratios
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), r| (lo.min(*r), hi.max(*r)));
    println!(
        "{:.3} {:.3} {:.3} {:.3} {:.3} {:.3}",
        median(&mut base_ms),
        median(&mut ms),
        median(&mut ratios),
        lo,
        hi,
        median(&mut differences)
    );
}

/// What the command line asks for.
struct Plan<'a> {
    runs: usize,
    /// Run through `sh -c` before each run of the measured command, untimed.
    prepare: Option<&'a str>,
    baseline: &'a [String],
    measured: &'a [String],
}

fn parse(args: &[String]) -> Option<Plan<'_>> {
    let runs = args.first()?.parse::<usize>().ok().filter(|n| *n > 0)?;
    let mut rest = &args[1..];
    let mut prepare = None;
    if rest.first().map(String::as_str) == Some("--prepare") {
        prepare = Some(rest.get(1)?.as_str());
        rest = &rest[2..];
    }
    let vs = rest.iter().position(|a| a == "--vs")?;
    let (baseline, measured) = (&rest[..vs], &rest[vs + 1..]);
    (!baseline.is_empty() && !measured.is_empty()).then_some(Plan {
        runs,
        prepare,
        baseline,
        measured,
    })
}

/// One run's wall time in milliseconds; a command that fails stops the measurement.
fn time(words: &[String]) -> f64 {
    let start = Instant::now();
    let status = Command::new(&words[0])
        .args(&words[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let elapsed = start.elapsed().as_secs_f64() * 1000.0;
    match status {
        Ok(s) if s.success() => elapsed,
        Ok(s) => {
            eprintln!("bench_pairs: {} exited with {s}", words.join(" "));
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("bench_pairs: cannot start {}: {e}", words[0]);
            std::process::exit(1);
        }
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}
