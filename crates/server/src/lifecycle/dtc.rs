//! EMCO's distributed traffic controller (`dtc`): the DIG's intents name a traffic-group-intent
//! (`"dtc": "<intent>"`); dtc runs the sub-controllers registered under `/v2/dtc-controllers` over it, by priority.
//! The network-policy sub-controller (`nps`): for each of its inbound (server) intents that has clients, nps adds
//! to the server app, on each of its clusters labelled `networkpolicy-supported`, the NetworkPolicy
//! `<intent>-<server>` EMCO writes (`src/nps/internal/networkpolicy`): ingress to the pods of the server's label,
//! from each client's pods (by label) and — with `externalSupport` — its address ranges, else from anywhere
//! (`0.0.0.0/0`), on the server's protocol and port. The Istio traffic sub-controller (`its`, in `dtc/its.rs`)
//! adds the Istio objects that let clients on other clusters reach the server through its cluster's ingress
//! gateway. A sub-controller emco does not have is refused at instantiate, naming it.

mod its;

use std::collections::{BTreeMap, BTreeSet};

use emco_appcontext::{Catalog, Kind, ResourcePath, ResourceRecord};
use emco_model::dtc::{
    InboundClientsAccessIntent, InboundClientsAccessSpec, InboundClientsIntent, InboundClientsSpec,
    InboundServerIntent, InboundServerSpec,
};
use emco_model::{Controller, shown};
use serde_json::{Value as Json, json};

use super::controllers::Deployed;
use super::{LifecycleError, Result};

/// The name dtc is registered under in EMCO's examples.
pub(super) const CONTROLLER_NAME: &str = "dtc";
/// The network-policy sub-controller.
const NPS: &str = "nps";
/// The Istio traffic sub-controller.
const ITS: &str = "its";
/// The cluster label that says a cluster enforces NetworkPolicies (nps writes them only there).
pub(super) const NETWORK_POLICY_LABEL: &str = "networkpolicy-supported";

/// A traffic-group-intent, read for an instantiation.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct DtcIntent {
    name: String,
    servers: Vec<Server>,
    /// The sub-controllers registered under `/v2/dtc-controllers` ([`NPS`], [`ITS`]), in the order they run.
    sub_controllers: Vec<String>,
    /// The clusters (`provider+cluster`) labelled [`NETWORK_POLICY_LABEL`], among the servers' apps' clusters.
    policy_clusters: BTreeSet<String>,
    /// The namespace the DIG deploys to.
    namespace: String,
    /// The Istio ingress gateway kv-pairs of the servers' apps' clusters (read when `its` is registered).
    gateway_kv: BTreeMap<String, BTreeMap<String, String>>,
}

/// An inbound intent with its clients.
#[derive(Debug, Clone, PartialEq)]
struct Server {
    name: String,
    spec: InboundServerSpec,
    clients: Vec<Client>,
}

/// An inbound clients intent with its access points.
#[derive(Debug, Clone, PartialEq)]
struct Client {
    spec: InboundClientsSpec,
    access: Vec<InboundClientsAccessSpec>,
}

/// Reads the traffic-group-intent `intent` of the DIG at `dig` (deploying to `namespace`): its inbound intents,
/// their clients and access points in creation order, the sub-controllers registered under
/// `/v2/dtc-controllers`, which of the servers' clusters (`app_clusters`) enforce NetworkPolicies and, for `its`,
/// their Istio ingress gateway kv-pairs.
pub(super) async fn read(
    catalog: &Catalog,
    dig: &ResourcePath,
    intent: &str,
    namespace: &str,
    app_clusters: &BTreeMap<String, Vec<String>>,
) -> Result<DtcIntent> {
    let intent_path = dig.child(Kind::TrafficGroupIntent, &[intent]);
    if !catalog.exists(&intent_path).await? {
        return Err(LifecycleError::Incomplete(format!(
            "DeploymentIntentGroup '{}' names traffic group intent '{intent}', which does not exist (create it under …/traffic-group-intents)",
            dig.name()
        )));
    }
    let mut sub_controllers: Vec<(i64, String)> = catalog
        .list_as::<Controller>(Kind::DtcController, &[])
        .await?
        .into_iter()
        .map(|(path, controller)| (controller.spec.priority, path.name().to_string()))
        .collect();
    sub_controllers.sort();
    if let Some((_, other)) = sub_controllers
        .iter()
        .find(|(_, name)| name != NPS && name != ITS)
    {
        return Err(LifecycleError::Controller(format!(
            "dtc sub-controller '{}' is registered under /v2/dtc-controllers, and emco's dtc runs '{NPS}' (network policies) and '{ITS}' (Istio traffic) only",
            shown(other)
        )));
    }
    let sub_controllers: Vec<String> = sub_controllers.into_iter().map(|(_, name)| name).collect();
    let istio = sub_controllers.iter().any(|name| name == ITS);
    let mut servers = Vec::new();
    let mut policy_clusters = BTreeSet::new();
    let mut gateway_kv = BTreeMap::new();
    for (server_path, server) in catalog
        .list_as::<InboundServerIntent>(Kind::InboundServerIntent, intent_path.names())
        .await?
    {
        let mut clients = Vec::new();
        for (clients_path, client) in catalog
            .list_as::<InboundClientsIntent>(Kind::InboundClientsIntent, server_path.names())
            .await?
        {
            let access = catalog
                .list_as::<InboundClientsAccessIntent>(Kind::InboundClientsAccessIntent, clients_path.names())
                .await?
                .into_iter()
                .map(|(_, access)| access.spec)
                .collect();
            clients.push(Client {
                spec: client.spec,
                access,
            });
        }
        for cluster in app_clusters.get(&server.spec.service.app).into_iter().flatten() {
            let Some((provider, name)) = cluster.split_once('+') else {
                continue;
            };
            if istio && !gateway_kv.contains_key(cluster) {
                gateway_kv.insert(cluster.clone(), its::gateway_kv(catalog, provider, name).await?);
            }
            let label = ResourcePath::new(
                Kind::ClusterLabel,
                vec![
                    provider.to_string(),
                    name.to_string(),
                    NETWORK_POLICY_LABEL.to_string(),
                ],
            );
            if catalog.exists(&label).await? {
                policy_clusters.insert(cluster.clone());
            }
        }
        servers.push(Server {
            name: server_path.name().to_string(),
            spec: server.spec,
            clients,
        });
    }
    Ok(DtcIntent {
        name: intent.to_string(),
        servers,
        sub_controllers,
        policy_clusters,
        namespace: namespace.to_string(),
        gateway_kv,
    })
}

/// Runs the registered sub-controllers over the apps' objects, in order: nps adds each server's NetworkPolicy,
/// its the Istio objects.
pub(super) fn apply(intent: &DtcIntent, apps: &mut [Deployed]) -> std::result::Result<(), String> {
    if intent.sub_controllers.is_empty() {
        return Ok(());
    }
    if intent.servers.is_empty() {
        return Err(format!(
            "traffic group intent '{}' has no inbound intents",
            intent.name
        ));
    }
    for sub_controller in &intent.sub_controllers {
        if sub_controller == ITS {
            its::apply(intent, apps)?;
        } else {
            network_policies(intent, apps)?;
        }
    }
    Ok(())
}

/// `traffic group intent '<intent>', inbound intent '<server>': <message>`.
fn failed_at(intent: &DtcIntent, server: &Server, message: &str) -> String {
    format!(
        "traffic group intent '{}', inbound intent '{}': {message}",
        intent.name, server.name
    )
}

/// The index of `app` among the apps, or why not.
fn app_index(apps: &[Deployed], app: &str) -> std::result::Result<usize, String> {
    apps.iter()
        .position(|deployed| deployed.app == app)
        .ok_or_else(|| format!("the composite app has no app '{app}'"))
}

/// nps: adds each server's NetworkPolicy on its clusters that enforce them.
fn network_policies(intent: &DtcIntent, apps: &mut [Deployed]) -> std::result::Result<(), String> {
    for server in &intent.servers {
        if server.clients.is_empty() {
            // EMCO's nps leaves a server without clients alone.
            continue;
        }
        let failed = |message: String| failed_at(intent, server, &message);
        let policy = network_policy(&intent.name, server).map_err(failed)?;
        let app = &mut apps[app_index(apps, &server.spec.service.app).map_err(failed)?];
        for index in 0..app.clusters.len() {
            if !intent.policy_clusters.contains(&app.clusters[index]) {
                continue;
            }
            let cluster = app.clusters[index].clone();
            app.add_object(index, ResourceRecord::pending_object(policy.clone()))
                .map_err(|message| failed(format!("cluster '{cluster}': {message}")))?;
        }
    }
    Ok(())
}

/// `key=value` of an app label as a one-entry selector.
fn selector(field: &str, label: &str) -> std::result::Result<Json, String> {
    match label.split('=').collect::<Vec<_>>()[..] {
        [key, value] => Ok(json!({ key: value })),
        _ => Err(format!(
            "{field} '{}' is not a valid app label (key=value)",
            shown(label)
        )),
    }
}

/// The NetworkPolicy nps writes for `server` of the traffic group intent `intent`, field for field.
fn network_policy(intent: &str, server: &Server) -> std::result::Result<Json, String> {
    let spec = &server.spec;
    let mut from = Vec::new();
    for client in &server.clients {
        let clients = &client.spec;
        if !clients.service.app_label.is_empty() {
            from.push(json!({"podSelector": {"matchLabels": selector("the clients' appLabel", &clients.service.app_label)?}}));
        }
        if spec.external_support {
            for cidr in clients.cidrs.iter().flatten() {
                from.push(json!({"ipBlock": {"cidr": cidr}}));
            }
        }
    }
    if !spec.external_support {
        from.push(json!({"ipBlock": {"cidr": "0.0.0.0/0"}}));
    }
    Ok(json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": format!("{intent}-{}", server.name)},
        "spec": {
            "podSelector": {"matchLabels": selector("appLabel", &spec.service.app_label)?},
            "policyTypes": ["Ingress"],
            "ingress": [{
                "from": from,
                "ports": [{"protocol": spec.protocol}, {"port": spec.port}],
            }],
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(external: bool) -> Server {
        Server {
            name: "http-server-intent".into(),
            spec: serde_json::from_value(
                json!({"app": "http-server", "appLabel": "app=http-server", "serviceName": "http-service",
                "port": 3550, "protocol": "TCP", "externalSupport": external}),
            )
            .unwrap(),
            clients: vec![Client {
                spec: serde_json::from_value(json!({"app": "http-client", "appLabel": "app=http-client",
                "serviceName": "http-client", "namespaces": [], "cidrs": ["10.10.0.0/16"]}))
                .unwrap(),
                access: Vec::new(),
            }],
        }
    }

    #[test]
    fn the_policy_is_the_one_nps_writes() {
        let policy = network_policy("tgi", &server(false)).unwrap();
        assert_eq!(
            policy,
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "tgi-http-server-intent"},
                "spec": {"podSelector": {"matchLabels": {"app": "http-server"}}, "policyTypes": ["Ingress"],
                    "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "http-client"}}}, {"ipBlock": {"cidr": "0.0.0.0/0"}}],
                        "ports": [{"protocol": "TCP"}, {"port": 3550}]}]}})
        );
        let external = network_policy("tgi", &server(true)).unwrap();
        assert_eq!(
            external["spec"]["ingress"][0]["from"],
            json!([{"podSelector": {"matchLabels": {"app": "http-client"}}}, {"ipBlock": {"cidr": "10.10.0.0/16"}}])
        );
        let mut broken = server(false);
        broken.spec.service.app_label = "app=a=b".into();
        assert!(
            network_policy("tgi", &broken)
                .unwrap_err()
                .contains("not a valid app label")
        );
    }

    #[test]
    fn policies_go_to_the_clusters_that_enforce_them_only() {
        let deployment =
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "r1-http-server"}});
        let mut apps = vec![super::super::controllers::on_two_clusters(
            "http-server",
            &deployment,
        )];
        let intent = DtcIntent {
            name: "tgi".into(),
            servers: vec![server(false)],
            sub_controllers: vec![NPS.to_string()],
            policy_clusters: BTreeSet::from(["p+b".to_string()]),
            namespace: "default".into(),
            gateway_kv: BTreeMap::new(),
        };
        apply(&intent, &mut apps).unwrap();
        assert_eq!(apps[0].objects[0].len(), 1);
        assert_eq!(apps[0].objects[1].len(), 2);
        assert_eq!(apps[0].objects[1][1].kind, "NetworkPolicy");
        let none = DtcIntent {
            servers: Vec::new(),
            ..intent
        };
        assert!(
            apply(&none, &mut apps)
                .unwrap_err()
                .contains("has no inbound intents")
        );
    }
}
