//! Cluster network intents (ncm) described to the lifecycle engine: applying a cluster's intents reads its
//! networks and provider networks and builds a context with the single app `network-intents` on that one cluster,
//! holding their `k8s.plugin.opnfv.org/v1alpha1` `ProviderNetwork` and `Network` objects (`reference/emco.md`
//! §2.3). The lifecycle state lives on the cluster, as ncm keeps it.

use emco_appcontext::{
    AppContexts, AppMeta, Catalog, ClusterRecord, ContextMeta, ContextOwner, Kind, ResourcePath,
    ResourceRecord,
};
use emco_model::network::{Network, ProviderNetwork};

use super::{Built, DEFAULT_NAMESPACE, Result};

/// The one app of a network-intents context, as ncm names it.
pub const NETWORK_INTENTS_APP: &str = "network-intents";

/// A cluster's network intents, in creation order.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Inputs {
    provider_networks: Vec<ProviderNetwork>,
    networks: Vec<Network>,
}

/// Reads the networks and provider networks of the cluster at `cluster`.
pub(super) async fn read_inputs(catalog: &Catalog, cluster: &ResourcePath) -> Result<Inputs> {
    let provider_networks = catalog
        .list_as::<ProviderNetwork>(Kind::ProviderNetwork, cluster.names())
        .await?
        .into_iter()
        .map(|(_, body)| body)
        .collect();
    let networks = catalog
        .list_as::<Network>(Kind::Network, cluster.names())
        .await?
        .into_iter()
        .map(|(_, body)| body)
        .collect();
    Ok(Inputs {
        provider_networks,
        networks,
    })
}

/// The context: app `network-intents` on `provider+cluster`, provider networks first (networks may ride on
/// them), each object as ovn4nfv defines it. A cluster without intents gets a context without resources.
pub(super) fn build(cluster: &ResourcePath, inputs: &Inputs) -> Result<Built> {
    let names = cluster.names();
    let cluster_name = names.join("+");
    let mut resources = Vec::new();
    for network in &inputs.provider_networks {
        resources.push(ResourceRecord::pending_object(
            emco_k8s::network::provider_network_object(network),
        ));
    }
    for network in &inputs.networks {
        resources.push(ResourceRecord::pending_object(emco_k8s::network::network_object(
            network,
        )));
    }
    let meta = ContextMeta::for_owner(
        AppContexts::new_id(),
        ContextOwner::ClusterNetworks {
            provider: names[0].clone(),
            cluster: names[1].clone(),
        },
        DEFAULT_NAMESPACE,
        vec![AppMeta {
            name: NETWORK_INTENTS_APP.to_string(),
            dependencies: Vec::new(),
            clusters: vec![cluster_name.clone()],
            excluded: Vec::new(),
        }],
    );
    Ok(Built {
        meta,
        records: vec![ClusterRecord::pending(
            NETWORK_INTENTS_APP,
            &cluster_name,
            resources,
        )],
        extra: Vec::new(),
    })
}
