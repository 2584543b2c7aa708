from django import template
from django.utils.safestring import SafeString, mark_safe

from attempts.prose import markdown_html

register = template.Library()


@register.filter
def markdown(text: str) -> SafeString:
    return mark_safe(markdown_html(text))  # noqa: S308 - sanitised by nh3 in markdown_html
