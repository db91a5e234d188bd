#!/bin/sh
# The postgres:15 image's entrypoint, the part Tollgate's compose file uses, for the image scripts/images makes
# from Debian's postgresql-15 (compose/postgres/Dockerfile). Runs as the postgres user.
#
# When PGDATA holds no cluster yet: initdb with POSTGRES_USER (default postgres) as the superuser and
# POSTGRES_PASSWORD as its password (required), password authentication (scram-sha-256) for every TCP
# connection and trust on the container's own socket, listen_addresses '*'; then, on a server reachable only
# through that socket, CREATE DATABASE POSTGRES_DB (default POSTGRES_USER). Then `postgres` runs with the
# command's arguments (a command that starts with `-` is taken as postgres's options).
set -eu
if [ "${1#-}" != "$1" ]; then
  set -- postgres "$@"
fi
if [ "$1" = postgres ]; then
  PGDATA="${PGDATA:-/var/lib/postgresql/data}"
  export PGDATA
  if [ ! -s "$PGDATA/PG_VERSION" ]; then
    if [ -z "${POSTGRES_PASSWORD:-}" ]; then
      echo "postgres: the data directory is new and POSTGRES_PASSWORD is not set: set it (it becomes the password" \
        "of ${POSTGRES_USER:-postgres})" >&2
      exit 1
    fi
    user="${POSTGRES_USER:-postgres}"
    db="${POSTGRES_DB:-$user}"
    mkdir -p "$PGDATA"
    chmod 700 "$PGDATA"
    pwfile="$(mktemp)"
    printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
    initdb -D "$PGDATA" --username="$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
      -E UTF8 --locale=C.UTF-8 >/dev/null || { rm -f "$pwfile"; exit 1; }
    rm -f "$pwfile"
    printf 'host all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
    printf "listen_addresses = '*'\n" >>"$PGDATA/postgresql.conf"
    socket="$(mktemp -d)"
    pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -c unix_socket_directories=$socket" -w -t 60 start >/dev/null
    if [ "$db" != postgres ]; then
      psql -v ON_ERROR_STOP=1 -h "$socket" -U "$user" -d postgres -qc "CREATE DATABASE \"$db\"" >/dev/null
    fi
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    rmdir "$socket" 2>/dev/null || true
    echo "postgres: initialized $PGDATA (superuser $user, database $db)" >&2
  fi
fi
exec "$@"
