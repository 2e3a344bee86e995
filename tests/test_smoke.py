from django.db import connection


def test_database_is_postgresql_with_pgvector(db):
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        (version,) = cursor.fetchone()
    assert connection.vendor == "postgresql"
    assert tuple(int(part) for part in version.split(".")[:2]) >= (0, 8)
