# syntax=docker/dockerfile:1
#
# The ahp container image: the release binary (packaging/release.sh: cgo
# for the Python reader, linked statically, -trimpath, version stamped) on
# an empty base, run as the non-root user ahp (65532), its data in the
# volume /var/lib/ahp (owned by ahp, mode 0700), agents on the Unix socket
# /var/lib/ahp/ahp.sock, the admin API (health, readiness, approvals,
# dashboard) on port 7700.
#
#   docker build -t ahp --build-arg VERSION="$(git describe --tags --always)" \
#     --build-arg COMMIT="$(git rev-parse HEAD)" \
#     --build-arg DATE="$(git show -s --format=%cI HEAD)" .
#   docker run -d --name ahp -v ahp-data:/var/lib/ahp -p 127.0.0.1:7700:7700 ahp
#
# docs/deployment.md says what was built and run where, and how to run it
# with a configuration file, network listeners and credentials.
#
# The build stage's binary is packaging/release.sh's (through
# packaging/container/rootfs.sh): the same command, flags and checks as a
# release build outside a container (cgo, so the Go base image's gcc and
# libc6-dev; the binary must be static and say "python: read" in `ahp
# version`). A GO_IMAGE without a C compiler (golang:*-alpine) fails the
# build rather than ship a binary that reads no Python. For linux/arm64,
# build with --platform linux/arm64: the build stage then runs as arm64 and
# compiles natively.

ARG GO_IMAGE=docker.io/library/golang:1.26.8

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=
ARG DATE=
RUN VERSION="$VERSION" COMMIT="$COMMIT" DATE="$DATE" packaging/container/rootfs.sh /rootfs

FROM scratch
COPY --from=build /rootfs/ /
# COPY gives root what it copies unless told otherwise: hand the data
# directory (an entry of /rootfs/var/lib/) to ahp, so the volume is writable.
COPY --from=build --chown=65532:65532 /rootfs/var/lib/ /var/lib/
USER 65532:65532
ENV AHP_DATA_DIR=/var/lib/ahp HOME=/var/lib/ahp
VOLUME ["/var/lib/ahp"]
EXPOSE 7700
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 CMD ["/usr/local/bin/ahp", "health", "--admin", "http://127.0.0.1:7700"]
ENTRYPOINT ["/usr/local/bin/ahp"]
CMD ["serve", "--listen", "unix:/var/lib/ahp/ahp.sock", "--admin", "http://0.0.0.0:7700"]
