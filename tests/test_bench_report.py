"""bench/report.py, the one writer of docs/performance.md: a script's section and summary rows are replaced,
everything else on the page is kept byte for byte, and query plans are collapsed without vector literals."""

import importlib.util

from tests.processes import ROOT

_spec = importlib.util.spec_from_file_location("bench_report", ROOT / "bench" / "report.py")
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)

SETUP = {"Date": "2026-01-02 03:04 UTC", "Commit": "abc1234"}


def _section(name: str, measured: float, *, plan: list[str] = ()) -> report.Section:
    return report.Section(
        name=name,
        title=f"The {name} benchmark",
        intro="Written by a test.",
        setup=SETUP,
        targets=[report.target(f"{name} p95", measured, unit="ms", at_most=25)],
        tables=[report.Table("Phases", ["Phase", "p95 ms"], [["one", measured]])],
        plans=[("a search", list(plan))] if plan else [],
    )


def test_a_section_replaces_only_its_text_and_summary_rows(tmp_path):
    page = tmp_path / "performance.md"
    report.write(page, _section("alpha", 10.0))
    report.write(page, _section("beta", 30.0))
    page.write_text(page.read_text() + "\n" + report.ANALYSIS_MARKER + "\nHand-written: 10.0 ms was good.\n")
    before = page.read_text()

    report.write(page, _section("alpha", 40.0))

    text = page.read_text()
    assert "| alpha | alpha p95 | ≤ 25 ms | 40.0 ms | **MISSED** | 2026-01-02 03:04 UTC | abc1234 |" in text
    assert "| alpha | alpha p95 | ≤ 25 ms | 10.0 ms" not in text
    assert "| beta | beta p95 | ≤ 25 ms | 30.0 ms | **MISSED** |" in text
    beta = before[before.index("<!-- section:beta -->"):]
    assert text.endswith(beta), "the other section and the analysis changed"
    assert text.index("<!-- summary -->") < text.index("<!-- section:alpha -->") < text.index("<!-- section:beta -->")


def test_query_plans_are_collapsed_without_vector_literals(tmp_path):
    vector = "[" + ",".join(["0.125"] * 384) + "]"
    plan = [f"Index Scan using hnsw  Order By: (embedding <=> '{vector}'::vector(384))", "Execution Time: 0.7 ms"]
    page = tmp_path / "performance.md"

    report.write(page, _section("alpha", 10.0, plan=plan))

    text = page.read_text()
    assert "<details><summary>Query plan: a search</summary>" in text
    assert "Order By: (embedding <=> '[…384 floats…]'::vector(384))" in text
    assert "0.125,0.125" not in text


def test_a_page_without_a_summary_gets_it_right_under_its_title(tmp_path):
    page = tmp_path / "performance.md"
    report.write(page, _section("beta", 30.0))
    text = page.read_text()
    summary = text[text.index("<!-- summary -->"): text.index("<!-- /summary -->") + len("<!-- /summary -->")]
    page.write_text(text.replace(summary + "\n", "") + "\n" + report.ANALYSIS_MARKER + "\nHand-written.\n")
    without_summary = page.read_text()
    assert "<!-- summary -->" not in without_summary

    report.write(page, _section("alpha", 10.0))

    text = page.read_text()
    assert text.startswith("# Performance\n\n<!-- summary -->\n" + report.SUMMARY_HEADER + "\n| alpha | alpha p95 |")
    assert text.index("<!-- /summary -->") < text.index("Measured by the scripts") < text.index("<!-- section:beta -->")
    assert text.count("<!-- summary -->") == 1 and text.endswith(report.ANALYSIS_MARKER + "\nHand-written.\n")
    end = "<!-- /section:beta -->"
    beta = without_summary[without_summary.index("<!-- section:beta -->"): without_summary.index(end) + len(end)]
    assert beta in text, "the other section changed"


def test_the_server_is_described_from_the_environment_it_was_started_with(settings):
    settings.DB_POOL = True
    uncached = report.server_description(2, {"DEBUG": "false", "EMBEDDING_QUERY_CACHE_SIZE": "0"})
    assert uncached.startswith("uvicorn, 2 web worker(s), DEBUG=false, DB pool on")
    assert "query vectors not cached" in uncached
    assert "query vectors" not in report.server_description(2, {"DEBUG": "false"})
