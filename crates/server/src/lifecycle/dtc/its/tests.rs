//! The objects its writes, checked against EMCO's `src/its` field for field and against the objects EMCO's
//! `examples/dtc/istio_traffic` README lists.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::json;

use super::super::{Client, DtcIntent, ITS, Server};
use super::*;

/// EMCO's istio_traffic intent: `http-service` of app `http-server` on TCP 30083, its client `http-client`.
fn server(spec: Json) -> Server {
    let mut body = json!({"app": "http-server", "appLabel": "app=http-server", "serviceName": "http-service",
        "port": 30083, "protocol": "TCP", "serviceMesh": "istio"});
    if let (Some(body), Json::Object(more)) = (body.as_object_mut(), spec) {
        body.extend(more);
    }
    Server {
        name: "serverin".into(),
        spec: serde_json::from_value(body).unwrap(),
        clients: vec![Client {
            spec: serde_json::from_value(json!({"app": "http-client", "appLabel": "app=http-client",
                "serviceName": "http-client-svc", "namespaces": [], "cidrs": []}))
            .unwrap(),
            access: Vec::new(),
        }],
    }
}

/// The istio_traffic example's kv-pairs of `provider1+cluster2`.
fn gateway_kv() -> BTreeMap<String, BTreeMap<String, String>> {
    let kv = [
        (ADDRESS, "192.168.121.15"),
        (PORT, "32001"),
        (INTERNAL_PORT, "15443"),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_string(), value.to_string()))
    .collect();
    BTreeMap::from([("provider1+cluster2".to_string(), kv)])
}

fn intent(servers: Vec<Server>) -> DtcIntent {
    DtcIntent {
        name: "testdtc".into(),
        servers,
        sub_controllers: vec![ITS.to_string()],
        policy_clusters: BTreeSet::new(),
        namespace: "default".into(),
        gateway_kv: gateway_kv(),
    }
}

/// The client on `client_clusters`, the server on cluster2, each rendering a Deployment.
fn apps(client_clusters: &[&str]) -> Vec<Deployed> {
    let deployed = |app: &str, clusters: &[&str]| {
        let clusters: Vec<String> = clusters.iter().map(|c| format!("provider1+{c}")).collect();
        let deployment = ResourceRecord::pending_object(
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": format!("r1-{app}")}}),
        );
        Deployed::rendered(app, &clusters, &[], vec![vec![deployment]; clusters.len()])
    };
    vec![
        deployed("http-client", client_clusters),
        deployed("http-server", &["cluster2"]),
    ]
}

/// `(kind, namespace, name)` of an app's objects on its cluster at `index`, after the rendered Deployment.
fn added(app: &Deployed, index: usize) -> Vec<(String, String, String)> {
    app.objects[index][1..]
        .iter()
        .map(|record| {
            let object: Json = serde_json::from_str(record.manifest.as_str()).unwrap();
            (
                record.kind.clone(),
                object["metadata"]["namespace"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                record.name.clone(),
            )
        })
        .collect()
}

fn object(app: &Deployed, index: usize, name: &str) -> Json {
    let record = app.objects[index]
        .iter()
        .find(|record| record.name == name)
        .unwrap();
    serde_json::from_str(record.manifest.as_str()).unwrap()
}

fn triple(kind: &str, namespace: &str, name: &str) -> (String, String, String) {
    (kind.into(), namespace.into(), name.into())
}

#[test]
fn the_istio_traffic_example_gets_the_objects_its_readme_lists() {
    let mut apps = apps(&["cluster1"]);
    apply(&intent(vec![server(json!({}))]), &mut apps).unwrap();
    assert_eq!(
        added(&apps[0], 0),
        vec![
            triple("ServiceEntry", "default", "http-service-se-client0"),
            triple("ServiceEntry", "default", "http-service-se-client1"),
            triple("DestinationRule", "default", "http-service-dr-client0"),
            triple("DestinationRule", "default", "http-service-dr-client-svcname"),
        ]
    );
    assert_eq!(
        added(&apps[1], 0),
        vec![
            triple("Gateway", "istio-system", "http-service-gateway"),
            triple("ServiceEntry", "istio-system", "http-service-se-server"),
            triple("DestinationRule", "istio-system", "http-service-se-server-dr"),
        ]
    );
    assert_eq!(
        object(&apps[0], 0, "http-service-se-client0"),
        json!({"apiVersion": "networking.istio.io/v1beta1", "kind": "ServiceEntry",
            "metadata": {"name": "http-service-se-client0", "namespace": "default"},
            "spec": {"hosts": ["http-service.default.provider1.cluster2"], "addresses": ["240.0.0.2"],
                "location": "MESH_INTERNAL", "resolution": "DNS",
                "ports": [{"name": "tcp", "number": 30083, "protocol": "TCP"}],
                "endpoints": [{"address": "192.168.121.15", "ports": {"tcp": 32001}}]}})
    );
    assert_eq!(
        object(&apps[0], 0, "http-service-se-client1")["spec"]["hosts"],
        json!(["http-service"])
    );
    assert_eq!(
        object(&apps[0], 0, "http-service-dr-client0")["spec"],
        json!({"host": "http-service.default.provider1.cluster2", "trafficPolicy": {"tls": {"mode": "ISTIO_MUTUAL"}}})
    );
    assert_eq!(
        object(&apps[1], 0, "http-service-gateway")["spec"],
        json!({"servers": [{"port": {"name": "tls", "number": 15443, "protocol": "TLS"},
            "hosts": ["http-service.default.provider1.cluster2"], "tls": {"mode": "AUTO_PASSTHROUGH"}, "name": "tls"}],
            "selector": {"istio": "ingressgateway"}})
    );
    assert_eq!(
        object(&apps[1], 0, "http-service-se-server")["spec"],
        json!({"hosts": ["http-service.default.provider1.cluster2"], "exportTo": ["."],
            "location": "MESH_INTERNAL", "resolution": "DNS",
            "ports": [{"name": "tcp", "number": 30083, "protocol": "TCP"}],
            "endpoints": [{"address": "http-service.default"}]})
    );
}

#[test]
fn a_client_on_the_servers_cluster_needs_nothing_and_each_other_cluster_gets_its_own_address() {
    let mut apps = apps(&["cluster2"]);
    apply(&intent(vec![server(json!({}))]), &mut apps).unwrap();
    assert!(added(&apps[0], 0).is_empty());
    assert!(added(&apps[1], 0).is_empty());

    let mut apps = apps_on_three();
    apply(&intent(vec![server(json!({}))]), &mut apps).unwrap();
    let addresses: Vec<Json> = (0..2)
        .map(|index| object(&apps[0], index, "http-service-se-client0")["spec"]["addresses"].clone())
        .collect();
    assert_eq!(addresses, vec![json!(["240.0.0.2"]), json!(["240.0.0.3"])]);
    assert!(
        added(&apps[0], 2).is_empty(),
        "the client's copy on the server's cluster"
    );
}

fn apps_on_three() -> Vec<Deployed> {
    apps(&["cluster1", "cluster3", "cluster2"])
}

#[test]
fn what_its_cannot_do_is_refused_naming_the_intent_and_the_reason() {
    let mut none = server(json!({"serviceMesh": "none"}));
    none.name = "plain".into();
    let refused = apply(&intent(vec![none]), &mut apps(&["cluster1"])).unwrap_err();
    assert!(
        refused.contains("inbound intent 'plain'") && refused.contains("serviceMesh"),
        "{refused}"
    );

    let mut missing = intent(vec![server(json!({}))]);
    missing.gateway_kv.values_mut().for_each(|kv| {
        kv.remove(INTERNAL_PORT);
    });
    let refused = apply(&missing, &mut apps(&["cluster1"])).unwrap_err();
    assert!(
        refused.contains("'provider1+cluster2' has no kv-pair 'istioIngressGatewayInternalPort'"),
        "{refused}"
    );

    let mut bad_port = intent(vec![server(json!({}))]);
    bad_port.gateway_kv.values_mut().for_each(|kv| {
        kv.insert(PORT.into(), "70000".into());
    });
    let refused = apply(&bad_port, &mut apps(&["cluster1"])).unwrap_err();
    assert!(refused.contains("'70000', not a port"), "{refused}");

    let external = server(
        json!({"externalSupport": true, "externalName": "http.example.com",
        "management": {"sidecarProxy": "yes", "tlsType": "ODD"}}),
    );
    let refused = apply(&intent(vec![external]), &mut apps(&["cluster1"])).unwrap_err();
    assert!(refused.contains("tlsType 'ODD'"), "{refused}");

    let mut addresses = Addresses { last: 254 };
    assert_eq!(addresses.next().unwrap(), "240.0.0.255");
    assert!(addresses.next().unwrap_err().contains("ran out of addresses"));
}

#[test]
fn access_from_outside_adds_a_gateway_virtual_service_and_secret_and_access_points_a_policy() {
    let mut external = server(
        json!({"externalSupport": true, "externalName": "http.example.com",
        "management": {"sidecarProxy": "yes", "tlsType": "MUTUAL"},
        "external": {"externalCerts": {"serviceCertificate": "Y2VydA==", "servicePrivateKey": "a2V5", "caCertificate": "Y2E="}}}),
    );
    external.clients[0].access = vec![
        serde_json::from_value(json!({"action": "ALLOW", "url": ["/status/*"], "access": ["GET"]})).unwrap(),
    ];
    let mut intent = intent(vec![external]);
    intent
        .gateway_kv
        .values_mut()
        .for_each(|kv| drop(kv.insert(HTTPS_PORT.into(), "32443".into())));
    let mut apps = apps(&["cluster1"]);
    apply(&intent, &mut apps).unwrap();
    assert_eq!(
        added(&apps[1], 0),
        vec![
            triple("Gateway", "default", "http-service-ext-mutual-gateway"),
            triple(
                "VirtualService",
                "default",
                "http-service-vs-http-service-ext-mutual-gateway"
            ),
            triple("Secret", "istio-system", "http-service-credential"),
            triple("Gateway", "istio-system", "http-service-gateway"),
            triple("ServiceEntry", "istio-system", "http-service-se-server"),
            triple("DestinationRule", "istio-system", "http-service-se-server-dr"),
            triple("AuthorizationPolicy", "default", "http-server"),
        ]
    );
    assert_eq!(
        object(&apps[1], 0, "http-service-ext-mutual-gateway")["spec"]["servers"],
        json!([{"port": {"name": "extsvc", "number": 32443, "protocol": "HTTPS"}, "hosts": ["http.example.com"],
            "tls": {"mode": "MUTUAL", "credentialName": "http-service-credential"}, "name": "tls"}])
    );
    assert_eq!(
        object(&apps[1], 0, "http-service-vs-http-service-ext-mutual-gateway")["spec"],
        json!({"hosts": ["http.example.com"], "gateways": ["http-service-ext-mutual-gateway"],
            "http": [{"name": "http-service-http-route", "match": [{"port": 32443}],
                "route": [{"destination": {"host": "http-service", "port": {"number": 30083}}}]}]})
    );
    assert_eq!(
        object(&apps[1], 0, "http-service-credential")["data"],
        json!({"ca.crt": "Y2E=", "tls.crt": "Y2VydA==", "tls.key": "a2V5"})
    );
    assert_eq!(
        object(&apps[1], 0, "http-server"),
        json!({"apiVersion": "security.istio.io/v1beta1", "kind": "AuthorizationPolicy",
            "metadata": {"name": "http-server", "namespace": "default"},
            "spec": {"action": "ALLOW", "rules": [{"to": [{"operation": {"methods": ["GET"], "paths": ["/status/*"],
                "hosts": ["http-service.default", "http-service.default.svc.cluster.local", "http-service", "http.example.com"]}}]}]}})
    );

    let mut no_https_port = intent.clone();
    no_https_port
        .gateway_kv
        .values_mut()
        .for_each(|kv| drop(kv.remove(HTTPS_PORT)));
    let refused = apply(&no_https_port, &mut self::apps(&["cluster1"])).unwrap_err();
    assert!(
        refused.contains("no kv-pair 'istioIngressGatewayHttpsPort'"),
        "{refused}"
    );
}
