//! Serving one cluster on its own loopback port, with an accept loop that can be switched off (connections
//! refused, open connections dropped) and on again on the same port, to simulate a cluster going off the network.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::task::{JoinHandle, JoinSet};

use crate::cluster::ClusterShared;

/// The listener of one cluster.
pub struct ClusterServer {
    address: SocketAddr,
    router: axum::Router,
    serving: Mutex<Option<JoinHandle<()>>>,
}

async fn accept_loop(listener: TcpListener, router: axum::Router) {
    // Dropping the set (when this task is aborted) aborts every connection it serves.
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let _ = stream.set_nodelay(true);
                let service = TowerToHyperService::new(router.clone());
                connections.spawn(async move {
                    let _ = Builder::new(TokioExecutor::new()).serve_connection(TokioIo::new(stream), service).await;
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

impl ClusterServer {
    /// Binds `address` (port 0: any free port) and starts serving.
    pub async fn start(cluster: Arc<ClusterShared>, address: SocketAddr) -> std::io::Result<Self> {
        let listener = TcpListener::bind(address).await?;
        let address = listener.local_addr()?;
        let router = crate::http::router(cluster);
        let task = tokio::spawn(accept_loop(listener, router.clone()));
        Ok(Self {
            address,
            router,
            serving: Mutex::new(Some(task)),
        })
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
        let task = tokio::spawn(accept_loop(listener, self.router.clone()));
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
