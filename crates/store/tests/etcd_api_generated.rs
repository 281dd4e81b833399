//! The etcd store's generated gRPC code (`src/etcd_api/*.rs`) is exactly what etcd's `.proto` files in `proto/`
//! give: this test parses them with protox (a protobuf compiler in Rust, no `protoc`), generates the code with
//! tonic's generator, and compares it with the committed files. `EMCO_WRITE_ETCD_API=1` writes them instead (after
//! `scripts/etcd-proto-trim.py` brought new `.proto` files).

use std::path::Path;

const GENERATED: [&str; 2] = ["etcdserverpb.rs", "mvccpb.rs"];

#[test]
fn the_committed_etcd_api_code_is_what_the_proto_files_give() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let proto = crate_dir.join("proto");
    let descriptors = protox::compile(["etcd/api/etcdserverpb/rpc.proto"], [&proto]).unwrap_or_else(|err| {
        panic!(
            "etcd's .proto files in {} do not compile: {err:?}",
            proto.display()
        )
    });
    let out = tempfile::tempdir().expect("a temporary directory");
    tonic_prost_build::configure()
        .build_server(false)
        .build_transport(false)
        .out_dir(out.path())
        .compile_fds(descriptors)
        .expect("tonic's generator takes etcd's descriptors");
    let committed = crate_dir.join("src/etcd_api");
    let write = std::env::var_os("EMCO_WRITE_ETCD_API").is_some();
    for file in GENERATED {
        let generated = std::fs::read_to_string(out.path().join(file))
            .unwrap_or_else(|err| panic!("the generator wrote no {file}: {err}"));
        let path = committed.join(file);
        if write {
            std::fs::create_dir_all(&committed).expect("src/etcd_api can be made");
            std::fs::write(&path, &generated).expect("the generated file can be written");
            continue;
        }
        let kept = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            kept == generated,
            "{} differs from what proto/ gives; run EMCO_WRITE_ETCD_API=1 cargo test -p emco-store --test \
             etcd_api_generated and commit the result",
            path.display()
        );
    }
}
