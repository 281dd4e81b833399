//! `kubesim`: serve simulated Kubernetes clusters on loopback, one port each, and write a kubeconfig per cluster.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = kubesim::cli::Args::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    match kubesim::cli::run(args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("kubesim: {err}");
            std::process::ExitCode::FAILURE
        }
    }
}
