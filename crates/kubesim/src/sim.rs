//! Many simulated clusters in one process: start them, reach them (URL, kubeconfig, `kube::Client`), switch their
//! faults, stop them. Each cluster serves HTTPS with a CA of its own (made at start) unless its configuration asks
//! for plain HTTP; kubeconfigs and clients carry the CA and the admin client certificate (or, over plain HTTP, the
//! admin token), and [`SimCluster::kubeconfig_for`] makes them for other users.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use tokio::task::JoinHandle;

use crate::cluster::{ADMIN_TOKEN, ClusterConfig, ClusterShared, Faults};
use crate::server::{ClusterServer, SharedListener};
use crate::tls::{ADMIN_USER, ClientCredentials, ClusterAuthority, TlsError};

/// How a kubeconfig or client authenticates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credentials {
    /// A client certificate signed by the cluster's CA.
    Certificate(ClientCredentials),
    /// A bearer token.
    Token(String),
}

/// One running cluster.
pub struct SimCluster {
    shared: Arc<ClusterShared>,
    server: ClusterServer,
    controllers: JoinHandle<()>,
}

impl SimCluster {
    /// Starts a cluster on `address` (port 0: a free port).
    pub async fn start(config: ClusterConfig, address: SocketAddr) -> std::io::Result<Self> {
        let (shared, acceptor) = Self::prepare(config, address.ip())?;
        let server = ClusterServer::start(shared.clone(), address, acceptor).await?;
        Ok(Self::run(shared, server))
    }

    /// Starts a cluster behind `listener`, reached with the TLS server name [`crate::tls::server_name`] of its name
    /// (its kubeconfig's `tls-server-name`). HTTPS only.
    pub fn start_shared(config: ClusterConfig, listener: &SharedListener) -> std::io::Result<Self> {
        let (shared, acceptor) = Self::prepare(config, listener.address().ip())?;
        let server = ClusterServer::start_shared(shared.clone(), listener, acceptor)?;
        Ok(Self::run(shared, server))
    }

    /// The cluster's state and, over HTTPS, the acceptor of its own CA and serving certificate.
    fn prepare(
        config: ClusterConfig,
        ip: std::net::IpAddr,
    ) -> std::io::Result<(Arc<ClusterShared>, Option<tokio_rustls::TlsAcceptor>)> {
        let initial_revision = u64::try_from(jiff::Timestamp::now().as_microsecond()).unwrap_or(1);
        let authority = if config.insecure_http {
            None
        } else {
            Some(ClusterAuthority::new(&config.name, ip)?)
        };
        let acceptor = authority.as_ref().map(|a| a.acceptor().clone());
        let shared = ClusterShared::new(config, initial_revision, authority);
        crate::controllers::bootstrap(&shared);
        Ok((shared, acceptor))
    }

    fn run(shared: Arc<ClusterShared>, server: ClusterServer) -> Self {
        let controllers = tokio::spawn(crate::controllers::run(shared.clone()));
        Self {
            shared,
            server,
            controllers,
        }
    }

    /// The cluster's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// The shared state (store, faults).
    #[must_use]
    pub fn shared(&self) -> &Arc<ClusterShared> {
        &self.shared
    }

    /// The API's base URL (`https://127.0.0.1:port`, or `http://` for a plain-HTTP cluster).
    #[must_use]
    pub fn url(&self) -> String {
        let scheme = if self.server.is_https() { "https" } else { "http" };
        format!("{scheme}://{}", self.server.address())
    }

    /// The cluster's CA certificate (PEM); none for a plain-HTTP cluster.
    #[must_use]
    pub fn ca_pem(&self) -> Option<&str> {
        self.shared.authority.as_ref().map(ClusterAuthority::ca_pem)
    }

    /// The admin's credentials: the client certificate (CN `kubesim-admin`, O `system:masters`) over HTTPS, the
    /// admin token over plain HTTP.
    #[must_use]
    pub fn admin_credentials(&self) -> Credentials {
        match &self.shared.authority {
            Some(authority) => Credentials::Certificate(authority.admin().clone()),
            None => Credentials::Token(ADMIN_TOKEN.to_string()),
        }
    }

    /// A client certificate for `user` in `group`, signed by the cluster's CA.
    pub fn issue_client_certificate(
        &self,
        user: &str,
        group: Option<&str>,
    ) -> Result<ClientCredentials, TlsError> {
        self.shared
            .authority
            .as_ref()
            .ok_or(TlsError::PlainHttp)?
            .issue_client(user, group)
    }

    /// Accepts `token` as a bearer token of `user` in `groups`.
    pub fn add_token(&self, token: &str, user: &str, groups: &[&str]) {
        let groups: Vec<String> = groups.iter().map(|g| (*g).to_string()).collect();
        self.shared.add_token(token, user, &groups);
    }

    /// The admin kubeconfig of this cluster (namespace `default`).
    #[must_use]
    pub fn kubeconfig(&self) -> String {
        self.kubeconfig_for(ADMIN_USER, &self.admin_credentials())
    }

    /// A kubeconfig for this cluster whose user entry is named `{cluster}-{user}` and authenticates with
    /// `credentials` (namespace `default`).
    #[must_use]
    pub fn kubeconfig_for(&self, user: &str, credentials: &Credentials) -> String {
        let name = self.name();
        let base64 = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
        let mut authority = self
            .ca_pem()
            .map(|ca| format!("\n    certificate-authority-data: {}", base64(ca)))
            .unwrap_or_default();
        if let Some(server_name) = self.server.server_name() {
            authority.push_str(&format!("\n    tls-server-name: {server_name}"));
        }
        let user_entry = match credentials {
            Credentials::Certificate(certificate) => format!(
                "client-certificate-data: {}\n    client-key-data: {}",
                base64(&certificate.certificate_pem),
                base64(&certificate.key_pem)
            ),
            Credentials::Token(token) => format!("token: {}", serde_json::Value::from(token.as_str())),
        };
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: {name}\n  cluster:\n    server: {url}{authority}\ncontexts:\n- name: {name}\n  context:\n    cluster: {name}\n    user: {name}-{user}\n    namespace: default\ncurrent-context: {name}\nusers:\n- name: {name}-{user}\n  user:\n    {user_entry}\npreferences: {{}}\n",
            url = self.url()
        )
    }

    /// A kube-rs client configuration for this cluster as the admin (namespace `default`, kube-rs defaults
    /// otherwise).
    pub fn client_config(&self) -> Result<kube::Config, kube::Error> {
        self.client_config_for(&self.admin_credentials())
    }

    /// A kube-rs client configuration for this cluster authenticating with `credentials`.
    pub fn client_config_for(&self, credentials: &Credentials) -> Result<kube::Config, kube::Error> {
        let uri: http::Uri = self
            .url()
            .parse()
            .map_err(|err: http::uri::InvalidUri| kube::Error::Service(err.into()))?;
        let mut config = kube::Config::new(uri);
        config.default_namespace = "default".into();
        if let Some(authority) = &self.shared.authority {
            config.root_cert = Some(vec![authority.ca_der().to_vec()]);
        }
        config.tls_server_name = self.server.server_name().map(str::to_string);
        let auth_info = match credentials {
            Credentials::Certificate(certificate) => serde_json::json!({
                "client-certificate-data": base64::engine::general_purpose::STANDARD.encode(&certificate.certificate_pem),
                "client-key-data": base64::engine::general_purpose::STANDARD.encode(&certificate.key_pem),
            }),
            Credentials::Token(token) => serde_json::json!({"token": token}),
        };
        config.auth_info =
            serde_json::from_value(auth_info).map_err(|err| kube::Error::Service(err.into()))?;
        Ok(config)
    }

    /// A kube-rs client for this cluster as the admin.
    pub fn client(&self) -> Result<kube::Client, kube::Error> {
        kube::Client::try_from(self.client_config()?)
    }

    /// A kube-rs client for software running inside this cluster (emco's monitor under `emco kubesim
    /// --monitors`): requests reach the API without a socket, as the admin, whether or not the cluster's listener
    /// is up. Costs no file descriptor, so thousands of clusters can each run one.
    #[must_use]
    pub fn in_cluster_client(&self) -> kube::Client {
        let admin = crate::auth::UserInfo::admin();
        self.server
            .in_cluster_client(crate::auth::PeerIdentity(Some(std::sync::Arc::new(admin))))
    }

    /// Switches faults (`down` stops or restarts the listener).
    pub async fn set_faults(&self, faults: Faults) -> std::io::Result<()> {
        if faults.down {
            self.server.go_down();
        } else {
            self.server.come_up().await?;
        }
        self.shared.set_faults(faults);
        Ok(())
    }

    /// The current faults.
    #[must_use]
    pub fn faults(&self) -> Faults {
        let mut faults = self.shared.faults();
        faults.down = !self.server.is_up();
        faults
    }

    /// How many writes (requests other than GET, HEAD and OPTIONS) the cluster received since it started.
    #[must_use]
    pub fn writes(&self) -> u64 {
        self.shared.writes()
    }

    /// How many reads (GET, HEAD, OPTIONS: lists, watches, discovery) the cluster received since it started.
    #[must_use]
    pub fn reads(&self) -> u64 {
        self.shared.reads()
    }
}

impl Drop for SimCluster {
    fn drop(&mut self) {
        self.controllers.abort();
    }
}

/// A set of clusters.
pub struct Simulator {
    clusters: Vec<SimCluster>,
}

impl Simulator {
    /// Starts every cluster, each on its own free loopback port.
    pub async fn start(configs: Vec<ClusterConfig>) -> std::io::Result<Self> {
        let mut clusters = Vec::with_capacity(configs.len());
        for config in configs {
            clusters.push(SimCluster::start(config, SocketAddr::from(([127, 0, 0, 1], 0))).await?);
        }
        Ok(Self { clusters })
    }

    /// Starts every cluster behind `listener` (one port, clusters told apart by TLS server name).
    pub fn start_shared(configs: Vec<ClusterConfig>, listener: &SharedListener) -> std::io::Result<Self> {
        let clusters = configs
            .into_iter()
            .map(|config| SimCluster::start_shared(config, listener))
            .collect::<std::io::Result<_>>()?;
        Ok(Self { clusters })
    }

    /// `count` clusters named `edge01`, `edge02`, ….
    pub async fn start_named(count: usize) -> std::io::Result<Self> {
        Self::start(
            (1..=count)
                .map(|i| ClusterConfig::new(&cluster_name(i)))
                .collect(),
        )
        .await
    }

    /// Every cluster.
    #[must_use]
    pub fn clusters(&self) -> &[SimCluster] {
        &self.clusters
    }

    /// A cluster by name.
    #[must_use]
    pub fn cluster(&self, name: &str) -> Option<&SimCluster> {
        self.clusters.iter().find(|c| c.name() == name)
    }

    /// Writes `<name>.yaml` kubeconfigs into `dir`.
    pub fn write_kubeconfigs(&self, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir)?;
        self.clusters
            .iter()
            .map(|cluster| {
                let path = dir.join(format!("{}.yaml", cluster.name()));
                std::fs::write(&path, cluster.kubeconfig())?;
                Ok(path)
            })
            .collect()
    }
}

/// The name of the `index`th cluster (1-based): `edge01` … `edge99`, `edge100` ….
#[must_use]
pub fn cluster_name(index: usize) -> String {
    format!("edge{index:02}")
}
