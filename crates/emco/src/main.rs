//! The `emco` binary: the whole control plane in one process. Thin on purpose: it parses arguments, sets up
//! logging and calls [`emco::run`].

use clap::Parser;

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
