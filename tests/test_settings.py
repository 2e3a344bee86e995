import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from memoryhub.env import env_bool, env_int, env_list, env_str

ROOT = Path(__file__).resolve().parent.parent


def _manage(*args, **env):
    environment = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120
    )


def test_production_settings_pass_check_deploy_without_warnings():
    result = _manage(
        "check", "--deploy", "--fail-level", "WARNING",
        DEBUG="false",
        SECRET_KEY="p9$k2!vXz8@qLw4#nR7^tY1&uB5*eH3(oJ6)mC0-sA_dF+gK-Lz2%Wq",
        ALLOWED_HOSTS="memory.example.com",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_without_secret_key_refuses_to_start():
    result = _manage("check", DEBUG="false", SECRET_KEY="")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_non_postgres_database_url_is_refused():
    result = _manage("check", DATABASE_URL="sqlite:///tmp/x.db")
    assert result.returncode != 0
    assert "PostgreSQL" in result.stderr


def test_env_helpers(monkeypatch, tmp_path):
    monkeypatch.setenv("MH_FLAG", "yes")
    assert env_bool("MH_FLAG", False) is True
    monkeypatch.setenv("MH_FLAG", "perhaps")
    with pytest.raises(ImproperlyConfigured, match="MH_FLAG"):
        env_bool("MH_FLAG", False)
    monkeypatch.setenv("MH_NUM", "ten")
    with pytest.raises(ImproperlyConfigured, match="integer"):
        env_int("MH_NUM", 1)
    monkeypatch.setenv("MH_NUM", "0")
    with pytest.raises(ImproperlyConfigured, match=">= 1"):
        env_int("MH_NUM", 1, minimum=1)
    monkeypatch.setenv("MH_HOSTS", " a.example , b.example ,")
    assert env_list("MH_HOSTS", []) == ["a.example", "b.example"]
    secret = tmp_path / "secret"
    secret.write_text("from-a-file\n")
    monkeypatch.setenv("MH_SECRET_FILE", str(secret))
    assert env_str("MH_SECRET") == "from-a-file"


def test_embedded_database_is_reused_between_processes():
    """A second process attaches to the same running server (same socket and postmaster pid)."""
    code = (
        "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'memoryhub.settings'); django.setup();"
        "from django.db import connection; c = connection.cursor(); c.execute('select pg_postmaster_start_time()');"
        "print(c.fetchone()[0])"
    )
    first = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    second = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() and first.stdout == second.stdout


def test_database_url_is_used_instead_of_the_embedded_server(settings):
    """DATABASE_URL pointing at any PostgreSQL (here: the running server, through a URL) is used as given."""
    host = settings.DATABASES["default"]["HOST"]
    url = f"postgres://postgres@/{settings.EMBEDDED_PG_DATABASE}?host={host}"
    code = (
        "from django.db import connection; c = connection.cursor(); c.execute('select current_database()');"
        "print(c.fetchone()[0], connection.connection.info.host)"
    )
    result = _manage("shell", "-c", code, DATABASE_URL=url, EMBEDDED_PG_DIR="/nonexistent/never-started")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1].split() == [settings.EMBEDDED_PG_DATABASE, host]


def test_a_worker_may_not_drain_jobs_for_longer_than_half_of_its_task_timeout():
    result = _manage("check", EXTRACTION_DRAIN_SECONDS="200", Q_TIMEOUT_SECONDS="300")
    assert result.returncode != 0
    assert "EXTRACTION_DRAIN_SECONDS must be at most half of Q_TIMEOUT_SECONDS" in result.stderr
    assert _manage("check", EXTRACTION_DRAIN_SECONDS="150", Q_TIMEOUT_SECONDS="300").returncode == 0
