"""Question prose as the pages show it: the bank's Markdown, rendered, highlighted and sanitised.

Python-Markdown turns the text into HTML (fenced code highlighted by Pygments on the server, so
pages need no highlighting script), then nh3 keeps only the tags and attributes below: a prompt
is trusted content, but one rule for all prose means a careless question cannot inject markup.
"""

from __future__ import annotations

import markdown
import nh3

TAGS = {
    "p", "br", "hr", "em", "strong", "code", "pre", "span", "div", "blockquote", "ul", "ol", "li",
    "h3", "h4", "h5", "table", "thead", "tbody", "tr", "th", "td", "sup", "sub", "a",
}  # fmt: skip
ATTRIBUTES = {"span": {"class"}, "div": {"class"}, "code": {"class"}, "a": {"href", "title"}, "ol": {"start"}}
EXTENSIONS = ["fenced_code", "codehilite", "tables", "sane_lists"]
# No language guessing: an unlabelled block stays plain rather than coloured wrongly.
EXTENSION_CONFIGS = {"codehilite": {"css_class": "highlight", "guess_lang": False}}


def markdown_html(text: str) -> str:
    """Sanitised HTML for a Markdown text; safe to mark safe in a template."""
    html = markdown.markdown(text or "", extensions=EXTENSIONS, extension_configs=EXTENSION_CONFIGS)
    return nh3.clean(html, tags=TAGS, attributes=ATTRIBUTES, link_rel="noopener noreferrer nofollow")
