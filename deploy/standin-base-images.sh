#!/usr/bin/env bash
# Stand-ins for the Dockerfile's and compose file's base images, for machines that reach
# Debian's package mirror but no container registry. Each is a minimal Debian bookworm made by
# debootstrap and imported under the official image's name, so `podman build` and
# `podman-compose up` find it locally:
#   python:3.11-slim   Debian's python3 (3.11) with venv and pip, `python` in /usr/local/bin
#   redis:7.2-alpine   Debian's redis-server (7.0) and redis-cli, WORKDIR /data
# They are not the official images (different libc build, Redis 7.0 instead of 7.2); use them
# only where those cannot be pulled. An image already present (pulled or built) is kept.
#
# Usage: deploy/standin-base-images.sh   (root; podman and debootstrap installed)
# LIGHTTOUCH_STANDIN_CACHE (default /var/cache/lighttouch-standins) keeps the downloaded
# .deb files so a second run downloads nothing.
set -euo pipefail
CACHE=${LIGHTTOUCH_STANDIN_CACHE:-/var/cache/lighttouch-standins}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
mkdir -p "$CACHE/debs"

present() { podman image exists "$1"; }

pullable() {
    # a registry that is unreachable fails fast; one that answers slowly gets 60 s
    timeout 60 podman pull --quiet "docker.io/library/$1" >/dev/null 2>&1
}

# debootstrap ROOTFS PACKAGES: a minimal bookworm with PACKAGES, apt's lists removed
bootstrap() {
    local rootfs=$1 packages=$2
    rm -rf "$rootfs"
    nice -n 10 debootstrap --variant=minbase --cache-dir="$CACHE/debs" \
        --include="$packages" bookworm "$rootfs" "$MIRROR" >"$rootfs.log" 2>&1 \
        || { tail -20 "$rootfs.log"; exit 1; }
    env -u TMPDIR chroot "$rootfs" sh -c 'apt-get clean && rm -rf /var/lib/apt/lists/*'
}

# import ROOTFS NAME CHANGES...: the directory as image docker.io/library/NAME
import() {
    local rootfs=$1 name=$2; shift 2
    local changes=(--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin')
    for change in "$@"; do changes+=(--change "$change"); done
    tar -C "$rootfs" --numeric-owner -c . \
        | nice -n 10 podman import "${changes[@]}" - "docker.io/library/$name" >/dev/null
    rm -rf "$rootfs"
    echo "stand-in docker.io/library/$name built from Debian bookworm"
}

python_image() {
    local rootfs=$CACHE/rootfs-python
    bootstrap "$rootfs" python3,python3-venv,python3-pip,passwd,ca-certificates
    ln -sf /usr/bin/python3 "$rootfs/usr/local/bin/python"
    # where TLS to the package index is re-signed by a local authority, pip in the build
    # needs that authority too
    if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
        cp /usr/local/share/ca-certificates/*.crt "$rootfs/usr/local/share/ca-certificates/"
        env -u TMPDIR chroot "$rootfs" update-ca-certificates >/dev/null
    fi
    import "$rootfs" python:3.11-slim 'ENV LANG=C.UTF-8' 'CMD ["python3"]'
}

redis_image() {
    local rootfs=$CACHE/rootfs-redis
    bootstrap "$rootfs" redis-server,redis-tools
    mkdir -p "$rootfs/data"
    # the official image turns protected mode off at build; Debian's binary keeps it on and
    # would refuse the other containers
    printf '#!/bin/sh\nexec /usr/bin/redis-server "$@" --protected-mode no\n' \
        >"$rootfs/usr/local/bin/redis-server"
    chmod +x "$rootfs/usr/local/bin/redis-server"
    import "$rootfs" redis:7.2-alpine 'WORKDIR /data' 'EXPOSE 6379' 'CMD ["redis-server"]'
}

for image in python:3.11-slim redis:7.2-alpine; do
    if present "docker.io/library/$image" || pullable "$image"; then
        echo "docker.io/library/$image present"
    elif [ "$image" = python:3.11-slim ]; then
        python_image
    else
        redis_image
    fi
done
