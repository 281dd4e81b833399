//! Which status configs (issue #16 §4) an app's ResourceBundleState carries: those whose target kind the app holds
//! on the cluster, each with the kind's plural (the config's own, else the cluster's discovery). They are read from
//! the catalog each time the bundle is applied, so a config created or changed after a deployment applies at its
//! next instantiate or update. A catalog that cannot be read, or a kind the cluster does not serve, leaves the
//! config out (the app is applied regardless: status configs only refine what the monitor reports). A GitOps
//! cluster is never asked: a kind that is not built in needs the config's own plural there.

use emco_appcontext::{Catalog, ClusterRecord, Kind};
use emco_k8s::bundle::{BundleStatusConfig, MAX_BUNDLE_STATUS_CONFIGS};
use emco_model::StatusConfig;
use kube::core::GroupVersionKind;

use crate::clients::Clients;

/// The bundle status configs for `record`'s kinds on `cluster` (`client`: the cluster's; none for a GitOps
/// cluster).
pub(crate) async fn for_record(
    catalog: &Catalog,
    clients: &Clients,
    cluster: &str,
    client: Option<&kube::Client>,
    record: &ClusterRecord,
) -> Vec<BundleStatusConfig> {
    let configs = match catalog.list_as::<StatusConfig>(Kind::StatusConfig, &[]).await {
        Ok(configs) => configs,
        Err(err) => {
            tracing::warn!(cluster, app = record.app, error = %err, "cannot read the status configs; the bundle carries none");
            return Vec::new();
        }
    };
    let mut chosen = Vec::new();
    for (_, config) in configs {
        let target = &config.spec.target_type;
        let held = record.resources.iter().any(|resource| {
            let gvk = resource.gvk();
            gvk.group == target.group && gvk.kind == target.kind
        });
        if !held || chosen.len() >= MAX_BUNDLE_STATUS_CONFIGS {
            continue;
        }
        let plural = if target.plural.is_empty() {
            let gvk = GroupVersionKind::gvk(&target.group, &target.version, &target.kind);
            let resolved = match client {
                Some(client) => clients
                    .resolve(cluster, client, &gvk)
                    .await
                    .map_err(|err| err.to_string()),
                None => crate::clients::built_in(&gvk).ok_or_else(|| {
                    "a GitOps cluster is not asked for plurals; give the status config's plural".to_string()
                }),
            };
            match resolved {
                Ok(resolved) => resolved.resource.plural,
                Err(err) => {
                    tracing::debug!(cluster, kind = target.kind, error = %err, "status config's kind not served; left out");
                    continue;
                }
            }
        } else {
            target.plural.clone()
        };
        chosen.push(BundleStatusConfig::from_config(&config, &plural));
    }
    chosen
}
