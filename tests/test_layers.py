"""The apps stand in layers, core ← tenancy ← memories ← conversations ← extraction ← portability ← review ←
mcp_server: an app imports only apps to its left. This reads the imports of every module under apps/ (migrations
aside), wherever they stand in the module (a lazy import inside a function counts), so the old cycle through every
app cannot come back. The one way up left is named below with its reason: two service calls from conversations
into extraction, which must happen while conversations holds the session lock."""

import ast
from pathlib import Path

import pytest

APPS_DIR = Path(__file__).resolve().parents[1] / "apps"
LAYERS = ["core", "tenancy", "memories", "conversations", "extraction", "portability", "review", "mcp_server"]

# Each exception names the module, the upward import, and why it cannot sit in the app above.
ALLOWED_UPWARD = {
    # New messages must reach extraction in the transaction that holds the session lock (so a job is
    # scheduled once, in message order): extraction_after_ingest.
    ("apps/conversations/services/messages.py", "apps.extraction.services"),
    # Terminate flushes the session's tail between marking it terminated and writing its episode,
    # which must include the facts that flush extracts: extraction_at_session_end.
    ("apps/conversations/services/lifecycle.py", "apps.extraction.services"),
}


def _app_modules(apps_dir: Path):
    for path in sorted(apps_dir.glob("*/**/*.py")):
        if "migrations" not in path.relative_to(apps_dir).parts:
            yield path


def _imported_modules(path: Path):
    """(line, module) for every import in the file; `from apps.x import y` counts as apps.x.y."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            assert not node.level, f"{path}:{node.lineno}: use absolute imports (apps.<app>...)"
            for alias in node.names:
                yield node.lineno, f"{node.module}.{alias.name}"


def _app_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "apps" and parts[1] in LAYERS else None


def _allowed(path: str, module: str) -> bool:
    return any(path == allowed_path and (module == allowed or module.startswith(allowed + "."))
               for allowed_path, allowed in ALLOWED_UPWARD)


def upward_imports(apps_dir: Path = APPS_DIR) -> list[tuple[str, int, str]]:
    """(module path, line, imported module) for every import of an app that stands above the importer."""
    found = []
    for path in _app_modules(apps_dir):
        own = path.relative_to(apps_dir).parts[0]
        assert own in LAYERS, f"apps/{own} has no place in LAYERS; give it one"
        for line, module in _imported_modules(path):
            other = _app_of(module)
            if other and LAYERS.index(other) > LAYERS.index(own):
                found.append((str(path.relative_to(apps_dir.parent)), line, module))
    return found


def test_apps_import_only_the_apps_below_them():
    offending = [(path, line, module) for path, line, module in upward_imports() if not _allowed(path, module)]
    assert not offending, "Imports of an app that stands above:\n" + "\n".join(
        f"{path}:{line}: {module}" for path, line, module in offending
    )


def test_every_named_exception_is_still_needed():
    used = upward_imports()
    unused = {(allowed_path, allowed) for allowed_path, allowed in ALLOWED_UPWARD
              if not any(_allowed(path, module) and path == allowed_path for path, _, module in used)}
    assert not unused, f"No longer imported; drop from ALLOWED_UPWARD: {unused}"


@pytest.mark.parametrize("source", [
    "from apps.extraction.models import ExtractionJob\n",
    "import apps.conversations.models\n",
    "def lazy():\n    from apps.memories import services\n",
])
def test_an_upward_import_is_caught(tmp_path, source):
    core = tmp_path / "apps" / "core"
    core.mkdir(parents=True)
    (core / "leak.py").write_text(source)
    (core / "fine.py").write_text("from apps.core.errors import ApplicationError\n")
    assert [(path, line) for path, line, _ in upward_imports(tmp_path / "apps")] == [("apps/core/leak.py", source.count("\n"))]


def test_the_named_exceptions_allow_only_their_module():
    assert _allowed("apps/conversations/services/messages.py", "apps.extraction.services.extraction_after_ingest")
    assert not _allowed("apps/conversations/services/messages.py", "apps.extraction.models.ExtractionJob")
    assert not _allowed("apps/conversations/admin.py", "apps.extraction.services.extraction_job_retry")
