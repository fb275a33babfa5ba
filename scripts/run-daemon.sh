#!/usr/bin/env bash
# Builds tunedb and runs tunedbd in the foreground on its embedded default
# store (a SQLite file). Extra arguments go to tunedbd (see tunedbd --help).
# Without root, the socket and database live under ./run instead of
# /run/tunedb and /var/lib/tunedb.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh --target tunedbd tunedb-worker tunedb
if [ "$(id -u)" -eq 0 ]; then
  mkdir -p /var/lib/tunedb /run/tunedb
  DB=/var/lib/tunedb/tunedb.db SOCK=/run/tunedb/tunedb.sock
else
  mkdir -p run
  DB=run/tunedb.db SOCK=run/tunedb.sock
fi
echo "tunedbd: socket $SOCK, database $DB"
exec build/bin/tunedbd --db "$DB" --socket "$SOCK" "$@"
