# Courier's container image: the static courier binary on a distroless base,
# running as the nonroot user (65532). Where a registry is reachable:
#
#   docker build -t courier .
#   docker run --rm -p 9750:9750 -e COURIER_REDIS__ADDR=redis:6379 \
#     -e COURIER_QUEUES__DEMO__HANDLER=log courier
#
# Without a registry, `make image` (.ci/image) builds local stand-ins for the
# two base images below and a build context with vendor/, and builds this
# same file with them. No `# syntax=` line and no BuildKit-only flags, so the
# classic builder and BuildKit's built-in frontend both build it offline.

ARG BUILDER_IMAGE=golang:1.26-bookworm
ARG RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot

FROM ${BUILDER_IMAGE} AS build
# REVISION is stamped beside the release number (worker.Version), as make
# build does: `courier version` prints "courier 0.1.0 (REVISION) ...".
ARG REVISION=dev
ENV CGO_ENABLED=0 GOTOOLCHAIN=local
WORKDIR /src
COPY . .
# With a vendor/ directory in the context the build uses it and needs no
# network; without one, go downloads the modules go.sum pins.
#
# /out/etc/courier/courier.yaml is the image's base configuration, the layer
# just above the built-in defaults: it only makes HTTP listen on every
# interface (the default, 127.0.0.1:9750, is unreachable from outside a
# container). COURIER_* variables override it; mount your own file over it to
# replace it.
# The daemon is the module in cmd/ (the library it builds on is the module
# at the root, which cmd/go.mod replaces with ../).
WORKDIR /src/cmd
RUN if [ -d vendor ]; then mod=vendor; else mod=readonly; fi \
 && mkdir -p /out/etc/courier \
 && go build -mod="$mod" -trimpath -tags grpcnotrace -ldflags "-s -w -X main.revision=${REVISION}" -o /out/courier ./courier \
 && printf '%s\n' \
	'# Base configuration of the courier image; see configs/courier.yaml for every key.' \
	'# Add queues with a file mounted over this one or with environment variables' \
	'# (COURIER_QUEUES__<NAME>__HANDLER=log, COURIER_REDIS__ADDR=redis:6379, ...).' \
	'http:' \
	'  addr: ":9750"' \
	>/out/etc/courier/courier.yaml \
 && /out/courier version

FROM ${RUNTIME_IMAGE}
# VERSION, the release, only labels the image (.ci/image passes
# worker.Version); the binary knows its own.
ARG VERSION=unknown
ARG REVISION=dev
LABEL org.opencontainers.image.title="courier" \
      org.opencontainers.image.description="Courier: a Redis-backed job daemon" \
      org.opencontainers.image.source="https://github.com/seed-53d105c9/courier" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --from=build /out/courier /courier
COPY --from=build /out/etc/courier/courier.yaml /etc/courier/courier.yaml
USER 65532:65532
EXPOSE 9750
# docker stop waits 10 s before SIGKILL; give the drain (shutdown.timeout,
# default 25 s) its time: docker stop -t 30, or stop_grace_period in compose.
#
# No shell and no curl in the image: the probe is courier itself. It GETs
# /readyz on the port of http.addr in the image's configuration (or
# COURIER_HTTP__ADDR), over HTTPS when http.tls is set, and exits 0 when the
# daemon is ready, 1 otherwise. Kubernetes ignores HEALTHCHECK: point its
# readiness probe at /readyz and its liveness probe at /healthz.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
	CMD ["/courier", "healthcheck", "--config", "/etc/courier/courier.yaml", "--timeout", "4s"]
ENTRYPOINT ["/courier"]
CMD ["run", "--config", "/etc/courier/courier.yaml"]
