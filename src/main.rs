use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    ignore_file_size_signal();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(cli) = ctxkeep::cli::HookCli::parse_fast(&args) {
        return ExitCode::from(ctxkeep::run(cli));
    }
    match ctxkeep::cli::Cli::try_parse_from(&args) {
        Ok(cli) => ExitCode::from(ctxkeep::run(cli)),
        Err(err) => ExitCode::from(ctxkeep::usage_error(&err)),
    }
}

/// A write past the file-size limit (`ulimit -f`) raises SIGXFSZ, whose
/// default kills the process mid-write, silently, leaving its temp file.
/// Ignored, the write fails with EFBIG instead: an I/O error (exit 74) that
/// removes the temp file and leaves the original as it was.
fn ignore_file_size_signal() {
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any thread starts; setting
    // a signal's disposition to SIG_IGN installs no handler code.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

/// The only two functions ctxkeep takes from the C math library, defined here from the `libm`
/// crate instead: `pow` (minijinja's `**`) and `log2` (the secret scanner's entropy). Without
/// them the dynamic loader no longer opens, maps and binds `libm.so.6` at every start, which is
/// about 0.07 ms of each hook event (docs/performance.md, "One library less at every start");
/// `bench/gate` fails if the binary needs it again.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod math {
    #[unsafe(no_mangle)]
    pub(crate) extern "C" fn pow(x: f64, y: f64) -> f64 {
        libm::pow(x, y)
    }

    #[unsafe(no_mangle)]
    pub(crate) extern "C" fn log2(x: f64) -> f64 {
        libm::log2(x)
    }
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    // The test binary resolves `f64::log2` and `powf` to the definitions above too, so the
    // expected values are exact ones, not the C library's.
    #[test]
    fn the_math_functions_defined_here_answer_as_the_c_library_does() {
        assert_eq!(super::math::log2(8.0), 3.0);
        assert_eq!(super::math::log2(0.5), -1.0);
        assert_eq!(super::math::log2(10.0), std::f64::consts::LOG2_10);
        assert!(super::math::log2(-1.0).is_nan());
        assert_eq!(super::math::pow(2.0, 10.0), 1024.0);
        assert_eq!(super::math::pow(10.0, 2.0), 100.0);
        assert_eq!(super::math::pow(9.0, 0.5), 3.0);
        assert_eq!(super::math::pow(2.0, -1.0), 0.5);
        assert_eq!(1024f64.log2(), 10.0);
    }
}
