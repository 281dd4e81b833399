//! Kubernetes clients per cluster, built from the stored kubeconfigs and reused; the API resource of each kind a
//! cluster serves, discovered once per cluster; the ResourceBundleState CRD, installed once per cluster.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;

use emco_appcontext::{Catalog, Kind, ResourcePath};
use kube::api::{Api, Patch, PatchParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube::discovery::{Scope, pinned_kind};

use crate::config::RsyncConfig;
use crate::error::SyncError;

/// How long to wait for a TCP connection to a cluster before calling it unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The resolved API resource of a kind in one cluster.
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    pub(crate) resource: ApiResource,
    pub(crate) namespaced: bool,
}

/// Clients and discovery results, shared by every task.
pub(crate) struct Clients {
    catalog: Catalog,
    config: RsyncConfig,
    /// Per cluster: the kubeconfig the client was built from and the client.
    clients: Mutex<HashMap<String, (Vec<u8>, kube::Client)>>,
    kinds: Mutex<HashMap<(String, GroupVersionKind), Resolved>>,
    bundles_installed: Mutex<HashSet<String>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Clients {
    pub(crate) fn new(catalog: Catalog, config: RsyncConfig) -> Self {
        Self {
            catalog,
            config,
            clients: Mutex::new(HashMap::new()),
            kinds: Mutex::new(HashMap::new()),
            bundles_installed: Mutex::new(HashSet::new()),
        }
    }

    /// The client of `cluster` (`provider+cluster`) for requests.
    pub(crate) async fn client(&self, cluster: &str) -> Result<kube::Client, SyncError> {
        self.client_for(cluster, false).await
    }

    /// A client of `cluster` for long watches (no read timeout).
    pub(crate) async fn watch_client(&self, cluster: &str) -> Result<kube::Client, SyncError> {
        self.client_for(cluster, true).await
    }

    async fn client_for(&self, cluster: &str, watching: bool) -> Result<kube::Client, SyncError> {
        let cache_key = if watching {
            format!("watch:{cluster}")
        } else {
            cluster.to_string()
        };
        let kubeconfig_error = |message: String| SyncError::Kubeconfig {
            cluster: cluster.to_string(),
            message,
        };
        let (provider, name) = cluster
            .split_once('+')
            .ok_or_else(|| kubeconfig_error("not a provider+cluster name".into()))?;
        let path = ResourcePath::new(Kind::Cluster, vec![provider.to_string(), name.to_string()]);
        let bytes = self
            .catalog
            .blob(&path)
            .await
            .map_err(|err| kubeconfig_error(err.to_string()))?
            .ok_or_else(|| kubeconfig_error("the cluster has no kubeconfig (or was deleted)".into()))?;
        if let Some((stored, client)) = lock(&self.clients).get(&cache_key)
            && *stored == bytes
        {
            return Ok(client.clone());
        }
        // The policy again (what was stored earlier is not trusted), and the client built only from the fields
        // it allowed: never exec, auth-provider, file paths or a proxy.
        let checked = emco_k8s::kubeconfig::check_kubeconfig(&bytes, self.config.kubeconfig_policy)
            .map_err(|err| SyncError::KubeconfigRefused(emco_k8s::kubeconfig::refusal_message(name, &err)))?;
        let kubeconfig: kube::config::Kubeconfig = serde_json::from_value(checked.as_json().clone())
            .map_err(|err| kubeconfig_error(err.to_string()))?;
        let mut config =
            kube::Config::from_custom_kubeconfig(kubeconfig, &kube::config::KubeConfigOptions::default())
                .await
                .map_err(|err| kubeconfig_error(err.to_string()))?;
        // rsync retries on its own terms (and shows Retrying meanwhile).
        config.default_retry = false;
        config.connect_timeout = Some(CONNECT_TIMEOUT);
        config.read_timeout = if watching {
            None
        } else {
            Some(self.config.request_timeout)
        };
        config.write_timeout = Some(self.config.request_timeout);
        let client = kube::client::ClientBuilder::try_from(config)
            .map_err(|err| kubeconfig_error(err.to_string()))?
            // A 429's or 5xx's Retry-After survives into the error rsync retries on.
            .with_layer(&crate::retry_after::RetryAfterLayer::new(
                self.config.retry_after_max,
            ))
            .build();
        lock(&self.clients).insert(cache_key, (bytes, client.clone()));
        lock(&self.kinds).retain(|(c, _), _| c != cluster);
        lock(&self.bundles_installed).remove(cluster);
        Ok(client)
    }

    /// The API resource of `gvk` in `cluster`.
    pub(crate) async fn resolve(
        &self,
        cluster: &str,
        client: &kube::Client,
        gvk: &GroupVersionKind,
    ) -> Result<Resolved, SyncError> {
        let key = (cluster.to_string(), gvk.clone());
        if let Some(resolved) = lock(&self.kinds).get(&key) {
            return Ok(resolved.clone());
        }
        let (resource, capabilities) =
            pinned_kind(client, gvk)
                .await
                .map_err(|err| match SyncError::from(err) {
                    SyncError::Rejected(message) => SyncError::Rejected(format!(
                        "the cluster does not serve {}/{} {}: {message}",
                        gvk.group, gvk.version, gvk.kind
                    )),
                    other => other,
                })?;
        let resolved = Resolved {
            resource,
            namespaced: capabilities.scope == Scope::Namespaced,
        };
        lock(&self.kinds).insert(key, resolved.clone());
        Ok(resolved)
    }

    /// Forgets what was discovered about `cluster` (after CRDs changed).
    pub(crate) fn forget_kinds(&self, cluster: &str) {
        lock(&self.kinds).retain(|(c, _), _| c != cluster);
    }

    /// Installs the ResourceBundleState CRD in `cluster` unless this process did already.
    pub(crate) async fn ensure_bundle_crd(
        &self,
        cluster: &str,
        client: &kube::Client,
    ) -> Result<(), SyncError> {
        if lock(&self.bundles_installed).contains(cluster) {
            return Ok(());
        }
        let gvk = GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
        let resolved = self.resolve(cluster, client, &gvk).await?;
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resolved.resource);
        let params = PatchParams::apply(&self.config.field_manager).force();
        api.patch(
            emco_k8s::RBS_CRD_NAME,
            &params,
            &Patch::Apply(emco_k8s::rbs_crd()),
        )
        .await?;
        crate::apply::wait_established(&api, emco_k8s::RBS_CRD_NAME, self.config.crd_timeout).await?;
        self.forget_kinds(cluster);
        lock(&self.bundles_installed).insert(cluster.to_string());
        Ok(())
    }
}
