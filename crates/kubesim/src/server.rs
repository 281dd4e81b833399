//! Serving one cluster on its own loopback port, with an accept loop that can be switched off (connections
//! refused, open connections dropped) and on again on the same port, to simulate a cluster going off the network.
//! HTTPS by default: each connection's TLS handshake runs in its own task, and the identity of a verified client
//! certificate goes into every request of the connection ([`PeerIdentity`]); plain HTTP on request.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::task::{JoinHandle, JoinSet};
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt as _;

use crate::auth::PeerIdentity;
use crate::cluster::ClusterShared;

/// How long a client may take to finish its TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Marks a request made by software inside the cluster ([`ClusterServer::in_cluster_client`]): it is logged but
/// not counted among the cluster's reads and writes, which count what arrived over the network.
#[derive(Debug, Clone, Copy)]
pub struct InCluster;

/// The listener of one cluster.
pub struct ClusterServer {
    address: SocketAddr,
    router: axum::Router,
    tls: Option<TlsAcceptor>,
    serving: Mutex<Option<JoinHandle<()>>>,
}

/// Serves HTTP on one connection; every request carries `peer`.
async fn serve_connection<S>(stream: S, router: axum::Router, peer: PeerIdentity)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = router.map_request(move |mut request: axum::http::Request<hyper::body::Incoming>| {
        request.extensions_mut().insert(peer.clone());
        request
    });
    let _ = Builder::new(TokioExecutor::new())
        .serve_connection(TokioIo::new(stream), TowerToHyperService::new(service))
        .await;
}

async fn accept_loop(listener: TcpListener, router: axum::Router, tls: Option<TlsAcceptor>) {
    // Dropping the set (when this task is aborted) aborts every connection it serves.
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let _ = stream.set_nodelay(true);
                let router = router.clone();
                let tls = tls.clone();
                connections.spawn(async move {
                    match tls {
                        None => serve_connection(stream, router, PeerIdentity::default()).await,
                        Some(acceptor) => {
                            let Ok(Ok(stream)) = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await else {
                                return;
                            };
                            let peer = PeerIdentity::from_chain(stream.get_ref().1.peer_certificates());
                            serve_connection(stream, router, peer).await;
                        }
                    }
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

impl ClusterServer {
    /// Binds `address` (port 0: any free port) and starts serving, HTTPS with `tls`, plain HTTP without.
    pub async fn start(
        cluster: Arc<ClusterShared>,
        address: SocketAddr,
        tls: Option<TlsAcceptor>,
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind(address).await?;
        let address = listener.local_addr()?;
        let router = crate::http::router(cluster);
        let task = tokio::spawn(accept_loop(listener, router.clone(), tls.clone()));
        Ok(Self {
            address,
            router,
            tls,
            serving: Mutex::new(Some(task)),
        })
    }

    /// A kube-rs client whose requests go straight to this cluster's router, without a socket or TLS, as the
    /// identity `peer` — how software running inside the cluster reaches its API server. It is not affected by the
    /// listener going down (a cluster off the network still serves what runs inside it).
    #[must_use]
    pub fn in_cluster_client(&self, peer: PeerIdentity) -> kube::Client {
        let service =
            self.router
                .clone()
                .map_request(move |mut request: http::Request<kube::client::Body>| {
                    request.extensions_mut().insert(peer.clone());
                    request.extensions_mut().insert(InCluster);
                    request
                });
        kube::Client::new(service, "default")
    }

    /// Whether it serves HTTPS.
    #[must_use]
    pub fn is_https(&self) -> bool {
        self.tls.is_some()
    }

    /// The address it serves on.
    #[must_use]
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Whether it accepts connections.
    #[must_use]
    pub fn is_up(&self) -> bool {
        self.serving
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_some()
    }

    /// Stops accepting (connections are refused) and drops open connections.
    pub fn go_down(&self) {
        if let Some(task) = self
            .serving
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
        {
            task.abort();
        }
    }

    /// Serves again on the same port.
    pub async fn come_up(&self) -> std::io::Result<()> {
        if self.is_up() {
            return Ok(());
        }
        let listener = TcpListener::bind(self.address).await?;
        let task = tokio::spawn(accept_loop(listener, self.router.clone(), self.tls.clone()));
        *self
            .serving
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(task);
        Ok(())
    }
}

impl Drop for ClusterServer {
    fn drop(&mut self) {
        self.go_down();
    }
}
