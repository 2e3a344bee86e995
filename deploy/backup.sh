#!/bin/sh
# Usage: deploy/backup.sh DIRECTORY [KEEP_DAYS]
# Dumps the whole database with `manage.py backup_db` (pg_dump, custom format) to
# DIRECTORY/memoryhub-<UTC time>.dump and deletes dumps older than KEEP_DAYS (default 14).
# Run it as the service user with the service's environment (memoryhub-backup.service, deploy/manage).
set -eu
directory=${1:?usage: backup.sh DIRECTORY [KEEP_DAYS]}
keep_days=${2:-14}
cd "$(dirname "$0")/.."
mkdir -p "$directory"
.venv/bin/python manage.py backup_db "$directory/memoryhub-$(date -u +%Y%m%dT%H%M%SZ).dump"
# backup_db writes NAME.partial and renames it when pg_dump succeeded: a .partial is a failed run.
find "$directory" -maxdepth 1 -type f \( -name 'memoryhub-*.dump' -o -name 'memoryhub-*.dump.partial' \) \
    -mtime +"$keep_days" -delete
