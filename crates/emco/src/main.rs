//! The `emco` binary: the whole control plane in one process. Thin on purpose: it parses arguments, sets up
//! logging and calls [`emco::run`].

use clap::Parser;

/// mimalloc instead of glibc's malloc: allocation-heavy work (applying to thousands of clusters, JSON) runs
/// faster and memory freed after a burst goes back to the system (see BENCHMARKS.md, "Scale harness"). Without the
/// `mimalloc` feature the system's malloc serves, for heap profilers.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let args = emco::Args::parse();
    emco::init_tracing(&args.command);
    match emco::run(args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("emco: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
