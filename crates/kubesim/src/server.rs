//! Serving clusters over the network: each cluster on its own loopback port, with an accept loop that can be
//! switched off (connections refused, open connections dropped) and on again on the same port, to simulate a
//! cluster going off the network; or many clusters behind one [`SharedListener`] that tells them apart by the TLS
//! server name (SNI) of each connection, so that 10,000 clusters cost one listening socket instead of 10,000.
//! HTTPS by default (HTTP/2 or HTTP/1.1, as the client offers in ALPN, as the Kubernetes API server does): each
//! connection's TLS handshake runs in its own task, and the identity of a verified client certificate goes into
//! every request of the connection ([`PeerIdentity`]); plain HTTP on request (own port only).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};
use tokio_rustls::{LazyConfigAcceptor, TlsAcceptor};
use tower::ServiceExt as _;

use crate::auth::PeerIdentity;
use crate::cluster::ClusterShared;

/// How long a client may take to finish its TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Marks a request made by software inside the cluster ([`ClusterServer::in_cluster_client`]): it is logged but
/// not counted among the cluster's reads and writes, which count what arrived over the network.
#[derive(Debug, Clone, Copy)]
pub struct InCluster;

/// Why a cluster cannot join a [`SharedListener`].
#[derive(Debug, thiserror::Error)]
pub enum SharedListenerError {
    /// Clusters behind one listener are told apart by their TLS server name: plain HTTP has none.
    #[error("cluster {0}: a shared listener serves HTTPS only")]
    PlainHttp(String),
    /// The cluster's name cannot be the first label of a DNS name, so it has no TLS server name.
    #[error(
        "cluster {0}: behind a shared listener a cluster's name must be a DNS label (letters, digits, hyphens)"
    )]
    NotDnsLabel(String),
    /// Another cluster already answers to this server name.
    #[error("cluster {0}: another cluster behind the shared listener has the same server name")]
    Duplicate(String),
}

impl From<SharedListenerError> for std::io::Error {
    fn from(err: SharedListenerError) -> Self {
        std::io::Error::other(err)
    }
}

/// The listener of one cluster.
pub struct ClusterServer {
    cluster: Arc<ClusterShared>,
    address: SocketAddr,
    router: axum::Router,
    tls: Option<TlsAcceptor>,
    listening: Listening,
}

/// How a cluster is reached over the network.
enum Listening {
    /// Its own port; the accept loop while the cluster is up.
    Own(Mutex<Option<JoinHandle<()>>>),
    /// A route behind a shared listener, under the TLS server name `name`.
    Shared {
        name: String,
        route: Arc<Route>,
        routes: Arc<Routes>,
    },
}

/// What a shared listener needs to serve one cluster's connections.
struct Route {
    cluster: Arc<ClusterShared>,
    router: axum::Router,
    tls: Arc<rustls::ServerConfig>,
    /// Whether the cluster is on the network; open connections end when it goes false.
    up: tokio::sync::watch::Sender<bool>,
}

/// The clusters behind a shared listener, by TLS server name.
type Routes = Mutex<HashMap<String, Arc<Route>>>;

/// One listening socket for many clusters: a connection's TLS ClientHello names the cluster
/// ([`crate::tls::server_name`], a kubeconfig's `tls-server-name`), whose CA, certificates and API then serve it.
/// A connection naming no cluster (or a cluster that is down) is closed before the handshake.
pub struct SharedListener {
    address: SocketAddr,
    routes: Arc<Routes>,
    task: JoinHandle<()>,
}

impl SharedListener {
    /// Binds `address` (port 0: any free port) and starts accepting.
    pub async fn bind(address: SocketAddr) -> std::io::Result<Self> {
        let listener = TcpListener::bind(address).await?;
        let address = listener.local_addr()?;
        let routes: Arc<Routes> = Arc::default();
        let task = tokio::spawn(accept_loop(listener, {
            let routes = routes.clone();
            move |stream| serve_routed(stream, routes.clone())
        }));
        Ok(Self {
            address,
            routes,
            task,
        })
    }

    /// The address it listens on.
    #[must_use]
    pub fn address(&self) -> SocketAddr {
        self.address
    }
}

impl Drop for SharedListener {
    fn drop(&mut self) {
        self.task.abort();
    }
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

/// Accepts connections until the task is aborted, each served by `serve` in a task of its own. Dropping the set
/// (when this task is aborted) aborts every connection it serves.
async fn accept_loop<F, Fut>(listener: TcpListener, serve: F)
where
    F: Fn(TcpStream) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let _ = stream.set_nodelay(true);
                connections.spawn(serve(stream));
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// Serves a connection to a cluster's own port: HTTPS with `tls` (the handshake first), plain HTTP without.
async fn serve_own(
    stream: TcpStream,
    cluster: Arc<ClusterShared>,
    router: axum::Router,
    tls: Option<TlsAcceptor>,
) {
    match tls {
        None => {
            cluster.count_connection();
            serve_connection(stream, router, PeerIdentity::default()).await;
        }
        Some(acceptor) => {
            let Ok(Ok(stream)) = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await
            else {
                return;
            };
            cluster.count_connection();
            let peer = PeerIdentity::from_chain(stream.get_ref().1.peer_certificates());
            serve_connection(stream, router, peer).await;
        }
    }
}

/// The accept loop of a cluster's own port.
async fn own_accept_loop(
    listener: TcpListener,
    cluster: Arc<ClusterShared>,
    router: axum::Router,
    tls: Option<TlsAcceptor>,
) {
    accept_loop(listener, move |stream| {
        serve_own(stream, cluster.clone(), router.clone(), tls.clone())
    })
    .await;
}

/// Reads the ClientHello, finds the cluster it names, finishes the handshake with that cluster's TLS
/// configuration and serves the connection until it closes or the cluster goes down.
async fn serve_routed(stream: TcpStream, routes: Arc<Routes>) {
    let handshake = async {
        let start = LazyConfigAcceptor::new(rustls::server::Acceptor::default(), stream)
            .await
            .ok()?;
        let name = start.client_hello().server_name()?.to_ascii_lowercase();
        let route = routes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&name)
            .cloned()?;
        if !*route.up.borrow() {
            return None;
        }
        let stream = start.into_stream(route.tls.clone()).await.ok()?;
        Some((stream, route))
    };
    let Ok(Some((stream, route))) = tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake).await else {
        return;
    };
    route.cluster.count_connection();
    let peer = PeerIdentity::from_chain(stream.get_ref().1.peer_certificates());
    let mut up = route.up.subscribe();
    tokio::select! {
        () = serve_connection(stream, route.router.clone(), peer) => {}
        _ = up.wait_for(|up| !*up) => {}
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
        let router = crate::http::router(cluster.clone());
        let task = tokio::spawn(own_accept_loop(
            listener,
            cluster.clone(),
            router.clone(),
            tls.clone(),
        ));
        Ok(Self {
            cluster,
            address,
            router,
            tls,
            listening: Listening::Own(Mutex::new(Some(task))),
        })
    }

    /// Serves the cluster behind `shared` under the TLS server name [`crate::tls::server_name`] of its name.
    pub fn start_shared(
        cluster: Arc<ClusterShared>,
        shared: &SharedListener,
        tls: Option<TlsAcceptor>,
    ) -> Result<Self, SharedListenerError> {
        let Some(acceptor) = tls else {
            return Err(SharedListenerError::PlainHttp(cluster.name.clone()));
        };
        if !crate::tls::is_dns_label(&cluster.name) {
            return Err(SharedListenerError::NotDnsLabel(cluster.name.clone()));
        }
        let name = crate::tls::server_name(&cluster.name);
        let router = crate::http::router(cluster.clone());
        let route = Arc::new(Route {
            cluster: cluster.clone(),
            router: router.clone(),
            tls: acceptor.config().clone(),
            up: tokio::sync::watch::Sender::new(true),
        });
        {
            let mut routes = shared.routes.lock().unwrap_or_else(PoisonError::into_inner);
            if routes.contains_key(&name) {
                return Err(SharedListenerError::Duplicate(cluster.name.clone()));
            }
            routes.insert(name.clone(), route.clone());
        }
        Ok(Self {
            cluster,
            address: shared.address,
            router,
            tls: Some(acceptor),
            listening: Listening::Shared {
                name,
                route,
                routes: shared.routes.clone(),
            },
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

    /// The TLS server name clients must ask for: set behind a shared listener, none on a port of its own.
    #[must_use]
    pub fn server_name(&self) -> Option<&str> {
        match &self.listening {
            Listening::Own(_) => None,
            Listening::Shared { name, .. } => Some(name),
        }
    }

    /// Whether it accepts connections.
    #[must_use]
    pub fn is_up(&self) -> bool {
        match &self.listening {
            Listening::Own(serving) => serving.lock().unwrap_or_else(PoisonError::into_inner).is_some(),
            Listening::Shared { route, .. } => *route.up.borrow(),
        }
    }

    /// Stops accepting (connections are refused, or closed before the handshake behind a shared listener) and
    /// drops open connections.
    pub fn go_down(&self) {
        match &self.listening {
            Listening::Own(serving) => {
                if let Some(task) = serving.lock().unwrap_or_else(PoisonError::into_inner).take() {
                    task.abort();
                }
            }
            Listening::Shared { route, .. } => {
                route.up.send_replace(false);
            }
        }
    }

    /// Serves again (on the same port).
    pub async fn come_up(&self) -> std::io::Result<()> {
        match &self.listening {
            Listening::Own(serving) => {
                if self.is_up() {
                    return Ok(());
                }
                let listener = TcpListener::bind(self.address).await?;
                let task = tokio::spawn(own_accept_loop(
                    listener,
                    self.cluster.clone(),
                    self.router.clone(),
                    self.tls.clone(),
                ));
                *serving.lock().unwrap_or_else(PoisonError::into_inner) = Some(task);
            }
            Listening::Shared { route, .. } => {
                route.up.send_replace(true);
            }
        }
        Ok(())
    }
}

impl Drop for ClusterServer {
    fn drop(&mut self) {
        self.go_down();
        if let Listening::Shared { name, routes, .. } = &self.listening {
            routes.lock().unwrap_or_else(PoisonError::into_inner).remove(name);
        }
    }
}
