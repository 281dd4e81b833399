# The emco image (the `emco` server and `emcoctl`), used by the chart in deploy/helm/emco. Build from the
# repository root:
#   docker build -f deploy/emco.Dockerfile -t emco:0.1.0 .
# (the chart's image tag defaults to its appVersion; set image.repository/image.tag to where you push it).
FROM rust:1.95-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends protobuf-compiler && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin emco --bin emcoctl --features emco/etcd

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/release/emco /usr/local/bin/emco
COPY --from=build /src/target/release/emcoctl /usr/local/bin/emcoctl
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/emco"]
CMD ["serve"]
