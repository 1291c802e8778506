# Weir's container image: the `weir` binary on Debian 12, run as the unprivileged user weir
# (uid/gid 10001). scripts/image builds it with buildah from a bookworm base it makes with
# mmdebstrap (BASE=localhost/weir-base:…), and tries it; any Debian 12 image works as BASE.
# The Helm chart (helm/weir) runs `weir serve --config /etc/weir/weir.yaml --data-dir
# /var/lib/weir --node-id …`.
ARG BASE=debian:12-slim

# ---- toolchain: what compiling weir needs (scripts/image tags it, so its layers stay cached) ----
FROM ${BASE} AS toolchain
# What compiling weir needs: scripts/setup's build set without googletest (WEIR_BUILD_TESTS=OFF)
# and, for Boost, only the headers, Boost.JSON and Boost.Program_options (libboost1.81-all-dev
# would pull in MPI, Python and ~1 GB that weir does not use).
RUN export DEBIAN_FRONTEND=noninteractive \
 && apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends \
      g++ cmake ninja-build ccache pkg-config libssl-dev \
      libcaf-dev \
      libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler \
      libboost1.81-dev libboost-json1.81-dev libboost-program-options1.81-dev \
      librocksdb-dev libyaml-cpp-dev libpq-dev libspdlog-dev libre2-dev >/dev/null \
 && rm -rf /var/lib/apt/lists/*
# ccache: scripts/image bind-mounts the host's cache directory at /ccache (buildah bud -v), so a
# compile of sources the host (or CI's test build) already compiled is a cache hit. The base dir
# and no hashed working directory make entries independent of where the tree is (as in
# scripts/dev). Without the mount the cache stays in this stage, which the image does not keep.
# CCACHE_UMASK: the host's cache stays writable by its owner when buildah runs as root (sudo).
ENV CCACHE_DIR=/ccache CCACHE_BASEDIR=/src CCACHE_NOHASHDIR=true CCACHE_MAXSIZE=5G CCACHE_UMASK=002

# ---- builder: compiles build/apps/weir only (the flags of scripts/dev build) -------------------
FROM toolchain AS builder
COPY . /src
WORKDIR /src
# The symbol table is kept (function names in backtraces and perf); the -g1 line tables are
# stripped (see docs/operations.md#container-image).
RUN cmake -S . -B build -G Ninja -DWEIR_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" >/dev/null \
 && CCACHE_STATSLOG=/tmp/ccache.log ninja -C build weir \
 && echo "image: ccache while building weir:" \
 && CCACHE_STATSLOG=/tmp/ccache.log ccache --show-log-stats | grep -E 'Hits|Misses' \
 && strip --strip-debug -o /weir build/apps/weir

# ---- the image: the binary and the libraries it links -----------------------------------------
FROM ${BASE}
# The packages of the shared libraries build/apps/weir links (readelf -d: NEEDED); RocksDB is
# linked statically, its compression libraries are not.
RUN export DEBIAN_FRONTEND=noninteractive \
 && apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends \
      libcaf-core0.17 libgrpc++1.51 libgrpc29 libprotobuf32 libabsl20220623 \
      libboost-json1.81.0 libboost-program-options1.81.0 libyaml-cpp0.7 libpq5 libssl3 libspdlog1.10 libfmt9 libre2-9 \
      libsnappy1v5 zlib1g libbz2-1.0 liblz4-1 libzstd1 >/dev/null \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin \
 && groupadd --gid 10001 weir \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /var/lib/weir \
      --shell /usr/sbin/nologin weir \
 && install -d -o 10001 -g 10001 -m 750 /var/lib/weir \
 && install -d -m 755 /etc/weir
COPY --from=builder /weir /usr/local/bin/weir
USER 10001:10001
WORKDIR /var/lib/weir
VOLUME /var/lib/weir
# HTTP (clients, probes, /metrics), gRPC (the Data service), the members' peer port
EXPOSE 8080 9090 9091
ENTRYPOINT ["weir"]
CMD ["serve", "--http", "0.0.0.0:8080", "--grpc", "0.0.0.0:9090", "--data-dir", "/var/lib/weir"]
