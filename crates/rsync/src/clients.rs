//! Kubernetes clients per cluster, built from the stored kubeconfigs and reused (and per (cluster, logical cloud
//! user): the cluster's kubeconfig with the user's client certificate); the API resource of each kind a
//! cluster serves — the long-stable built-in kinds known without asking, any other discovered once per cluster;
//! the ResourceBundleState CRD, installed once per cluster.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::{Arc, LazyLock};

use base64::Engine as _;
use emco_appcontext::{AppContexts, Catalog, Kind, ResourcePath, ResourceRole, UserCredentials};
use emco_k8s::k8s_openapi::api::{
    admissionregistration, apps, autoscaling, batch, certificates, coordination, core, networking, policy,
    rbac, scheduling, storage,
};
use emco_k8s::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams};
use kube::config::{AuthInfo, KubeConfigOptions, Kubeconfig, NamedAuthInfo};
use kube::core::{ApiResource, DynamicObject, GroupVersion, GroupVersionKind};
use kube::discovery::{Scope, pinned_group};

use crate::config::RsyncConfig;
use crate::error::SyncError;
use crate::lock;

/// The resolved API resource of a kind in one cluster.
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    pub(crate) resource: ApiResource,
    pub(crate) namespaced: bool,
}

/// Whether a built-in kind is namespaced (`None` for a kind not among them).
pub(crate) fn built_in_namespaced(gvk: &emco_model::Gvk) -> Option<bool> {
    let gvk = GroupVersionKind::gvk(&gvk.group, &gvk.version, &gvk.kind);
    BUILT_IN.get(&gvk).map(|resolved| resolved.namespaced)
}

/// A built-in kind's API resource and scope (`None` for a kind not among them).
pub(crate) fn built_in(gvk: &GroupVersionKind) -> Option<Resolved> {
    BUILT_IN.get(gvk).cloned()
}

/// Built-in kinds that every Kubernetes version still supported serves under the same group version, with their
/// plural and scope (from k8s-openapi): resolving them costs no discovery read — two or three round trips fewer
/// per cluster, which at the edge are the slowest part of a first apply. A cluster that does not serve one after
/// all refuses the write with its own 404, which fails the resource with that message, as discovery would.
static BUILT_IN: LazyLock<HashMap<GroupVersionKind, Resolved>> = LazyLock::new(|| {
    fn kind<K>() -> (GroupVersionKind, Resolved)
    where
        K: kube::Resource<DynamicType = ()>,
        K::Scope: 'static,
    {
        let resource = ApiResource::erase::<K>(&());
        let gvk = GroupVersionKind::gvk(&resource.group, &resource.version, &resource.kind);
        let namespaced = TypeId::of::<K::Scope>() == TypeId::of::<kube::core::NamespaceResourceScope>();
        (gvk, Resolved { resource, namespaced })
    }
    HashMap::from([
        kind::<core::v1::ConfigMap>(),
        kind::<core::v1::Endpoints>(),
        kind::<core::v1::LimitRange>(),
        kind::<core::v1::Namespace>(),
        kind::<core::v1::PersistentVolume>(),
        kind::<core::v1::PersistentVolumeClaim>(),
        kind::<core::v1::Pod>(),
        kind::<core::v1::ResourceQuota>(),
        kind::<core::v1::Secret>(),
        kind::<core::v1::Service>(),
        kind::<core::v1::ServiceAccount>(),
        kind::<apps::v1::DaemonSet>(),
        kind::<apps::v1::Deployment>(),
        kind::<apps::v1::ReplicaSet>(),
        kind::<apps::v1::StatefulSet>(),
        kind::<batch::v1::CronJob>(),
        kind::<batch::v1::Job>(),
        kind::<autoscaling::v1::HorizontalPodAutoscaler>(),
        kind::<autoscaling::v2::HorizontalPodAutoscaler>(),
        kind::<policy::v1::PodDisruptionBudget>(),
        kind::<networking::v1::Ingress>(),
        kind::<networking::v1::IngressClass>(),
        kind::<networking::v1::NetworkPolicy>(),
        kind::<rbac::v1::ClusterRole>(),
        kind::<rbac::v1::ClusterRoleBinding>(),
        kind::<rbac::v1::Role>(),
        kind::<rbac::v1::RoleBinding>(),
        kind::<storage::v1::StorageClass>(),
        kind::<scheduling::v1::PriorityClass>(),
        kind::<coordination::v1::Lease>(),
        kind::<certificates::v1::CertificateSigningRequest>(),
        kind::<admissionregistration::v1::MutatingWebhookConfiguration>(),
        kind::<admissionregistration::v1::ValidatingWebhookConfiguration>(),
        kind::<CustomResourceDefinition>(),
    ])
});

/// The error for a kind the cluster does not serve, with the cluster's `message`: found by discovery, or by a
/// write of a built-in kind that the cluster answered 404.
pub(crate) fn not_served(gvk: &GroupVersionKind, message: &str) -> SyncError {
    let api_version = if gvk.group.is_empty() {
        gvk.version.clone()
    } else {
        format!("{}/{}", gvk.group, gvk.version)
    };
    SyncError::Rejected(format!(
        "the cluster does not serve {api_version} {}: {message}",
        gvk.kind
    ))
}

/// Clients and discovery results, shared by every task.
pub(crate) struct Clients {
    catalog: Catalog,
    config: RsyncConfig,
    /// Per cluster (and per `user:` cluster and logical cloud user): what the client was built from, and the client.
    /// One cell each, so that tasks asking together (a cluster's first apply and its watcher) share one build.
    clients: Mutex<HashMap<String, (Vec<u8>, ClientCell)>>,
    /// Per cluster, the kinds resolved there (forgetting a cluster's kinds must not visit every other cluster's).
    kinds: Mutex<HashMap<String, HashMap<GroupVersionKind, Resolved>>>,
    /// Per cluster: whether this process installed the ResourceBundleState CRD there. One cell per cluster, so
    /// the apps of a context applied concurrently install it once (the others wait for the first).
    bundles_installed: Mutex<HashMap<String, Arc<BundleCrd>>>,
    /// Per cluster, its version and API versions as last asked ([`crate::capabilities`]).
    pub(crate) capabilities: Mutex<crate::capabilities::Learned>,
    /// The GitOps clusters' repositories.
    git: crate::gitops::GitTargets,
    /// The one cluster (`provider+cluster`) reached by a client given rather than built from a kubeconfig: a pull
    /// agent's own cluster reached in-process. Set once; read without a lock on every request.
    given: std::sync::OnceLock<(String, kube::Client)>,
}

type ClientCell = Arc<tokio::sync::OnceCell<kube::Client>>;

/// Whether this process installed the ResourceBundleState CRD in a cluster, and who waits for it.
#[derive(Default)]
pub(crate) struct BundleCrd {
    installed: tokio::sync::OnceCell<()>,
    notify: tokio::sync::Notify,
}

impl BundleCrd {
    /// Returns once the CRD is installed by this process (at once when it is), or when `wait` passed.
    pub(crate) async fn installed_within(&self, wait: std::time::Duration) -> bool {
        let notified = self.notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if self.installed.initialized() {
            return true;
        }
        tokio::time::timeout(wait, notified).await.is_ok()
    }
}

/// The app of a logical cloud's context that holds its user's certificate request on each cluster.
pub(crate) const LOGICAL_CLOUD_APP: &str = "logical-cloud";

/// The largest certificate or private key a logical cloud user's client is built from.
const MAX_CREDENTIAL_BYTES: usize = 64 * 1024;

fn kubeconfig_error(cluster: &str, message: impl std::fmt::Display) -> SyncError {
    SyncError::Kubeconfig {
        cluster: cluster.to_string(),
        message: message.to_string(),
    }
}

/// How many clusters a question put to many clusters asks at once.
const CONCURRENT_CLUSTERS: usize = 32;

impl Clients {
    /// `ask` put to each of `clusters`, [`CONCURRENT_CLUSTERS`] at a time: each cluster with its answer, as they come.
    pub(crate) fn ask_each<'a, T, F, Fut>(
        &'a self,
        clusters: Vec<String>,
        ask: F,
    ) -> impl futures::Stream<Item = (String, T)> + 'a
    where
        F: Fn(&'a Self, String) -> Fut + 'a,
        Fut: std::future::Future<Output = (String, T)> + 'a,
    {
        use futures::StreamExt as _;
        futures::stream::iter(clusters)
            .map(move |cluster| ask(self, cluster))
            .buffer_unordered(CONCURRENT_CLUSTERS)
    }

    pub(crate) fn new(catalog: Catalog, config: RsyncConfig) -> Self {
        Self {
            git: crate::gitops::GitTargets::new(config.git_dir.clone()),
            catalog,
            config,
            clients: Mutex::new(HashMap::new()),
            kinds: Mutex::new(HashMap::new()),
            bundles_installed: Mutex::new(HashMap::new()),
            capabilities: Mutex::new(HashMap::new()),
            given: std::sync::OnceLock::new(),
        }
    }

    /// Reaches `cluster` (`provider+cluster`) with `client` from now on, whatever its kubeconfig: the cluster a
    /// pull agent runs in, reached in-process. Only the first cluster given counts: an agent serves one cluster.
    pub(crate) fn give(&self, cluster: &str, client: kube::Client) {
        let _ = self.given.set((cluster.to_string(), client));
    }

    fn given(&self, cluster: &str) -> Option<kube::Client> {
        self.given
            .get()
            .filter(|(given, _)| given == cluster)
            .map(|(_, client)| client.clone())
    }

    /// Where `cluster` (`provider+cluster`) is in Git when it is a GitOps cluster; `None` for a cluster emco dials.
    pub(crate) async fn git_target(
        &self,
        cluster: &str,
    ) -> Result<Option<Arc<crate::gitops::GitTarget>>, SyncError> {
        self.git.target(&self.catalog, cluster).await
    }

    /// Whether `cluster` (`provider+cluster`) is a pull cluster (`spec.pull`): its agent reaches emco, and emco
    /// never dials it.
    pub(crate) async fn is_pull(&self, cluster: &str) -> Result<bool, SyncError> {
        let Some((provider, name)) = cluster.split_once('+') else {
            return Ok(false);
        };
        let path = ResourcePath::new(Kind::Cluster, vec![provider.to_string(), name.to_string()]);
        match self.catalog.find(&path).await {
            Ok(Some(entry)) => Ok(
                serde_json::from_value::<emco_model::resources::Cluster>(entry.body)
                    .is_ok_and(|cluster| cluster.is_pull()),
            ),
            Ok(None) => Ok(false),
            Err(err) => Err(SyncError::Context(err.to_string())),
        }
    }

    /// The client of `cluster` (`provider+cluster`), for its requests and its watches alike (one connection when
    /// the cluster speaks HTTP/2).
    pub(crate) async fn client(&self, cluster: &str) -> Result<kube::Client, SyncError> {
        if let Some(client) = self.given(cluster) {
            return Ok(client);
        }
        let bytes = self.kubeconfig_bytes(cluster).await?;
        let (client, replaced) = self
            .cached(cluster, &bytes, || async {
                let kubeconfig = self.checked_kubeconfig(cluster, &bytes)?;
                self.build(cluster, kubeconfig, &KubeConfigOptions::default())
                    .await
            })
            .await?;
        // What was learned about the cluster (its kinds, the CRD installed) holds until its kubeconfig changes.
        if replaced {
            self.forget_kinds(cluster);
            self.forget_capabilities(cluster);
            lock(&self.bundles_installed).remove(cluster);
        }
        Ok(client)
    }

    /// The `host:port` of `cluster`'s API server, from its stored kubeconfig (checked by the policy as for a
    /// client), for probes that only open a TCP connection.
    pub(crate) async fn server_address(&self, cluster: &str) -> Result<String, SyncError> {
        let bytes = self.kubeconfig_bytes(cluster).await?;
        let kubeconfig = self.checked_kubeconfig(cluster, &bytes)?;
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .await
            .map_err(|err| kubeconfig_error(cluster, err))?;
        let url = &config.cluster_url;
        let host = url
            .host()
            .ok_or_else(|| kubeconfig_error(cluster, "the server URL has no host"))?;
        let port = url
            .port_u16()
            .unwrap_or(if url.scheme_str() == Some("http") { 80 } else { 443 });
        // An IPv6 literal keeps its brackets in the URI's host.
        Ok(format!("{host}:{port}"))
    }

    /// The client cached under `key` for `identity` (what it is built from), built by `build` once: callers that
    /// arrive together share one build (a failed build is tried again by the next caller); an entry of another
    /// identity is replaced, and then the second value is true.
    async fn cached<F, Fut>(
        &self,
        key: &str,
        identity: &[u8],
        build: F,
    ) -> Result<(kube::Client, bool), SyncError>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<kube::Client, SyncError>>,
    {
        let (cell, replaced) = {
            let mut clients = lock(&self.clients);
            match clients.get(key) {
                Some((stored, cell)) if stored.as_slice() == identity => (cell.clone(), false),
                other => {
                    let replaced = other.is_some();
                    let cell = ClientCell::default();
                    clients.insert(key.to_string(), (identity.to_vec(), cell.clone()));
                    (cell, replaced)
                }
            }
        };
        let client = cell.get_or_try_init(build).await?.clone();
        Ok((client, replaced))
    }

    /// The stored kubeconfig of `cluster` (`provider+cluster`), as bytes.
    async fn kubeconfig_bytes(&self, cluster: &str) -> Result<Vec<u8>, SyncError> {
        let (provider, name) = cluster
            .split_once('+')
            .ok_or_else(|| kubeconfig_error(cluster, "not a provider+cluster name"))?;
        let path = ResourcePath::new(Kind::Cluster, vec![provider.to_string(), name.to_string()]);
        self.catalog
            .blob(&path)
            .await
            .map_err(|err| kubeconfig_error(cluster, err))?
            .ok_or_else(|| kubeconfig_error(cluster, "the cluster has no kubeconfig (or was deleted)"))
    }

    /// The kubeconfig policy again (what was stored earlier is not trusted), and kube-rs's kubeconfig made only
    /// from the fields it allowed: never exec, auth-provider, file paths or a proxy.
    fn checked_kubeconfig(&self, cluster: &str, bytes: &[u8]) -> Result<Kubeconfig, SyncError> {
        let name = cluster.split_once('+').map_or(cluster, |(_, name)| name);
        let checked = emco_k8s::kubeconfig::check_kubeconfig(bytes, self.config.kubeconfig_policy)
            .map_err(|err| SyncError::KubeconfigRefused(emco_k8s::kubeconfig::refusal_message(name, &err)))?;
        serde_json::from_value(checked.as_json().clone()).map_err(|err| kubeconfig_error(cluster, err))
    }

    /// A client from a checked kubeconfig, with rsync's timeouts and layers.
    async fn build(
        &self,
        cluster: &str,
        kubeconfig: Kubeconfig,
        options: &KubeConfigOptions,
    ) -> Result<kube::Client, SyncError> {
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, options)
            .await
            .map_err(|err| kubeconfig_error(cluster, err))?;
        crate::transport::client(
            &config,
            crate::transport::ClientSettings {
                request_timeout: self.config.request_timeout,
                retry_after_max: self.config.retry_after_max,
            },
        )
        .map_err(|err| kubeconfig_error(cluster, err))
    }

    /// A client of `cluster` that authenticates as a level-1 logical cloud's user: the cluster's checked
    /// kubeconfig (server, CA) with its auth replaced by the user's client certificate — the certificate the
    /// cluster issued, kept in the logical cloud's context (app `logical-cloud`, this cluster, the resource with
    /// role Certificate), and the private key kept as the logical cloud's blob. Reused per (cluster, user) while
    /// the kubeconfig, certificate and key stay the same.
    pub(crate) async fn user_client(
        &self,
        contexts: &AppContexts,
        cluster: &str,
        credentials: &UserCredentials,
    ) -> Result<kube::Client, SyncError> {
        if self.config.impersonate_users {
            return self.impersonating_client(cluster, &credentials.user).await;
        }
        let credentials_error = |message: String| SyncError::Credentials {
            logical_cloud: credentials.logical_cloud.clone(),
            cluster: cluster.to_string(),
            message,
        };
        let record = contexts
            .cluster(credentials.context, LOGICAL_CLOUD_APP, cluster)
            .await
            .map_err(|err| credentials_error(format!("the logical cloud's context cannot be read: {err}")))?;
        let certificate = record
            .resources
            .iter()
            .filter(|resource| matches!(resource.role, ResourceRole::Certificate))
            .find_map(|resource| resource.certificate.clone().filter(|pem| !pem.trim().is_empty()))
            .ok_or_else(|| {
                credentials_error(format!(
                    "user '{}' has no certificate issued by the cluster yet",
                    credentials.user
                ))
            })?;
        let key_path = ResourcePath::new(
            Kind::LogicalCloud,
            vec![credentials.project.clone(), credentials.logical_cloud.clone()],
        );
        let key = self
            .catalog
            .blob(&key_path)
            .await
            .map_err(|err| credentials_error(format!("the user's private key cannot be read: {err}")))?
            .ok_or_else(|| credentials_error(format!("user '{}' has no private key", credentials.user)))?;
        if certificate.len() > MAX_CREDENTIAL_BYTES || key.len() > MAX_CREDENTIAL_BYTES {
            return Err(credentials_error(format!(
                "the certificate or private key is larger than {MAX_CREDENTIAL_BYTES} bytes"
            )));
        }
        let key = String::from_utf8(key)
            .map_err(|_| credentials_error("the private key is not PEM text".to_string()))?;
        if !key.contains("-----BEGIN ") {
            return Err(credentials_error("the private key is not PEM text".to_string()));
        }
        let bytes = self.kubeconfig_bytes(cluster).await?;
        let cache_key = format!(
            "user:{cluster}:{}/{}/{}",
            credentials.project, credentials.logical_cloud, credentials.user
        );
        let identity = [bytes.as_slice(), certificate.as_bytes(), key.as_bytes()].join(&0u8);
        let (client, _) = self
            .cached(&cache_key, &identity, || async {
                let mut kubeconfig = self.checked_kubeconfig(cluster, &bytes)?;
                let base64 = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
                let auth_info: AuthInfo = serde_json::from_value(serde_json::json!({
                    "client-certificate-data": base64(&certificate),
                    "client-key-data": base64(&key),
                }))
                .map_err(|err| credentials_error(err.to_string()))?;
                let user_entry = format!("emco-logical-cloud-user:{}", credentials.user);
                kubeconfig.auth_infos.retain(|named| named.name != user_entry);
                kubeconfig.auth_infos.push(NamedAuthInfo {
                    name: user_entry.clone(),
                    auth_info: Some(auth_info),
                    ..NamedAuthInfo::default()
                });
                let options = KubeConfigOptions {
                    user: Some(user_entry),
                    ..KubeConfigOptions::default()
                };
                self.build(cluster, kubeconfig, &options).await
            })
            .await?;
        Ok(client)
    }

    /// The client of `cluster`'s own kubeconfig acting as `user` (`Impersonate-User`): a pull cluster's agent
    /// applies a logical cloud's apps as the cloud's service account.
    async fn impersonating_client(&self, cluster: &str, user: &str) -> Result<kube::Client, SyncError> {
        if let Some(client) = self.given(cluster) {
            let (client, _) = self
                .cached(&format!("as:{cluster}:{user}"), user.as_bytes(), || async {
                    acting_as(client, user).map_err(|err| kubeconfig_error(cluster, err))
                })
                .await?;
            return Ok(client);
        }
        let bytes = self.kubeconfig_bytes(cluster).await?;
        let identity = [bytes.as_slice(), user.as_bytes()].join(&0u8);
        let (client, _) = self
            .cached(&format!("as:{cluster}:{user}"), &identity, || async {
                let mut kubeconfig = self.checked_kubeconfig(cluster, &bytes)?;
                for named in &mut kubeconfig.auth_infos {
                    if let Some(auth_info) = named.auth_info.as_mut() {
                        auth_info.impersonate = Some(user.to_string());
                    }
                }
                self.build(cluster, kubeconfig, &KubeConfigOptions::default())
                    .await
            })
            .await?;
        Ok(client)
    }

    /// The catalog the kubeconfigs (and status configs) are read from.
    pub(crate) fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The API resource of `gvk` in `cluster`: a built-in kind's at once, any other's from the cluster's discovery.
    pub(crate) async fn resolve(
        &self,
        cluster: &str,
        client: &kube::Client,
        gvk: &GroupVersionKind,
    ) -> Result<Resolved, SyncError> {
        if let Some(resolved) = BUILT_IN.get(gvk) {
            return Ok(resolved.clone());
        }
        if let Some(resolved) = lock(&self.kinds).get(cluster).and_then(|kinds| kinds.get(gvk)) {
            return Ok(resolved.clone());
        }
        // One read lists every kind of the group version: all of them are kept (a cluster's ConfigMaps and
        // Services cost one discovery read, not two).
        let group_version = GroupVersion::gv(&gvk.group, &gvk.version);
        let group = pinned_group(client, &group_version)
            .await
            .map_err(|err| match SyncError::from(err) {
                SyncError::Rejected(message) => not_served(gvk, &message),
                other => other,
            })?;
        let mut kinds = lock(&self.kinds);
        let known = kinds.entry(cluster.to_string()).or_default();
        for (resource, capabilities) in group.versioned_resources(&gvk.version) {
            let kind = GroupVersionKind::gvk(&gvk.group, &gvk.version, &resource.kind);
            // The first resource of a kind is the kind's (as a lookup of the kind alone finds it).
            known.entry(kind).or_insert(Resolved {
                resource,
                namespaced: capabilities.scope == Scope::Namespaced,
            });
        }
        // The group version is served, but not this kind (no CRD for it).
        known
            .get(gvk)
            .cloned()
            .ok_or_else(|| not_served(gvk, "the server could not find the requested resource"))
    }

    /// Forgets what was discovered about `cluster` (after CRDs changed).
    pub(crate) fn forget_kinds(&self, cluster: &str) {
        lock(&self.kinds).remove(cluster);
    }

    /// Whether this process installed the ResourceBundleState CRD in `cluster` (since its kubeconfig last changed),
    /// and a way to wait until it has.
    pub(crate) fn bundle_crd(&self, cluster: &str) -> Arc<BundleCrd> {
        Arc::clone(
            lock(&self.bundles_installed)
                .entry(cluster.to_string())
                .or_default(),
        )
    }

    /// Installs the ResourceBundleState CRD in `cluster` unless this process did already.
    pub(crate) async fn ensure_bundle_crd(
        &self,
        cluster: &str,
        client: &kube::Client,
    ) -> Result<(), SyncError> {
        let crd = self.bundle_crd(cluster);
        // A failed installation leaves the cell empty: the next call tries again.
        crd.installed
            .get_or_try_init(|| async {
                let gvk = GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
                let resolved = self.resolve(cluster, client, &gvk).await?;
                let api: Api<DynamicObject> = Api::all_with(client.clone(), &resolved.resource);
                let params = PatchParams::apply(&self.config.field_manager).force();
                let applied = api
                    .patch(
                        emco_k8s::RBS_CRD_NAME,
                        &params,
                        &Patch::Apply(emco_k8s::rbs_crd()),
                    )
                    .await?;
                crate::apply::wait_established(&api, &applied, self.config.crd_timeout).await?;
                self.forget_kinds(cluster);
                crd.notify.notify_waiters();
                Ok::<(), SyncError>(())
            })
            .await?;
        Ok(())
    }
}

/// `client` sending every request as `user` (`Impersonate-User`), as a kubeconfig's `as` does.
fn acting_as(client: kube::Client, user: &str) -> Result<kube::Client, http::header::InvalidHeaderValue> {
    let user = http::HeaderValue::from_str(user)?;
    let namespace = client.default_namespace().to_string();
    let service = tower::service_fn(move |mut request: http::Request<kube::client::Body>| {
        let (client, user) = (client.clone(), user.clone());
        async move {
            request.headers_mut().insert("impersonate-user", user);
            client.send(request).await
        }
    });
    Ok(kube::Client::new(service, namespace))
}

/// Clients over a catalog holding every cluster of `sim` under provider `p` (for tests).
#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) async fn clients_of(sim: &kubesim::Simulator) -> Clients {
    let catalog = Catalog::new(emco_store::Store::memory());
    let provider =
        emco_appcontext::ResourcePath::new(emco_appcontext::Kind::ClusterProvider, vec!["p".into()]);
    catalog
        .create(
            &provider,
            &serde_json::json!({"metadata": {"name": "p"}}),
            None,
            Vec::new(),
        )
        .await
        .unwrap();
    for cluster in sim.clusters() {
        let path = provider.child(emco_appcontext::Kind::Cluster, &[cluster.name()]);
        let body = serde_json::json!({"metadata": {"name": cluster.name()}});
        catalog
            .create(&path, &body, Some(cluster.kubeconfig().as_bytes()), Vec::new())
            .await
            .unwrap();
    }
    Clients::new(catalog, RsyncConfig::default())
}

#[cfg(test)]
mod tests {
    use emco_store::Store;
    use kubesim::Simulator;

    use super::*;

    #[tokio::test]
    async fn built_in_kinds_cost_no_read_and_one_discovery_read_resolves_every_other_kind_of_a_group_version()
    {
        let sim = Simulator::start_named(1).await.unwrap();
        let cluster = &sim.clusters()[0];
        let client = cluster.client().unwrap();
        let clients = Clients::new(Catalog::new(Store::memory()), RsyncConfig::default());
        let core = |kind: &str| GroupVersionKind::gvk("", "v1", kind);
        let before = cluster.reads();
        let config_map = clients.resolve("p+c", &client, &core("ConfigMap")).await.unwrap();
        let deployment = clients
            .resolve("p+c", &client, &GroupVersionKind::gvk("apps", "v1", "Deployment"))
            .await
            .unwrap();
        let crd = clients
            .resolve(
                "p+c",
                &client,
                &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            )
            .await
            .unwrap();
        assert_eq!(cluster.reads(), before, "built-in kinds are known without asking");
        assert_eq!(config_map.resource.plural, "configmaps");
        assert_eq!(deployment.resource.plural, "deployments");
        assert_eq!(crd.resource.plural, "customresourcedefinitions");
        assert!(config_map.namespaced && deployment.namespaced && !crd.namespaced);
        // Other kinds: one read for the group version.
        let node = clients.resolve("p+c", &client, &core("Node")).await.unwrap();
        let after_first = cluster.reads();
        assert_eq!(after_first - before, 1, "one read for the group version");
        let event = clients.resolve("p+c", &client, &core("Event")).await.unwrap();
        assert_eq!(
            cluster.reads(),
            after_first,
            "the other kinds came with the first read"
        );
        assert_eq!((node.resource.plural.as_str(), node.namespaced), ("nodes", false));
        assert_eq!(
            (event.resource.plural.as_str(), event.namespaced),
            ("events", true)
        );
        // A kind the group version does not have is refused by name, and not remembered.
        let missing = clients.resolve("p+c", &client, &core("Frobnicator")).await;
        assert!(
            matches!(&missing, Err(SyncError::Rejected(message)) if message
                == "the cluster does not serve v1 Frobnicator: the server could not find the requested resource"),
            "{missing:?}"
        );
        // Forgotten kinds (after CRDs changed) are read again.
        clients.forget_kinds("p+c");
        let reads = cluster.reads();
        clients.resolve("p+c", &client, &core("Node")).await.unwrap();
        assert_eq!(cluster.reads(), reads + 1);
    }

    #[tokio::test]
    async fn every_built_in_kind_the_cluster_serves_has_the_plural_and_scope_its_discovery_gives() {
        let sim = Simulator::start_named(1).await.unwrap();
        let client = sim.clusters()[0].client().unwrap();
        let mut compared = 0;
        for (gvk, known) in BUILT_IN.iter() {
            let group = pinned_group(&client, &GroupVersion::gv(&gvk.group, &gvk.version)).await;
            let Some((resource, capabilities)) = group.ok().and_then(|group| {
                group
                    .versioned_resources(&gvk.version)
                    .into_iter()
                    .find(|(resource, _)| resource.kind == gvk.kind)
            }) else {
                continue;
            };
            assert_eq!(known.resource, resource, "{gvk:?}");
            assert_eq!(
                known.namespaced,
                capabilities.scope == Scope::Namespaced,
                "{gvk:?}"
            );
            compared += 1;
        }
        // The kinds the simulated cluster serves (most of the table) were all compared.
        assert!(compared >= 25, "{compared} kinds compared");
    }
}
