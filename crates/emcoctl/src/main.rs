//! The `emcoctl` binary: parses arguments, finds the API, runs one command. Exit codes: 0 every request succeeded,
//! 1 a request failed or got no answer, 2 the command line or a file is wrong.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{CommandFactory, Parser, Subcommand};
use emcoctl::commands::{self, Options, Verb};

/// EMCO's command-line client: apply, get, update and delete emcoctl resource files against the EMCO API.
#[derive(Debug, Parser)]
#[command(name = "emcoctl", version, about)]
struct Args {
    /// The API (e.g. http://localhost:9015 or https://emco.example:9015); else EMCO_URL, else the config file.
    #[arg(long, global = true)]
    emco: Option<String>,
    /// PEM file of the CA certificates to trust for an https:// API, instead of the system's CA certificates
    /// (e.g. the CA that signed emco's --tls-cert-file).
    #[arg(long, global = true, env = "EMCO_CA_FILE", value_name = "FILE")]
    ca_file: Option<PathBuf>,
    /// emcoctl configuration file (default: ~/.emco.yaml when it exists).
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    /// Bearer token for an API that requires one; else EMCO_TOKEN, else the config file's `token` (both keep it
    /// out of the process list, which a flag is not).
    #[arg(long, global = true, value_name = "TOKEN")]
    token: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// POST each document to its anchor (or an empty POST to ANCHOR, e.g. …/approve).
    Apply(FileArgs),
    /// GET each document's resource (or ANCHOR); `get combined-status DIG…` prints each DIG's combined status
    /// (its status collectors' tables).
    Get(FileArgs),
    /// PUT each document to its resource; given a deployment intent group instead of files (its path, URL, or
    /// P/CA/V/DIG), POST its /update: a new revision from its intents as they are now.
    Update(FileArgs),
    /// Roll a deployment intent group back to an earlier revision of its current instantiation (a new revision
    /// with that one's content).
    Rollback(RollbackArgs),
    /// The revisions of a deployment intent group: when each was made and how its context stands.
    History(DigArgs),
    /// Migrate a deployment intent group to another DIG of its composite app (e.g. at a new version), which must be
    /// Approved: the target takes over its objects in place.
    Migrate(MigrateArgs),
    /// Resume a deployment intent group's progressive rollout that paused past its failure threshold: the
    /// failures so far are accepted and the next batch starts.
    Resume(DigArgs),
    /// DELETE each document's resource, last document first (an instantiate anchor becomes terminate).
    Delete(FileArgs),
    /// The status of a deployment intent group, a cluster's network intents or a logical cloud: a table (apps ×
    /// clusters × resources), or the API's answer.
    Status(StatusArgs),
    /// Render a chart offline exactly as emco would apply it (no API needed).
    Template(TemplateArgs),
    /// The health of every Kubernetes object in a file (no API needed): exit 0 all Ready, 1 some not, 2 the file
    /// is unreadable or not Kubernetes objects.
    Readiness(ReadinessArgs),
    /// Print a shell completion script: `source <(emcoctl completion bash)`, or save it where your shell loads
    /// completions from (zsh: a file `_emcoctl` on $fpath; fish: ~/.config/fish/completions/emcoctl.fish).
    Completion(CompletionArgs),
    /// Print emcoctl's man page (roff), e.g. `emcoctl man | man -l -`; with --dir, write emcoctl.1 and one page
    /// per command (emcoctl-status.1, …) into that directory.
    Man(ManArgs),
}

#[derive(Debug, clap::Args)]
struct CompletionArgs {
    /// The shell.
    shell: clap_complete::Shell,
}

#[derive(Debug, clap::Args)]
struct ManArgs {
    /// Write every page into this directory (created when missing) instead of printing the main one.
    #[arg(long)]
    dir: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct RollbackArgs {
    /// The deployment intent group: projects/P/composite-apps/CA/V/deployment-intent-groups/DIG, its URL, or
    /// P/CA/V/DIG.
    dig: String,
    /// The revision to roll back to (see `emcoctl history`).
    #[arg(long)]
    revision: u64,
}

#[derive(Debug, clap::Args)]
struct MigrateArgs {
    /// The deployment intent group: projects/P/composite-apps/CA/V/deployment-intent-groups/DIG, its URL, or
    /// P/CA/V/DIG.
    dig: String,
    /// The composite app version of the target DIG.
    #[arg(long)]
    target_version: String,
    /// The target DIG.
    #[arg(long)]
    target_dig: String,
}

#[derive(Debug, clap::Args)]
struct DigArgs {
    /// The deployment intent group: projects/P/composite-apps/CA/V/deployment-intent-groups/DIG, its URL, or
    /// P/CA/V/DIG.
    dig: String,
}

#[derive(Debug, clap::Args)]
struct ReadinessArgs {
    /// A YAML (multi-document) or JSON file of objects, e.g. from `kubectl get … -o yaml`; `List`s expand.
    #[arg(short = 'f', long = "file")]
    file: PathBuf,
    /// Output: a table or a JSON array of {kind, name, namespace, status, message}.
    #[arg(short = 'o', long = "output", default_value = "table", value_parser = ["table", "json"])]
    output: String,
}

#[derive(Debug, clap::Args)]
struct TemplateArgs {
    /// A chart directory or .tgz (offline: no API needed). Not with --dig.
    #[arg(required_unless_present = "dig", conflicts_with = "dig")]
    chart: Option<PathBuf>,
    /// Instead of a chart: a deployment intent group (projects/P/composite-apps/CA/V/deployment-intent-groups/DIG,
    /// its URL, or P/CA/V/DIG) — each cluster's objects as instantiating or updating it would apply them now, after
    /// its action controllers ran (asks the API; nothing is stored).
    #[arg(long, value_name = "DIG")]
    dig: Option<String>,
    /// With --dig: only this cluster (provider+cluster).
    #[arg(long, requires = "dig")]
    cluster: Option<String>,
    /// With --dig: only this app.
    #[arg(long, requires = "dig")]
    app: Option<String>,
    /// With --dig: list what differs from what is applied now (+ added, ~ changed, - removed); exit 1 when
    /// something does.
    #[arg(long, requires = "dig")]
    diff: bool,
    /// Values file (repeatable; later files win).
    #[arg(short = 'f', long = "values")]
    values: Vec<PathBuf>,
    /// key=value override (repeatable; applied after the files).
    #[arg(long)]
    set: Vec<String>,
    /// Release name (.Release.Name; emco uses the DIG's version).
    #[arg(long, default_value = "r1")]
    name: String,
    /// Release namespace.
    #[arg(long, default_value = "default")]
    namespace: String,
    /// Output: a YAML stream or a JSON list of objects.
    #[arg(short = 'o', long = "output", default_value = "yaml", value_parser = ["yaml", "json"])]
    output: String,
    /// Leave out the CRDs of crds/ folders (as `helm template` does without --include-crds).
    #[arg(long)]
    skip_crds: bool,
    /// Print Helm test hooks too (emco never applies them).
    #[arg(long)]
    include_tests: bool,
    /// Kubernetes version for .Capabilities.KubeVersion (as `helm template --kube-version`; emco uses each target
    /// cluster's own), e.g. 1.23 or v1.23.17.
    #[arg(long, value_name = "VERSION")]
    kube_version: Option<String>,
    /// Extra API versions for .Capabilities.APIVersions (as `helm template -a`: comma-separated or repeated,
    /// `group/version` or `group/version/Kind`).
    #[arg(short = 'a', long, value_delimiter = ',')]
    api_versions: Vec<String>,
}

#[derive(Debug, clap::Args)]
struct StatusArgs {
    /// What: projects/{p}/composite-apps/{ca}/{v}/deployment-intent-groups/{dig},
    /// cluster-providers/{p}/clusters/{c} (network intents) or projects/{p}/logical-clouds/{lc}.
    dig: String,
    /// Only this app (repeatable).
    #[arg(long)]
    app: Vec<String>,
    /// Only this cluster, provider+cluster (repeatable).
    #[arg(long)]
    cluster: Vec<String>,
    /// Only this resource name (repeatable).
    #[arg(long)]
    resource: Vec<String>,
    /// With -o json|yaml: type=rsync|cluster.
    #[arg(long = "type")]
    kind: Option<String>,
    /// With -o json|yaml: status=ready|deployed (EMCO 22.x shape).
    #[arg(long)]
    status: Option<String>,
    /// With -o json|yaml: output=summary|all|detail.
    #[arg(long)]
    output: Option<String>,
    /// How to print: table, json or yaml.
    #[arg(short = 'o', long = "format", default_value = "table", value_parser = ["table", "json", "yaml"])]
    format: String,
    /// Follow the status as it changes (the server's event stream): on a terminal the table is redrawn in place
    /// under a progress line (`412/1000 clusters ready`); piped, one line per change.
    #[arg(long)]
    watch: bool,
    /// With --watch: exit 0 once this is reached: ready, instantiated, terminated (or any status or readiness
    /// word, e.g. NotReady); exit 1 early on a failure state (InstantiateFailed, TerminateFailed, a failed
    /// readiness while waiting for ready).
    #[arg(long)]
    until: Option<String>,
    /// With --watch: give up (exit 1) after this long (`5m`, `90s`; a bare number is seconds).
    #[arg(long, default_value = "300", value_parser = emcoctl::config::parse_duration)]
    timeout: Duration,
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
    /// With `get combined-status`: the deployment intent groups (projects/P/composite-apps/CA/V/deployment-intent-groups/DIG).
    #[arg(hide = true)]
    targets: Vec<String>,
}

/// `emcoctl man`: the main page to stdout, or every page into a directory.
fn man(args: &ManArgs) -> ExitCode {
    let command = Args::command();
    let written = match &args.dir {
        Some(dir) => std::fs::create_dir_all(dir).and_then(|()| clap_mangen::generate_to(command, dir)),
        None => clap_mangen::Man::new(command).render(&mut std::io::stdout()),
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("emcoctl: writing the man page failed: {err}");
            ExitCode::from(1)
        }
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Command::Template(template_args) = &args.command
        && template_args.dig.is_none()
    {
        return template(template_args);
    }
    if let Command::Readiness(readiness_args) = &args.command {
        return readiness(readiness_args);
    }
    if let Command::Completion(completion_args) = &args.command {
        let mut command = Args::command();
        clap_complete::generate(
            completion_args.shell,
            &mut command,
            "emcoctl",
            &mut std::io::stdout(),
        );
        return ExitCode::SUCCESS;
    }
    if let Command::Man(man_args) = &args.command {
        return man(man_args);
    }
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
    let environment_token = std::env::var("EMCO_TOKEN").ok();
    let token = match emcoctl::config::resolve_token(
        args.token.as_deref(),
        environment_token.as_deref(),
        config.as_deref(),
    ) {
        Ok(token) => token,
        Err(err) => return usage(&err.to_string()),
    };
    let client =
        match emcoctl::client::EmcoClient::with_ca_file(&target, args.ca_file.as_deref()).and_then(|client| {
            match &token {
                Some(token) => client.with_token(token),
                None => Ok(client),
            }
        }) {
            Ok(client) => client,
            Err(err) => return usage(&err.to_string()),
        };
    let (verb, file_args) = match args.command {
        Command::Status(status_args) => return status(&client, &status_args),
        Command::Rollback(rollback_args) => {
            return dig_command(
                &client,
                DigCommand::Rollback(rollback_args.dig, rollback_args.revision),
            );
        }
        Command::History(history_args) => return dig_command(&client, DigCommand::History(history_args.dig)),
        Command::Resume(resume_args) => return dig_command(&client, DigCommand::Resume(resume_args.dig)),
        Command::Migrate(migrate_args) => {
            return dig_command(
                &client,
                DigCommand::Migrate(
                    migrate_args.dig,
                    migrate_args.target_version,
                    migrate_args.target_dig,
                ),
            );
        }
        Command::Update(a)
            if a.files.is_empty()
                && a.anchor
                    .as_deref()
                    .is_some_and(|anchor| commands::dig_path(anchor).is_ok()) =>
        {
            return dig_command(&client, DigCommand::Update(a.anchor.unwrap_or_default()));
        }
        Command::Template(template_args) if template_args.dig.is_some() => {
            return preview(&client, &template_args);
        }
        Command::Template(template_args) => return template(&template_args),
        Command::Readiness(readiness_args) => return readiness(&readiness_args),
        Command::Completion(_) | Command::Man(_) => return ExitCode::SUCCESS,
        Command::Apply(a) => (Verb::Apply, a),
        Command::Get(a) if a.files.is_empty() && a.anchor.as_deref() == Some("combined-status") => {
            return combined_status(&client, &a.targets);
        }
        Command::Get(a) => (Verb::Get, a),
        Command::Update(a) => (Verb::Update, a),
        Command::Delete(a) => (Verb::Delete, a),
    };
    if !file_args.targets.is_empty() {
        return usage("give one ANCHOR (more names are only for `get combined-status DIG…`)");
    }
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
    // A progress bar on stderr for files of several documents; indicatif draws nothing when stderr is not a terminal.
    let progress = (documents.len() > 1).then(|| {
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(documents.len() as u64),
            indicatif::ProgressDrawTarget::stderr(),
        );
        if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {wide_msg}") {
            bar.set_style(style);
        }
        bar
    });
    let options = Options {
        stop_on_failure: file_args.stop_on_failure,
        wait_after_accepted: Duration::from_secs(file_args.wait),
        progress: progress.clone(),
    };
    let Some(runtime) = runtime() else {
        return ExitCode::FAILURE;
    };
    let mut out = std::io::stdout().lock();
    let result = runtime.block_on(async {
        match &file_args.anchor {
            Some(anchor) => commands::run_anchor(&client, verb, anchor, &mut out).await,
            None => commands::run(&client, verb, &documents, &options, &mut out).await,
        }
    });
    if let Some(progress) = progress {
        progress.finish_and_clear();
    }
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

/// The single-threaded runtime a command's requests run on (`None`, said on stderr, when it cannot be built).
fn runtime() -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => Some(runtime),
        Err(err) => {
            eprintln!("emcoctl: {err}");
            None
        }
    }
}

/// A command on one deployment intent group.
enum DigCommand {
    /// POST its /update.
    Update(String),
    /// POST its /rollback to a revision.
    Rollback(String, u64),
    /// Print its revisions.
    History(String),
    /// POST its /resume.
    Resume(String),
    /// POST its /migrate to (version, DIG).
    Migrate(String, String, String),
}

/// Runs a DIG command: exit 0 when it succeeded, 1 when the API refused it or did not answer, 2 when the DIG is
/// not named right.
fn dig_command(client: &emcoctl::client::EmcoClient, command: DigCommand) -> ExitCode {
    let Some(runtime) = runtime() else {
        return ExitCode::FAILURE;
    };
    let mut out = std::io::stdout().lock();
    let result = runtime.block_on(async {
        match &command {
            DigCommand::Update(dig) => commands::update_dig(client, dig, &mut out).await,
            DigCommand::Rollback(dig, revision) => {
                commands::rollback_dig(client, dig, *revision, &mut out).await
            }
            DigCommand::History(dig) => commands::history(client, dig, &mut out).await,
            DigCommand::Resume(dig) => commands::resume_dig(client, dig, &mut out).await,
            DigCommand::Migrate(dig, version, target) => {
                commands::migrate_dig(client, dig, version, target, &mut out).await
            }
        }
    });
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(err @ commands::CommandError::NotADig(_)) => usage(&err.to_string()),
        Err(err) => {
            eprintln!("emcoctl: {err}");
            ExitCode::FAILURE
        }
    }
}

/// `get combined-status DIG…`: each DIG's tables; exit 1 when one could not be read.
fn combined_status(client: &emcoctl::client::EmcoClient, digs: &[String]) -> ExitCode {
    if digs.is_empty() {
        return usage(
            "get combined-status needs a deployment intent group (projects/P/composite-apps/CA/V/deployment-intent-groups/DIG)",
        );
    }
    let Some(runtime) = runtime() else {
        return ExitCode::FAILURE;
    };
    let mut failed = false;
    let mut out = std::io::stdout().lock();
    for dig in digs {
        match runtime.block_on(emcoctl::combined::fetch(client, dig, "")) {
            Ok(answer) => {
                // A closed pipe (`| head`) ends the output; it is not an error of the command.
                if write!(out, "{}", emcoctl::combined::render(dig, &answer)).is_err() {
                    return ExitCode::SUCCESS;
                }
            }
            Err(err) => {
                eprintln!("emcoctl: {err}");
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// `template --dig`: the DIG's preview as YAML, or with --diff what differs (exit 1 when something does).
fn preview(client: &emcoctl::client::EmcoClient, args: &TemplateArgs) -> ExitCode {
    use emcoctl::preview::{PreviewError, fetch, render, render_diff};
    let Some(runtime) = runtime() else {
        return ExitCode::FAILURE;
    };
    let dig = args.dig.as_deref().unwrap_or_default();
    let answer = match runtime.block_on(fetch(
        client,
        dig,
        args.cluster.as_deref(),
        args.app.as_deref(),
        args.diff,
    )) {
        Ok(answer) => answer,
        Err(PreviewError::Dig(err)) => return usage(&err.to_string()),
        Err(err) => {
            eprintln!("emcoctl: {err}");
            return ExitCode::FAILURE;
        }
    };
    let (text, differs) = if args.diff {
        render_diff(&answer)
    } else {
        (render(&answer), false)
    };
    // A closed pipe (`| head`) ends the output; it is not an error of the command.
    let _ = write!(std::io::stdout().lock(), "{text}");
    if differs {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn template(args: &TemplateArgs) -> ExitCode {
    use emcoctl::template::{TemplateError, TemplateRequest, run};
    let Some(chart) = args.chart.clone() else {
        return usage("give a chart, or --dig");
    };
    let request = TemplateRequest {
        chart,
        values: args.values.clone(),
        set: args.set.clone(),
        name: args.name.clone(),
        namespace: args.namespace.clone(),
        output: args.output.clone(),
        skip_crds: args.skip_crds,
        include_tests: args.include_tests,
        kube_version: args.kube_version.clone(),
        api_versions: args.api_versions.clone(),
    };
    match run(&request, &mut std::io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(TemplateError::Input(message)) => usage(&message),
        // A closed pipe (`| head`) ends the output; it is not an error of the command.
        Err(TemplateError::Output(err)) if err.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("emcoctl: {err}");
            ExitCode::FAILURE
        }
    }
}

fn readiness(args: &ReadinessArgs) -> ExitCode {
    use emcoctl::readiness::{Format, run};
    let format = if args.output == "json" {
        Format::Json
    } else {
        Format::Table
    };
    match run(&args.file, format, &mut std::io::stdout().lock()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(err) => usage(&err.to_string()),
    }
}

fn usage(message: &str) -> ExitCode {
    eprintln!("emcoctl: {message}");
    ExitCode::from(2)
}

fn query_string(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(key, value)| {
            format!(
                "{key}={}",
                value
                    .replace('%', "%25")
                    .replace('+', "%2B")
                    .replace('&', "%26")
                    .replace(' ', "%20")
            )
        })
        .collect::<Vec<_>>()
        .join("&")
}

fn status(client: &emcoctl::client::EmcoClient, args: &StatusArgs) -> ExitCode {
    use emcoctl::status;
    use std::io::IsTerminal as _;
    let mut filters: Vec<(&str, &str)> = Vec::new();
    filters.extend(args.app.iter().map(|a| ("app", a.as_str())));
    filters.extend(args.cluster.iter().map(|c| ("cluster", c.as_str())));
    filters.extend(args.resource.iter().map(|r| ("resource", r.as_str())));
    let Some(runtime) = runtime() else {
        return ExitCode::FAILURE;
    };
    if args.format != "table" {
        let mut pairs = filters.clone();
        pairs.extend(args.kind.iter().map(|t| ("type", t.as_str())));
        pairs.extend(args.status.iter().map(|s| ("status", s.as_str())));
        pairs.extend(args.output.iter().map(|o| ("output", o.as_str())));
        return match runtime.block_on(status::query(client, &args.dig, &query_string(&pairs))) {
            Ok(answer) => {
                let text = if args.format == "json" {
                    serde_json::to_string_pretty(&answer).unwrap_or_default()
                } else {
                    serde_saphyr::to_string(&answer).unwrap_or_default()
                };
                // A closed pipe (`| head`) ends the output; it is not an error of the command.
                let _ = writeln!(std::io::stdout().lock(), "{}", text.trim_end());
                ExitCode::SUCCESS
            }
            Err(err) => {
                eprintln!("emcoctl: {err}");
                ExitCode::FAILURE
            }
        };
    }
    let filters = query_string(&filters);
    if args.watch {
        let options = status::WatchOptions {
            until: args.until.clone(),
            timeout: args.timeout,
            terminal: std::io::stdout().is_terminal(),
        };
        let mut out = std::io::stdout();
        return match runtime.block_on(status::watch(client, &args.dig, &filters, &options, &mut out)) {
            Ok(status::WatchEnd::Reached) => ExitCode::SUCCESS,
            Ok(status::WatchEnd::Failed(failure)) => {
                eprintln!(
                    "emcoctl: failed before {}: {failure}",
                    args.until.as_deref().unwrap_or("done")
                );
                ExitCode::FAILURE
            }
            Ok(status::WatchEnd::TimedOut) => {
                eprintln!(
                    "emcoctl: not {} within {} s",
                    args.until.as_deref().unwrap_or("done"),
                    args.timeout.as_secs()
                );
                ExitCode::FAILURE
            }
            // The reader went away (`| head`): nothing more to show.
            Err(status::StatusError::Output(_)) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("emcoctl: {err}");
                ExitCode::FAILURE
            }
        };
    }
    let answers = match runtime.block_on(status::fetch(client, &args.dig, &filters)) {
        Ok(answers) => answers,
        Err(err) => {
            eprintln!("emcoctl: {err}");
            return ExitCode::FAILURE;
        }
    };
    let text = format!("{}\n{}", status::summary_line(&answers), status::view(&answers));
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) ends the output; it is not an error of the command.
    let _ = writeln!(out, "{text}").and_then(|()| out.flush());
    ExitCode::SUCCESS
}
