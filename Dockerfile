# Parlour in a container: python slim, installed with pip, run as a non-root user.
#   docker build -t parlour .
#   docker run -p 8080:8080 -p 8001:8001 -p 8000:8000 -v parlour-data:/var/lib/parlour parlour
# See docs/deploy.md.
FROM python:3.11-slim

# mypyc compiles the hot modules at install time: it needs a C compiler, only while building.
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY src ./src
RUN pip install --no-cache-dir . \
    && apt-get purge -y gcc libc6-dev && apt-get autoremove -y \
    && rm -rf /src

RUN useradd --system --home-dir /var/lib/parlour --create-home parlour
USER parlour
WORKDIR /var/lib/parlour

# The store (SQLite, with its -wal and -shm files beside it) lives on this volume.
VOLUME ["/var/lib/parlour"]
ENV PARLOUR_STORE=/var/lib/parlour/parlour.db

# 8080: HTTP, the browser client, the Apologies and /async websockets; 8001: Fish; 8000: Tsuro.
EXPOSE 8080 8001 8000

# SIGTERM (docker stop) shuts down gracefully: clients are told, games in progress are kept.
STOPSIGNAL SIGTERM
CMD ["parlour", "serve", "--host", "0.0.0.0"]
