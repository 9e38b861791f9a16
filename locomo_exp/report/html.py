"""``report.html``: the markdown report as one HTML page with its plots inline.

MLflow's artifact viewer shows a markdown file as text, so ``![plot](plot.png)`` stays a
link there; it renders an HTML file, and an image written into the page as a ``data:``
URI (base64) needs no other file. :func:`render_report_html` is a pure function from the
report's markdown and the plots' bytes; markdown is rendered by ``markdown-it-py``
(CommonMark with tables), with raw HTML in the markdown escaped.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Mapping

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em auto;
       max-width: 72em; padding: 0 1em; line-height: 1.45; color: #1f2328; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
th, td { border: 1px solid #d0d7de; padding: 0.25em 0.6em; }
th { background: #f6f8fa; }
td { text-align: right; } td:first-child { text-align: left; }
code { background: #f6f8fa; padding: 0.1em 0.3em; border-radius: 4px; }
img { max-width: 100%; }
h1, h2 { border-bottom: 1px solid #d0d7de; padding-bottom: 0.2em; }
"""

_IMG_SRC = re.compile(r'<img src="([^"]+)"')


def render_report_html(markdown_text: str, images: Mapping[str, bytes], title: str) -> str:
    """The report as a standalone HTML page, images embedded.

    Args:
        markdown_text: ``report.md``'s text.
        images: PNG bytes by the file name the markdown refers to (``category_scores.png``);
            a referenced image not given here keeps its relative link.
        title: the page title (the input file's name, say).

    Returns:
        A complete ``<!doctype html>`` document (UTF-8).
    """
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown_text)

    def inline(match: re.Match[str]) -> str:
        name = html.unescape(match.group(1))
        data = images.get(name)
        if data is None:
            return match.group(0)
        encoded = base64.b64encode(data).decode("ascii")
        return f'<img src="data:image/png;base64,{encoded}"'

    body = _IMG_SRC.sub(inline, body)
    return (
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n"
        f"<body>\n{body}</body>\n</html>\n"
    )


__all__ = ["render_report_html"]
