//! The serving loop on a loopback socket: graceful shutdown closes idle connections at once, lets the request in
//! flight finish, and stops accepting.

use std::time::Duration;

use emco_server::{ServeOptions, Server, ServerConfig};
use emco_store::Store;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Reads until the server closes the connection (at most 10 s); what it sent.
async fn read_until_closed(stream: &mut TcpStream) -> String {
    let mut received = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut received))
        .await
        .expect("the server closes the connection");
    String::from_utf8_lossy(&received).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_finishes_the_request_in_flight_and_closes_idle_connections() {
    let server = Server::new(Store::memory(), None, ServerConfig::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.run_with(listener, ServeOptions::default(), async {
        let _ = stopped.await;
    }));

    // A kept-alive connection that has been answered, and one that has sent nothing.
    let mut idle = TcpStream::connect(address).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: emco\r\n\r\n")
        .await
        .unwrap();
    let mut answer = [0u8; 256];
    let read = idle.read(&mut answer).await.unwrap();
    assert!(answer[..read].starts_with(b"HTTP/1.1 200"));
    let mut fresh = TcpStream::connect(address).await.unwrap();

    // A request in flight: its head and half of its body are sent.
    let body = br#"{"metadata": {"name": "p1"}}"#;
    let mut busy = TcpStream::connect(address).await.unwrap();
    busy.write_all(
        format!(
            "POST /v2/projects HTTP/1.1\r\nHost: emco\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    busy.write_all(&body[..10]).await.unwrap();
    // Give the server the time to read the head and start the request (not an assertion: a wait).
    tokio::time::sleep(Duration::from_millis(300)).await;

    stop.send(()).unwrap();
    assert_eq!(read_until_closed(&mut idle).await, "");
    assert_eq!(read_until_closed(&mut fresh).await, "");
    assert!(!serving.is_finished(), "returned with a request in flight");
    for _ in 0..100 {
        if TcpStream::connect(address).await.is_err() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        TcpStream::connect(address).await.is_err(),
        "still accepting after shutdown"
    );

    busy.write_all(&body[10..]).await.unwrap();
    let answer = read_until_closed(&mut busy).await;
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    assert!(answer.contains(r#""name":"p1""#), "{answer}");
    tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .expect("the server stops once the request is answered")
        .unwrap()
        .unwrap();
}
