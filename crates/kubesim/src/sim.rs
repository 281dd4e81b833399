//! Many simulated clusters in one process: start them, reach them (URL, kubeconfig, `kube::Client`), switch their
//! faults, stop them.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::task::JoinHandle;

use crate::cluster::{ClusterConfig, ClusterShared, Faults};
use crate::server::ClusterServer;

/// One running cluster.
pub struct SimCluster {
    shared: Arc<ClusterShared>,
    server: ClusterServer,
    controllers: JoinHandle<()>,
}

impl SimCluster {
    /// Starts a cluster on `address` (port 0: a free port).
    pub async fn start(config: ClusterConfig, address: SocketAddr) -> std::io::Result<Self> {
        let initial_revision = u64::try_from(jiff::Timestamp::now().as_microsecond()).unwrap_or(1);
        let shared = ClusterShared::new(config, initial_revision);
        crate::controllers::bootstrap(&shared);
        let controllers = tokio::spawn(crate::controllers::run(shared.clone()));
        let server = ClusterServer::start(shared.clone(), address).await?;
        Ok(Self {
            shared,
            server,
            controllers,
        })
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

    /// The API's base URL.
    #[must_use]
    pub fn url(&self) -> String {
        format!("http://{}", self.server.address())
    }

    /// A kubeconfig for this cluster (plain http; any token is accepted).
    #[must_use]
    pub fn kubeconfig(&self) -> String {
        let name = self.name();
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: {name}\n  cluster:\n    server: {url}\ncontexts:\n- name: {name}\n  context:\n    cluster: {name}\n    user: {name}-admin\n    namespace: default\ncurrent-context: {name}\nusers:\n- name: {name}-admin\n  user:\n    token: kubesim\npreferences: {{}}\n",
            url = self.url()
        )
    }

    /// A kube-rs client configuration for this cluster (namespace `default`, kube-rs defaults otherwise).
    pub fn client_config(&self) -> Result<kube::Config, kube::Error> {
        let uri: http::Uri = self
            .url()
            .parse()
            .map_err(|err: http::uri::InvalidUri| kube::Error::Service(err.into()))?;
        let mut config = kube::Config::new(uri);
        config.default_namespace = "default".into();
        Ok(config)
    }

    /// A kube-rs client for this cluster.
    pub fn client(&self) -> Result<kube::Client, kube::Error> {
        kube::Client::try_from(self.client_config()?)
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
