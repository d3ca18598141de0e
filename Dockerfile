# agentd's container image. It needs no registry at build time: it starts
# FROM scratch and takes a static binary and CA certificates from the
# build context that `make image` prepares (bin/image):
#
#   make image                      # → ghcr.io/agentd/agentd:$(VERSION)
#
# The binary is CGO_ENABLED=0 (SQLite is modernc.org/sqlite, pure Go), so
# it needs no libc. deploy/kubernetes/deployment.yaml runs this image.
FROM scratch

ARG VERSION=dev
ARG COMMIT=unknown
LABEL org.opencontainers.image.title="agentd" \
      org.opencontainers.image.description="Runs AI agents and connects them to MCP, A2A and ACP" \
      org.opencontainers.image.source="https://github.com/agentd/agentd" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}"

COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY agentd /usr/local/bin/agentd
# The image's own config (deploy/image/config.toml): 0.0.0.0:4200 with an
# API key from AGENTD_API_KEY. Mount yours over it.
COPY config.toml /etc/agentd/config.toml
# AGENTD_HOME (the store, workspaces, config.toml) belongs to the
# unprivileged user; mount a volume there to keep it.
COPY --chown=65532:65532 home /var/lib/agentd
ENV AGENTD_HOME=/var/lib/agentd

# 65532 is distroless's "nonroot"; the Kubernetes manifest runs as it too.
USER 65532:65532
EXPOSE 4200

# agentd asks itself: GET /api/health on 127.0.0.1:4200, where the
# image's config listens (a config listening elsewhere needs its own).
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["/usr/local/bin/agentd", "health", "--timeout", "4s"]

ENTRYPOINT ["/usr/local/bin/agentd"]
CMD ["start", "--config", "/etc/agentd/config.toml"]
