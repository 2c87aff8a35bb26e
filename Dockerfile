# mcp-server-web as a container: MCP over streamable HTTP at :8000/mcp, health at /healthz.
#
#   docker build -t mcp-server-web .
#   docker run -d --name mcp-web -p 127.0.0.1:8000:8000 -e MCP_WEB_AUTH_TOKEN=... mcp-server-web
#
# BASE_IMAGE is used for both stages (the venv links to the base's python3, so builder and
# runtime must be the same image). Any image with python3 >= 3.11 and its venv module works;
# the default is the official slim Python image. scripts/container-smoke builds it from a
# locally made Debian base instead (BASE_IMAGE=localhost/base:local).
ARG BASE_IMAGE=python:3.12-slim

# ---------------------------------------------------------------- builder: venv + project
FROM ${BASE_IMAGE} AS builder

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1

# A current pip first: older ones (Debian's 23.0) crash resolving lxml[html_clean] (asked for by
# trafilatura) next to lxml[html-clean] (readability's lxml-html-clean), an extras-name clash.
RUN python3 -m venv /opt/venv \
 && /opt/venv/bin/pip install --no-cache-dir --upgrade pip

WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src

# A regular (non-editable) install: the package and its dependencies land in the venv's
# site-packages, so the runtime stage needs only /opt/venv. pip and setuptools are then
# removed from the venv: nothing imports them at run time.
RUN /opt/venv/bin/pip install --no-cache-dir . \
 && /opt/venv/bin/pip uninstall --yes pip setuptools \
 && /opt/venv/bin/python3 -c "import mcp_server_web.cli"

# ---------------------------------------------------------------- runtime
FROM ${BASE_IMAGE}

# Where the image was built from, when the builder says (--build-arg SOURCE_URL=...).
ARG SOURCE_URL=""
LABEL org.opencontainers.image.title="mcp-server-web" \
      org.opencontainers.image.description="MCP server with web_search and web_fetch tools, served over streamable HTTP" \
      org.opencontainers.image.source="${SOURCE_URL}" \
      org.opencontainers.image.licenses="MIT"

# An unprivileged user with a fixed uid/gid, written by hand so this works on bases without
# useradd (a debootstrap minbase). The venv stays root-owned: the server cannot modify itself.
RUN echo 'mcp:x:10001:10001:mcp-server-web:/nonexistent:/usr/sbin/nologin' >> /etc/passwd \
 && echo 'mcp:x:10001:' >> /etc/group

COPY --from=builder /opt/venv /opt/venv

ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    MCP_WEB_TRANSPORT=http \
    MCP_WEB_HOST=0.0.0.0 \
    MCP_WEB_PORT=8000

USER 10001:10001
EXPOSE 8000

# Urllib, not curl: slim images have no curl. Follows MCP_WEB_PORT if it is overridden.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["/opt/venv/bin/python3", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('MCP_WEB_PORT', '8000'), timeout=4)"]

# Exec form, so the server itself is PID 1 and receives `docker stop`'s SIGTERM directly (no
# shell in between). PID 1 gets no default signal handlers from the kernel, but that is fine
# here: uvicorn installs its own SIGTERM/SIGINT handlers and shuts down gracefully (in-flight
# requests get up to 10 s), so no --init/tini is needed.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/opt/venv/bin/mcp-server-web"]
