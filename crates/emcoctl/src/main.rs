//! The `emcoctl` binary: parses arguments, finds the API, runs one command. Exit codes: 0 every request succeeded,
//! 1 a request failed or got no answer, 2 the command line or a file is wrong.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use emcoctl::commands::{self, Options, Verb};

/// EMCO's command-line client: apply, get, update and delete emcoctl resource files against the EMCO API.
#[derive(Debug, Parser)]
#[command(name = "emcoctl", version, about)]
struct Args {
    /// The API (e.g. http://localhost:9015); else EMCO_URL, else the config file.
    #[arg(long, global = true)]
    emco: Option<String>,
    /// emcoctl configuration file (default: ~/.emco.yaml when it exists).
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// POST each document to its anchor (or an empty POST to ANCHOR, e.g. …/approve).
    Apply(FileArgs),
    /// GET each document's resource (or ANCHOR).
    Get(FileArgs),
    /// PUT each document to its resource.
    Update(FileArgs),
    /// DELETE each document's resource, last document first (an instantiate anchor becomes terminate).
    Delete(FileArgs),
}

#[derive(Debug, clap::Args)]
struct FileArgs {
    /// Resource file (repeatable; multi-document YAML).
    #[arg(short = 'f', long = "file")]
    files: Vec<PathBuf>,
    /// Values for the files, which are then Go templates.
    #[arg(short = 'v', long = "values")]
    values: Option<PathBuf>,
    /// Stop at the first request that fails.
    #[arg(short = 's', long = "stop-on-failure")]
    stop_on_failure: bool,
    /// Seconds to wait after a 202 (accepted) answer.
    #[arg(short = 'w', long = "wait", default_value_t = 0)]
    wait: u64,
    /// An anchor to call instead of files (e.g. projects/p/composite-apps/ca/v1/deployment-intent-groups/d/approve).
    anchor: Option<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let default_config = std::env::var_os("HOME")
        .map(|home| PathBuf::from(home).join(".emco.yaml"))
        .filter(|path| path.is_file());
    let config = args.config.clone().or(default_config);
    let environment = std::env::var("EMCO_URL").ok();
    let target =
        match emcoctl::config::resolve(args.emco.as_deref(), environment.as_deref(), config.as_deref()) {
            Ok(target) => target,
            Err(err) => return usage(&err.to_string()),
        };
    let client = match emcoctl::client::EmcoClient::new(&target) {
        Ok(client) => client,
        Err(err) => return usage(&err.to_string()),
    };
    let (verb, file_args) = match args.command {
        Command::Apply(a) => (Verb::Apply, a),
        Command::Get(a) => (Verb::Get, a),
        Command::Update(a) => (Verb::Update, a),
        Command::Delete(a) => (Verb::Delete, a),
    };
    if file_args.files.is_empty() == file_args.anchor.is_none() {
        return usage("give either -f FILE (one or more) or an ANCHOR");
    }
    let values = match file_args
        .values
        .as_deref()
        .map(emcoctl::documents::read_values)
        .transpose()
    {
        Ok(values) => values,
        Err(err) => return usage(&err.to_string()),
    };
    let mut documents = Vec::new();
    for file in &file_args.files {
        match emcoctl::documents::read_documents(file, values.as_ref()) {
            Ok(found) => documents.extend(found),
            Err(err) => return usage(&err.to_string()),
        }
    }
    let options = Options {
        stop_on_failure: file_args.stop_on_failure,
        wait_after_accepted: Duration::from_secs(file_args.wait),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("emcoctl: {err}");
            return ExitCode::FAILURE;
        }
    };
    let mut out = std::io::stdout().lock();
    let result = runtime.block_on(async {
        match &file_args.anchor {
            Some(anchor) => commands::run_anchor(&client, verb, anchor, &mut out).await,
            None => commands::run(&client, verb, &documents, &options, &mut out).await,
        }
    });
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(err @ commands::CommandError::File { .. }) => usage(&err.to_string()),
        Err(err) => {
            eprintln!("emcoctl: {err}");
            ExitCode::FAILURE
        }
    }
}

fn usage(message: &str) -> ExitCode {
    eprintln!("emcoctl: {message}");
    ExitCode::from(2)
}
