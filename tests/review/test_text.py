"""Untrusted text on the console's pages: escaped, and invisible or bidirectional characters shown."""

import pytest
from django.template import Context, Template

from apps.review.text import has_hidden_characters, reveal
from tests.review.conftest import pending


@pytest.mark.parametrize("char", ["\u200b", "\u200c", "\u200d", "\u200e", "\u200f", "\u202a", "\u202b", "\u202c",
                                  "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\ufeff", "\u00ad",
                                  "\x00", "\x1b", "\x7f", "\u2028", "\U000e0041", "\u180e"])
def test_each_hidden_character_is_shown_as_a_marked_token(char):
    shown = reveal(f"a{char}b")
    assert f"⟨U+{ord(char):04X}⟩" in shown and char not in shown
    assert shown.startswith("a<span class=\"hidden-char\"") and shown.endswith("</span>b")
    assert has_hidden_characters(f"a{char}b")


def test_markup_is_escaped_before_marking():
    shown = reveal('<script>alert("x")</script>\u202e&')
    assert "<script>" not in shown
    assert shown.startswith("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;<span")
    assert shown.endswith("</span>&amp;")


def test_ordinary_text_is_left_alone():
    text = "Café ✓ 日本語 emoji 👍🏽 tab\tline\nend"
    assert reveal(text) == text and not has_hidden_characters(text)
    assert reveal(None) == ""


def test_the_template_filter_escapes_and_marks():
    rendered = Template("{% load review %}{{ text|reveal }}").render(Context({"text": "<b>\u202eevil</b>"}))
    assert rendered == '&lt;b&gt;<span class="hidden-char" data-testid="hidden-char" title="right-to-left override">' \
                       "⟨U+202E⟩</span>evil&lt;/b&gt;"


def test_pages_never_render_memory_markup_or_hide_controls(tenant_a, quiet_stores, browsers):
    memory = pending(tenant_a.store, '<img src=x onerror="alert(1)"> pay to \u202eNBAI\u202c', user_id="eve<b>")
    for url in ["/review/", f"/review/memories/{memory.pk}/", "/review/customers/eve%3Cb%3E/",
                f"/review/queue/cards/{memory.pk}/"]:
        body = browsers.reviewer.get(url).content.decode()
        assert "<img src=x" not in body and "eve<b>" not in body, url
        assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in body, url
        assert "\u202e" not in body.split("<textarea", 1)[0] and "⟨U+202E⟩" in body, url
