//! dtc's Istio traffic sub-controller (`its`), as EMCO's `src/its` writes its objects: for each inbound (server)
//! intent (whose `serviceMesh` must be `istio`), a client on a cluster the server is not on reaches the server
//! through the Istio ingress gateway of the server's cluster, read from that cluster's kv-pairs
//! (`istioIngressGatewayAddress`, `…Port`, `…InternalPort`, and `…HttpsPort`/`…HttpPort` for access from
//! outside). On the client's cluster: two ServiceEntries (the server's cluster-qualified hosts and its bare service
//! name, at an address from 240.0.0.2 on) and a DestinationRule per host; on the server's clusters: a passthrough
//! Gateway, a ServiceEntry and a DestinationRule in `istio-system`; with `externalSupport` and a sidecar, a Gateway,
//! VirtualService (and Secret) for the server's external name; for access points, an AuthorizationPolicy.

use std::collections::BTreeMap;

use emco_appcontext::{Catalog, Kind, ResourceRecord};
use emco_model::{ClusterKvPairs, shown, validate_name};
use serde_json::{Value as Json, json};

use super::super::Result;
use super::super::controllers::Deployed;
use super::{DtcIntent, Server, app_index, failed_at};

/// The kv-pairs of a cluster its reads.
const ADDRESS: &str = "istioIngressGatewayAddress";
const PORT: &str = "istioIngressGatewayPort";
const INTERNAL_PORT: &str = "istioIngressGatewayInternalPort";
const HTTP_PORT: &str = "istioIngressGatewayHttpPort";
const HTTPS_PORT: &str = "istioIngressGatewayHttpsPort";
/// The namespace of Istio's own objects.
const ISTIO_NAMESPACE: &str = "istio-system";
const NETWORKING: &str = "networking.istio.io/v1beta1";
const SECURITY: &str = "security.istio.io/v1beta1";

/// The Istio ingress gateway kv-pairs of the cluster `provider+cluster` (the first value of each key, as EMCO
/// reads them), none for a cluster name that does not read.
pub(super) async fn gateway_kv(
    catalog: &Catalog,
    provider: &str,
    cluster: &str,
) -> Result<BTreeMap<String, String>> {
    let mut found = BTreeMap::new();
    if validate_name("cluster", cluster).is_err() || validate_name("cluster provider", provider).is_err() {
        return Ok(found);
    }
    let names = [provider.to_string(), cluster.to_string()];
    for (_, pairs) in catalog.list_as::<ClusterKvPairs>(Kind::ClusterKv, &names).await? {
        for entry in pairs.spec.kv {
            for (key, value) in entry {
                if [ADDRESS, PORT, INTERNAL_PORT, HTTP_PORT, HTTPS_PORT].contains(&key.as_str()) {
                    found.entry(key).or_insert(value);
                }
            }
        }
    }
    Ok(found)
}

/// A server cluster's ingress gateway.
#[derive(Debug, Clone, PartialEq)]
struct Gateway {
    address: String,
    /// The port clients reach it on.
    port: u16,
    /// The port of its passthrough listener.
    internal_port: u16,
    /// The port of its listener for the server's external name (with access from outside).
    external_port: Option<u16>,
}

/// How a server is reached from outside: the gateway's port protocol, TLS mode and the name of its gateway.
#[derive(Debug, Clone, Copy, PartialEq)]
struct External {
    protocol: &'static str,
    tls_mode: &'static str,
    name: &'static str,
    https: bool,
}

/// The external access of `server`: with `externalSupport` and a sidecar (`management.sidecarProxy: yes`), by its
/// TLS type.
fn external(server: &Server) -> std::result::Result<Option<External>, String> {
    let spec = &server.spec;
    let Some(management) = spec.management.as_ref() else {
        return Ok(None);
    };
    if !spec.external_support || management.sidecar_proxy.as_deref() != Some("yes") {
        return Ok(None);
    }
    let tls_type = management.tls_type.as_deref().unwrap_or_default();
    let (protocol, tls_mode, name, https) = match tls_type {
        "MUTUAL" => ("HTTPS", "MUTUAL", "mutual", true),
        "SIMPLE" => ("HTTPS", "SIMPLE", "simple", true),
        "NONE" => ("HTTP", "", "http", false),
        other => {
            return Err(format!(
                "management.tlsType '{}' is none of MUTUAL, SIMPLE, NONE",
                shown(other)
            ));
        }
    };
    Ok(Some(External {
        protocol,
        tls_mode,
        name,
        https,
    }))
}

/// The ingress gateway of `cluster` from its kv-pairs, or which one is missing or not a port.
fn gateway(
    intent: &DtcIntent,
    cluster: &str,
    external: Option<External>,
) -> std::result::Result<Gateway, String> {
    let empty = BTreeMap::new();
    let kv = intent.gateway_kv.get(cluster).unwrap_or(&empty);
    let value = |key: &str| {
        kv.get(key).ok_or_else(|| {
            format!("cluster '{cluster}' has no kv-pair '{key}' (its reaches the server through the cluster's Istio ingress gateway)")
        })
    };
    let port = |key: &str| {
        let text = value(key)?;
        text.parse::<u16>().ok().filter(|port| *port > 0).ok_or_else(|| {
            format!(
                "kv-pair '{key}' of cluster '{cluster}' is '{}', not a port (1 to 65535)",
                shown(text)
            )
        })
    };
    Ok(Gateway {
        address: value(ADDRESS)?.clone(),
        port: port(PORT)?,
        internal_port: port(INTERNAL_PORT)?,
        external_port: match external {
            Some(external) => Some(port(if external.https { HTTPS_PORT } else { HTTP_PORT })?),
            None => None,
        },
    })
}

/// The addresses its gives client ServiceEntries: 240.0.0.2 to 240.0.0.255, one per client cluster, in order.
struct Addresses {
    last: u8,
}

impl Addresses {
    fn next(&mut self) -> std::result::Result<String, String> {
        if self.last == u8::MAX {
            return Err(
                "its ran out of addresses for client ServiceEntries (240.0.0.2 to 240.0.0.255)".into(),
            );
        }
        self.last += 1;
        Ok(format!("240.0.0.{}", self.last))
    }
}

/// Adds the Istio objects of every server intent (see the module's doc).
pub(super) fn apply(intent: &DtcIntent, apps: &mut [Deployed]) -> std::result::Result<(), String> {
    let mut addresses = Addresses { last: 1 };
    for server in &intent.servers {
        let failed = |message: String| failed_at(intent, server, &message);
        let objects = server_objects(intent, server, apps, &mut addresses).map_err(failed)?;
        for (app, cluster, object) in objects {
            let deployed = &mut apps[app];
            let Some(index) = deployed.clusters.iter().position(|name| *name == cluster) else {
                continue;
            };
            deployed
                .add_object(index, ResourceRecord::pending_object(object))
                .map_err(|message| failed(format!("cluster '{cluster}': {message}")))?;
        }
    }
    Ok(())
}

/// The objects its adds for `server`: (app index, cluster, object), the server's clusters' first.
fn server_objects(
    intent: &DtcIntent,
    server: &Server,
    apps: &[Deployed],
    addresses: &mut Addresses,
) -> std::result::Result<Vec<(usize, String, Json)>, String> {
    let spec = &server.spec;
    if spec.service_mesh != "istio" {
        return Err(format!(
            "its adds Istio objects for servers whose serviceMesh is istio, and this one's is '{}'",
            shown(&spec.service_mesh)
        ));
    }
    let namespace = intent.namespace.as_str();
    let service = spec.service.service_name.as_str();
    let external = external(server)?;
    let server_app = app_index(apps, &spec.service.app)?;
    let server_clusters = &apps[server_app].clusters;
    let gateways = server_clusters
        .iter()
        .map(|cluster| gateway(intent, cluster, external))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let hosts = server_clusters
        .iter()
        .map(|cluster| cluster_host(service, namespace, cluster))
        .collect::<std::result::Result<Vec<_>, _>>()?;

    let mut client_objects = Vec::new();
    let mut client_clusters: Vec<&String> = Vec::new();
    let mut policies = Vec::new();
    for (position, client) in server.clients.iter().enumerate() {
        let client_app = app_index(apps, &client.spec.service.app)?;
        let clusters = &apps[client_app].clusters;
        for cluster in clusters {
            if server_clusters.contains(cluster) || client_clusters.contains(&cluster) {
                continue;
            }
            // EMCO takes the gateway of the server's cluster at the client's position.
            let Some(gateway) = gateways.get(position % gateways.len().max(1)) else {
                return Err(format!(
                    "app '{}' is placed on no cluster its clients could reach",
                    spec.service.app
                ));
            };
            let address = addresses.next()?;
            for object in client_resources(server, namespace, &hosts, gateway, &address) {
                client_objects.push((client_app, cluster.clone(), object));
            }
        }
        client_clusters.extend(clusters);
        let mut access_hosts = Vec::new();
        for access in &client.access {
            // EMCO's hosts grow with each access point of a client.
            access_hosts.extend([
                format!("{service}.{namespace}"),
                format!("{service}.{namespace}.svc.cluster.local"),
                service.to_string(),
            ]);
            if external.is_some() {
                access_hosts.push(spec.external_name.clone());
            }
            policies.push(json!({
                "apiVersion": SECURITY,
                "kind": "AuthorizationPolicy",
                "metadata": {"name": spec.service.app, "namespace": namespace},
                "spec": {"action": access.action, "rules": [{"to": [{"operation": {
                    "methods": access.access.clone().unwrap_or_default(),
                    "paths": access.url.clone().unwrap_or_default(),
                    "hosts": access_hosts,
                }}]}]},
            }));
        }
    }

    let mut objects = Vec::new();
    for ((cluster, host), gateway) in server_clusters.iter().zip(&hosts).zip(&gateways) {
        let mut add = |object: Json| objects.push((server_app, cluster.clone(), object));
        if let (Some(external), Some(port)) = (external, gateway.external_port) {
            external_resources(server, namespace, external, port)
                .into_iter()
                .for_each(&mut add);
        }
        if client_clusters.iter().any(|client| *client != cluster) {
            add(istio_gateway(
                ("tls", "TLS", "AUTO_PASSTHROUGH", ""),
                service,
                ISTIO_NAMESPACE,
                host,
                gateway.internal_port,
            ));
            add(service_entry(
                &format!("{service}-se-server"),
                ISTIO_NAMESPACE,
                json!([host]),
                json!({"exportTo": ["."], "endpoints": [{"address": format!("{service}.{namespace}")}]}),
                server,
            ));
            add(destination_rule(
                &format!("{service}-se-server-dr"),
                host,
                ISTIO_NAMESPACE,
            ));
        }
        policies.iter().cloned().for_each(add);
    }
    objects.extend(client_objects);
    Ok(objects)
}

/// `<service>.<namespace>.<provider>.<cluster>`: the server's host on `cluster` (`provider+cluster`).
fn cluster_host(service: &str, namespace: &str, cluster: &str) -> std::result::Result<String, String> {
    let (provider, name) = cluster
        .split_once('+')
        .ok_or_else(|| format!("'{cluster}' is not a cluster name (provider+cluster)"))?;
    Ok(format!("{service}.{namespace}.{provider}.{name}"))
}

/// An Istio networking object.
fn istio(kind: &str, name: &str, namespace: &str, spec: Json) -> Json {
    json!({
        "apiVersion": NETWORKING,
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    })
}

/// The Gateway `<name>-gateway` of the ingress gateway's pods, one server: `(port name, protocol, TLS mode,
/// credential)`, the host and port.
fn istio_gateway(
    (port_name, protocol, tls_mode, credential): (&str, &str, &str, &str),
    name: &str,
    namespace: &str,
    host: &str,
    port: u16,
) -> Json {
    let mut tls = serde_json::Map::new();
    if !tls_mode.is_empty() {
        tls.insert("mode".into(), json!(tls_mode));
    }
    if !credential.is_empty() {
        tls.insert("credentialName".into(), json!(credential));
    }
    let mut listener = json!({
        "port": {"name": port_name, "number": port, "protocol": protocol},
        "hosts": [host],
        "name": "tls",
    });
    if !tls.is_empty() {
        listener["tls"] = Json::Object(tls);
    }
    istio(
        "Gateway",
        &format!("{name}-gateway"),
        namespace,
        json!({"servers": [listener], "selector": {"istio": "ingressgateway"}}),
    )
}

/// A ServiceEntry of the server's port for `hosts`, with `more` (addresses, exportTo, endpoints).
fn service_entry(name: &str, namespace: &str, hosts: Json, more: Json, server: &Server) -> Json {
    let mut spec = json!({
        "hosts": hosts,
        "location": "MESH_INTERNAL",
        "resolution": "DNS",
        "ports": [{"name": "tcp", "number": server.spec.port, "protocol": server.spec.protocol}],
    });
    if let (Some(spec), Json::Object(more)) = (spec.as_object_mut(), more) {
        spec.extend(more);
    }
    istio("ServiceEntry", name, namespace, spec)
}

/// A DestinationRule of mutual TLS inside the mesh for `host`.
fn destination_rule(name: &str, host: &str, namespace: &str) -> Json {
    istio(
        "DestinationRule",
        name,
        namespace,
        json!({"host": host, "trafficPolicy": {"tls": {"mode": "ISTIO_MUTUAL"}}}),
    )
}

/// What a client's cluster gets to reach `server` through `gateway`: ServiceEntries for the server's
/// cluster-qualified hosts and for its service name at `address`, and a DestinationRule for each host.
fn client_resources(
    server: &Server,
    namespace: &str,
    hosts: &[String],
    gateway: &Gateway,
    address: &str,
) -> Vec<Json> {
    let service = server.spec.service.service_name.as_str();
    let more = json!({
        "addresses": [address],
        "endpoints": [{"address": gateway.address, "ports": {"tcp": gateway.port}}],
    });
    let mut objects = vec![
        service_entry(
            &format!("{service}-se-client0"),
            namespace,
            json!(hosts),
            more.clone(),
            server,
        ),
        service_entry(
            &format!("{service}-se-client1"),
            namespace,
            json!([service]),
            more,
            server,
        ),
    ];
    for (index, host) in hosts.iter().enumerate() {
        objects.push(destination_rule(
            &format!("{service}-dr-client{index}"),
            host,
            namespace,
        ));
    }
    objects.push(destination_rule(
        &format!("{service}-dr-client-svcname"),
        service,
        namespace,
    ));
    objects
}

/// What a server's cluster gets for its external name: a Gateway on the gateway's `port`, a VirtualService
/// routing it to the service and, for HTTPS, the Secret of its certificates.
fn external_resources(server: &Server, namespace: &str, external: External, port: u16) -> Vec<Json> {
    let spec = &server.spec;
    let service = spec.service.service_name.as_str();
    let gateway_name = format!("{service}-ext-{}", external.name);
    let credential = format!("{service}-credential");
    let mut objects = vec![
        istio_gateway(
            ("extsvc", external.protocol, external.tls_mode, &credential),
            &gateway_name,
            namespace,
            &spec.external_name,
            port,
        ),
        istio(
            "VirtualService",
            &format!("{service}-vs-{gateway_name}-gateway"),
            namespace,
            json!({
                "hosts": [spec.external_name],
                "gateways": [format!("{gateway_name}-gateway")],
                "http": [{
                    "name": format!("{service}-http-route"),
                    "match": [{"port": port}],
                    "route": [{"destination": {"host": service, "port": {"number": spec.port}}}],
                }],
            }),
        ),
    ];
    if external.https {
        let certs = spec
            .external
            .as_ref()
            .and_then(|external| external.external_certs.clone())
            .unwrap_or_default();
        let ca = if external.tls_mode == "MUTUAL" {
            certs.ca_certificate
        } else {
            String::new()
        };
        objects.push(json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": credential, "namespace": ISTIO_NAMESPACE},
            "type": "Opaque",
            "data": {"ca.crt": ca, "tls.crt": certs.service_certificate, "tls.key": certs.service_private_key},
        }));
    }
    objects
}

#[cfg(test)]
mod tests;
