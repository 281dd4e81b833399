//! GitOps clusters (EMCO's Flux v2 mode): a cluster whose body has `spec.gitOps` is never dialled. An app's batch
//! on it is one commit to the cluster's repository, in EMCO's layout — the app's objects (and its
//! ResourceBundleState, which the cluster's monitor fills) under `clusters/{cluster}/context/{id}/app/{app}/`, one
//! file `{name}+{Kind}.yaml` each, and beside them the Flux objects that make the cluster's Flux apply the context's
//! folder: the Kustomization `kust{id}` (and, for a logical cloud of level 1, the GitRepository `{id}` in its
//! namespace, applied as its service account). `{id}` is the first context of an update chain, so an update rewrites
//! the same folder: only what changed changes, and Flux prunes what left it. A delete removes the app's folder, and
//! the context's folder and Flux objects with the last app. A level-1 logical cloud's own objects come here as the
//! lifecycle built them for a GitOps cluster (its service account `{lc}-sa` in place of the user's certificate
//! request); the bundle carries the status configs of the app's kinds. The cluster's resources are Applied
//! (Deleted) once the commit is pushed; a Git server that is down or refuses the credentials is retried with the reason, as an
//! unreachable cluster is. Helm hooks are not run on a GitOps cluster (its agent applies objects, not hooks): an app
//! with install or delete hooks fails there, naming them. The settings come from the cluster's two sync objects, as
//! EMCO's rsync reads them: the reference object holds the repository (`url`, `branch`, `userName`, `gitToken`), the
//! resource object Flux's `timeOut`, `syncInterval` and `retryInterval` (seconds; 60 each by default).

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash as _, Hasher as _};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use emco_appcontext::{Catalog, ClusterRecord, Kind, ResourcePath};
use emco_git::{GitError, Limits, Mirror, Remote, Secret};
use emco_model::{Cluster, ClusterSyncObjects, ContextId, RsyncStatus};
use serde_json::{Value as Json, json};

use crate::apply::{Attempt, Direction, End, Results};
use crate::engine::Inner;
use crate::error::SyncError;
use crate::lock;

/// Flux's intervals for a cluster's Kustomizations, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FluxTimes {
    timeout: u64,
    sync_interval: u64,
    retry_interval: u64,
}

/// Where a GitOps cluster's resources and status are.
#[derive(Debug)]
pub(crate) struct GitTarget {
    /// The branch the cluster's Flux applies.
    pub(crate) resources: Arc<Mirror>,
    /// The repository whose branch named after the cluster its monitor commits status to.
    pub(crate) status: Arc<StatusRepository>,
    url: String,
    branch: String,
    flux: FluxTimes,
}

/// What names the mirror of a repository's every branch (its status branches) among its branches' mirrors: `*` is
/// in no branch name.
const ALL_BRANCHES: &str = "*";

/// Branch name → head commit, as one fetch answered them.
type Heads = Arc<BTreeMap<String, String>>;

/// The status branches of one repository, fetched together: one exchange answers the heads of every cluster's
/// status branch there, so the clusters' status watchers cost the Git server a few fetches a second per
/// repository, however many clusters share it.
#[derive(Debug)]
pub(crate) struct StatusRepository {
    mirror: Arc<Mirror>,
    /// The heads as last fetched, and when.
    heads: tokio::sync::Mutex<Option<(tokio::time::Instant, Heads)>>,
}

impl StatusRepository {
    /// The branches' heads, fetched again when those known are older than `fresh_for`.
    async fn heads(&self, fresh_for: std::time::Duration) -> Result<Heads, GitError> {
        let mut heads = self.heads.lock().await;
        if let Some((at, known)) = heads.as_ref()
            && at.elapsed() < fresh_for
        {
            return Ok(known.clone());
        }
        let mirror = self.mirror.clone();
        let fetched = tokio::task::spawn_blocking(move || mirror.fetch_heads())
            .await
            .map_err(|err| GitError::Io(std::io::Error::other(err)))??;
        let fetched = Arc::new(fetched);
        *heads = Some((tokio::time::Instant::now(), fetched.clone()));
        Ok(fetched)
    }
}

/// The GitOps clusters' targets, kept while their settings stay the same, and one mirror per repository branch
/// (clusters sharing a repository share its mirror: one local copy, its operations one at a time).
#[derive(Debug)]
pub(crate) struct GitTargets {
    dir: PathBuf,
    /// Whether `dir` is this process's own folder under the temporary folder (removed when the targets go).
    temporary: bool,
    known: Mutex<HashMap<String, (String, Arc<GitTarget>)>>,
    /// Per mirror folder: the settings it was opened with, and the mirror.
    mirrors: Mutex<HashMap<PathBuf, (String, Arc<Mirror>)>>,
    /// Per repository (the folder of its mirror of every branch): its status branches, with that mirror.
    statuses: Mutex<HashMap<PathBuf, Arc<StatusRepository>>>,
    /// Held while targets are made, so that the batches and the watcher of a cluster asking at once open its
    /// mirrors once.
    opening: tokio::sync::Mutex<()>,
}

fn gitops_error(cluster: &str, message: impl std::fmt::Display) -> SyncError {
    SyncError::GitOps {
        cluster: cluster.to_string(),
        message: message.to_string(),
    }
}

/// A Git failure as rsync treats it: a transient one (the server down or refusing the credentials, others pushing,
/// a lock held a moment) retried, the rest failing the batch.
fn git_failure(cluster: &str, err: GitError) -> SyncError {
    if err.is_transient() {
        SyncError::GitServer(err.to_string())
    } else {
        gitops_error(cluster, err)
    }
}

impl GitTargets {
    /// Targets whose mirrors live under `dir` (none: a folder of this process under the temporary folder).
    pub(crate) fn new(dir: Option<PathBuf>) -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let temporary = dir.is_none();
        let dir = dir.unwrap_or_else(|| {
            let serial = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            std::env::temp_dir().join(format!("emco-git-{}-{serial}", std::process::id()))
        });
        Self {
            dir,
            temporary,
            known: Mutex::new(HashMap::new()),
            mirrors: Mutex::new(HashMap::new()),
            statuses: Mutex::new(HashMap::new()),
            opening: tokio::sync::Mutex::new(()),
        }
    }

    /// The target of `cluster` (`provider+cluster`) when it is a GitOps cluster; `None` for a cluster emco dials.
    pub(crate) async fn target(
        &self,
        catalog: &Catalog,
        cluster: &str,
    ) -> Result<Option<Arc<GitTarget>>, SyncError> {
        let Some((provider, name)) = cluster.split_once('+') else {
            return Ok(None);
        };
        let path = ResourcePath::new(Kind::Cluster, vec![provider.to_string(), name.to_string()]);
        let entry = match catalog.find(&path).await {
            Ok(Some(entry)) => entry,
            Ok(None) => return Ok(None),
            Err(err) => return Err(SyncError::Context(err.to_string())),
        };
        let Ok(body) = serde_json::from_value::<Cluster>(entry.body) else {
            return Ok(None);
        };
        let Some(git_ops) = body.git_ops() else {
            return Ok(None);
        };
        let reference = sync_object(catalog, cluster, provider, &git_ops.git_ops_reference_object).await?;
        let resource = sync_object(catalog, cluster, provider, &git_ops.git_ops_resource_object).await?;
        let needed = |key: &str| {
            reference
                .spec
                .value(key)
                .filter(|value| !value.is_empty())
                .map(str::to_string)
                .ok_or_else(|| {
                    gitops_error(
                        cluster,
                        format!(
                            "cluster sync object '{}' has no '{key}'",
                            git_ops.git_ops_reference_object
                        ),
                    )
                })
        };
        let remote = Remote {
            url: needed("url")?,
            branch: reference
                .spec
                .value("branch")
                .filter(|b| !b.is_empty())
                .unwrap_or("main")
                .to_string(),
            username: needed("userName")?,
            token: Secret::new(needed("gitToken")?),
            ca_pem: None,
        };
        remote.check().map_err(|err| gitops_error(cluster, err))?;
        let seconds = |key: &str| -> Result<u64, SyncError> {
            match resource.spec.value(key) {
                None | Some("") => Ok(60),
                Some(text) => text.trim().parse::<u64>().ok().filter(|s| (1..=86_400).contains(s)).ok_or_else(|| {
                    gitops_error(
                        cluster,
                        format!(
                            "cluster sync object '{}': {key} '{text}' is not a number of seconds (1 to 86400)",
                            git_ops.git_ops_resource_object
                        ),
                    )
                }),
            }
        };
        let flux = FluxTimes {
            timeout: seconds("timeOut")?,
            sync_interval: seconds("syncInterval")?,
            retry_interval: seconds("retryInterval")?,
        };
        let fingerprint = format!(
            "{}\n{}\n{}\n{}\n{flux:?}",
            remote.url,
            remote.branch,
            remote.username,
            remote.token.expose()
        );
        let known = |targets: &Self| {
            lock(&targets.known)
                .get(cluster)
                .filter(|(known, _)| *known == fingerprint)
                .map(|(_, target)| target.clone())
        };
        if let Some(target) = known(self) {
            return Ok(Some(target));
        }
        let _opening = self.opening.lock().await;
        if let Some(target) = known(self) {
            return Ok(Some(target));
        }
        let resources = self
            .mirror(
                cluster,
                remote.clone(),
                &fingerprint,
                self.mirror_dir(&remote.url, &remote.branch),
            )
            .await?;
        let status = self
            .status_repository(cluster, remote.clone(), &fingerprint)
            .await?;
        let target = Arc::new(GitTarget {
            resources,
            status,
            url: remote.url,
            branch: remote.branch,
            flux,
        });
        lock(&self.known).insert(cluster.to_string(), (fingerprint, target.clone()));
        Ok(Some(target))
    }

    /// The mirror in `dir` for `remote`: the one open there, else a new one (`settings`: what it is opened with).
    async fn mirror(
        &self,
        cluster: &str,
        remote: Remote,
        settings: &str,
        dir: PathBuf,
    ) -> Result<Arc<Mirror>, SyncError> {
        if let Some((opened_with, mirror)) = lock(&self.mirrors).get(&dir)
            && opened_with == settings
        {
            return Ok(mirror.clone());
        }
        let mirror = Mirror::open_async(dir.clone(), remote, Limits::default())
            .await
            .map_err(|err| git_failure(cluster, err))?;
        let mirror = Arc::new(mirror);
        lock(&self.mirrors).insert(dir, (settings.to_string(), mirror.clone()));
        Ok(mirror)
    }

    /// The status branches of `remote`'s repository: a mirror of its own (every branch fetched), with the heads
    /// known for it — new ones with a new mirror (other settings).
    async fn status_repository(
        &self,
        cluster: &str,
        remote: Remote,
        settings: &str,
    ) -> Result<Arc<StatusRepository>, SyncError> {
        let dir = self.mirror_dir(&remote.url, ALL_BRANCHES);
        let mirror = self.mirror(cluster, remote, settings, dir.clone()).await?;
        let mut statuses = lock(&self.statuses);
        if let Some(status) = statuses.get(&dir)
            && Arc::ptr_eq(&status.mirror, &mirror)
        {
            return Ok(status.clone());
        }
        let status = Arc::new(StatusRepository {
            mirror,
            heads: tokio::sync::Mutex::new(None),
        });
        statuses.insert(dir, status.clone());
        Ok(status)
    }

    /// The folder of the mirror of `url`'s `branch` (or of [`ALL_BRANCHES`]).
    fn mirror_dir(&self, url: &str, branch: &str) -> PathBuf {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (url, branch).hash(&mut hasher);
        self.dir.join(format!("{:016x}", hasher.finish()))
    }
}

impl Drop for GitTargets {
    fn drop(&mut self) {
        if self.temporary {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The cluster sync object `object` of `provider`, which `cluster` names.
async fn sync_object(
    catalog: &Catalog,
    cluster: &str,
    provider: &str,
    object: &str,
) -> Result<ClusterSyncObjects, SyncError> {
    let path = ResourcePath::new(
        Kind::ClusterSyncObject,
        vec![provider.to_string(), object.to_string()],
    );
    catalog
        .get_as::<ClusterSyncObjects>(&path)
        .await
        .map_err(|err| gitops_error(cluster, format!("cluster sync object '{object}': {err}")))
}

/// The folder of context `root` (the first of its update chain) on `cluster`.
fn context_folder(cluster: &str, root: ContextId) -> String {
    format!("clusters/{cluster}/context/{root}")
}

/// The Flux objects of context `root` on `cluster`: `(path, object)`. Level 0 (no logical cloud user): the
/// Kustomization in `flux-system`, from the repository Flux was bootstrapped with; level 1: a GitRepository and
/// the Kustomization in the logical cloud's namespace, applied as its service account.
fn flux_objects(
    cluster: &str,
    root: ContextId,
    target: &GitTarget,
    level_one: Option<(&str, &str)>,
) -> Vec<(String, Json)> {
    let mut objects = Vec::new();
    let (namespace, source, account) = match level_one {
        Some((namespace, logical_cloud)) => {
            let repository = json!({
                "apiVersion": "source.toolkit.fluxcd.io/v1beta1",
                "kind": "GitRepository",
                "metadata": {"name": root.to_string(), "namespace": namespace},
                "spec": {"url": target.url, "interval": "30s", "ref": {"branch": target.branch}},
            });
            objects.push((format!("clusters/{cluster}/{root}.yaml"), repository));
            (
                namespace.to_string(),
                root.to_string(),
                Some(emco_k8s::logical_cloud::flux_service_account(logical_cloud)),
            )
        }
        None => ("flux-system".to_string(), "flux-system".to_string(), None),
    };
    let mut spec = json!({
        "interval": format!("{}s", target.flux.sync_interval),
        "retryInterval": format!("{}s", target.flux.retry_interval),
        "timeout": format!("{}s", target.flux.timeout),
        "path": context_folder(cluster, root),
        "prune": true,
        "sourceRef": {"kind": "GitRepository", "name": source},
    });
    if let Some(account) = account {
        spec["serviceAccountName"] = json!(account);
    }
    objects.push((
        format!("clusters/{cluster}/kust{root}.yaml"),
        json!({
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1beta2",
            "kind": "Kustomization",
            "metadata": {"name": format!("kust{root}"), "namespace": namespace},
            "spec": spec,
        }),
    ));
    objects
}

fn file(object: &Json) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(object).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// One attempt at an app's batch on a GitOps cluster: the commit (see the module's doc).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn attempt(
    inner: &Inner,
    id: ContextId,
    root: ContextId,
    record: &ClusterRecord,
    namespace: &str,
    direction: Direction,
    target: &GitTarget,
) -> Result<Attempt, SyncError> {
    let cluster = record.cluster.as_str();
    let app = record.app.as_str();
    let meta = inner
        .contexts
        .meta(id)
        .await
        .map_err(|err| SyncError::Context(err.to_string()))?;
    let dig = format!(
        "{}/{}/{}/{}",
        meta.project, meta.composite_app, meta.composite_app_version, meta.deployment_intent_group
    );
    let level_one = meta
        .credentials
        .as_ref()
        .map(|_| (namespace.to_string(), meta.logical_cloud.clone()));
    let context_dir = context_folder(cluster, root);
    let app_dir = format!("{context_dir}/app/{app}");
    let flux = flux_objects(
        cluster,
        root,
        target,
        level_one
            .as_ref()
            .map(|(namespace, cloud)| (namespace.as_str(), cloud.as_str())),
    );
    let mut results: Results = vec![None; record.resources.len()];
    let removing = match direction {
        Direction::Apply | Direction::Update(_) | Direction::Repair => false,
        Direction::Delete => true,
        // The successor wrote the same folder, holding exactly its objects (Flux prunes the others): only an app
        // it no longer places here leaves.
        Direction::Supersede(successor) => match inner.contexts.cluster(successor, app, cluster).await {
            Ok(kept) => {
                let kept: std::collections::HashSet<String> = kept
                    .resources
                    .iter()
                    .map(emco_appcontext::ResourceRecord::key)
                    .collect();
                for (result, resource) in results.iter_mut().zip(&record.resources) {
                    if !kept.contains(&resource.key()) {
                        *result = Some((RsyncStatus::Deleted, None));
                    }
                }
                return Ok(done(results, End::Done));
            }
            Err(_) => true,
        },
    };
    let (message, files) = if removing {
        (
            format!("emco: delete app {app} of {dig} (context {id}) from {cluster}"),
            BTreeMap::new(),
        )
    } else {
        let hooks: Vec<String> = record
            .resources
            .iter()
            .filter(|resource| resource.role.hook().is_some())
            .map(|resource| format!("{} '{}'", resource.kind, resource.name))
            .collect();
        if !hooks.is_empty() {
            let why = format!(
                "Helm hooks are not run on GitOps cluster {cluster} (its agent applies objects, not hooks): {}",
                hooks.join(", ")
            );
            for (result, resource) in results.iter_mut().zip(&record.resources) {
                if resource.role.hook().is_some() {
                    *result = Some((RsyncStatus::Failed, Some(why.clone())));
                }
            }
            return Ok(done(results, End::Failed));
        }
        let label = format!("{root}-{app}");
        let mut files = BTreeMap::new();
        for resource in &record.resources {
            let manifest: Json = serde_json::from_str(resource.manifest.as_str()).map_err(|err| {
                gitops_error(cluster, format!("{} '{}': {err}", resource.kind, resource.name))
            })?;
            let gvk = resource.gvk();
            let namespaced =
                crate::clients::built_in_namespaced(&gvk).unwrap_or(resource.kind != "Namespace");
            let object = crate::labels::prepare(manifest, &label, namespaced.then_some(namespace));
            files.insert(
                format!("{app_dir}/{}+{}.yaml", resource.name, resource.kind),
                file(&object),
            );
        }
        let kinds = record
            .resources
            .iter()
            .map(|resource| emco_k8s::bundle::BundleKind::of(&resource.gvk()));
        let configs =
            crate::status_configs::for_record(inner.clients.catalog(), &inner.clients, cluster, None, record)
                .await;
        let bundle = emco_k8s::bundle::rbs_object_with(&label, namespace, kinds, &configs);
        files.insert(
            format!("{app_dir}/{label}+{}.yaml", emco_k8s::RBS_KIND),
            file(&bundle),
        );
        let verb = if matches!(direction, Direction::Update(_)) {
            "update"
        } else {
            "instantiate"
        };
        (
            format!("emco: {verb} app {app} of {dig} (context {id}) on {cluster}"),
            files,
        )
    };
    let mirror = target.resources.clone();
    let (task_app_dir, task_context_dir) = (app_dir.clone(), context_dir.clone());
    let published = tokio::task::spawn_blocking(move || {
        mirror.publish(&message, |base| {
            let mut changes: Vec<emco_git::Change> = base
                .files_under(&task_app_dir)?
                .into_iter()
                .filter(|path| !files.contains_key(path))
                .map(|path| emco_git::Change::Remove { path })
                .collect();
            changes.extend(files.iter().map(|(path, content)| emco_git::Change::Write {
                path: path.clone(),
                content: content.clone(),
            }));
            let others_left = base
                .files_under(&task_context_dir)?
                .iter()
                .any(|path| !path.starts_with(&format!("{task_app_dir}/")));
            if files.is_empty() && !others_left {
                // The context's last app left: its folder and its Flux objects go.
                changes.push(emco_git::Change::Remove {
                    path: task_context_dir.clone(),
                });
                changes.extend(
                    flux.iter()
                        .map(|(path, _)| emco_git::Change::Remove { path: path.clone() }),
                );
            } else if !files.is_empty() {
                changes.extend(flux.iter().map(|(path, object)| emco_git::Change::Write {
                    path: path.clone(),
                    content: file(object),
                }));
            }
            Ok(changes)
        })
    })
    .await
    .map_err(|err| gitops_error(cluster, err))?;
    published.map_err(|err| git_failure(cluster, err))?;
    let status = if removing {
        RsyncStatus::Deleted
    } else {
        RsyncStatus::Applied
    };
    results.fill(Some((status, None)));
    Ok(done(results, End::Done))
}

fn done(results: Results, end: End) -> Attempt {
    let certificates = vec![None; results.len()];
    Attempt {
        results,
        certificates,
        end,
        heard: None,
    }
}

/// A new commit of a GitOps cluster's status branch, as [`read_status`] answers it.
#[derive(Debug)]
pub(crate) struct StatusCommit {
    /// The commit.
    pub(crate) commit: String,
    /// When the cluster was heard from: the commit's time (never later than now, whatever the monitor's clock
    /// says).
    pub(crate) heard_at: String,
    /// Each bundle file of the cluster's status folder.
    pub(crate) files: Vec<Vec<u8>>,
}

/// What a GitOps cluster's monitor committed, when its status branch has a commit other than `last` (the one read
/// before): the heads of the repository's branches are at most `fresh_for` old (one fetch serves every cluster of
/// the repository), and only a new head's files are read.
pub(crate) async fn read_status(
    target: &GitTarget,
    cluster: &str,
    last: Option<&str>,
    fresh_for: std::time::Duration,
) -> Result<Option<StatusCommit>, SyncError> {
    let heads = target
        .status
        .heads(fresh_for)
        .await
        .map_err(|err| git_failure(cluster, err))?;
    let Some(head) = heads.get(cluster).cloned() else {
        return Ok(None);
    };
    if last == Some(head.as_str()) {
        return Ok(None);
    }
    let (mirror, folder) = (target.status.mirror.clone(), format!("clusters/{cluster}/status"));
    let snapshot = tokio::task::spawn_blocking(move || mirror.read_commit(&head, &folder))
        .await
        .map_err(|err| gitops_error(cluster, err))?
        .map_err(|err| git_failure(cluster, err))?;
    let Some(commit) = snapshot.commit else {
        return Ok(None);
    };
    let now = jiff::Timestamp::now();
    let committed = snapshot
        .committed_at
        .and_then(|seconds| jiff::Timestamp::from_second(seconds).ok())
        .map_or(now, |at| at.min(now));
    Ok(Some(StatusCommit {
        commit,
        heard_at: emco_model::format_timestamp(committed),
        files: snapshot.files.into_iter().map(|(_, content)| content).collect(),
    }))
}
