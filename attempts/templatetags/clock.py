"""One way to show a time on every page: `{% load clock %}{{ value|when }}` draws
"2 Dec 2026, 18:39 CET" in the candidate's zone (attempts.middleware), inside a <time> element
whose `datetime` is the exact moment. `{% time_zone_attributes %}` hands the same zone and its
abbreviations to the page's script, which draws the times it learns of in the same format."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, tzinfo

from django import template
from django.utils import dateformat, timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

register = template.Library()

# Day, short month, year, 24-hour time, the zone's abbreviation. attempt.js builds the same.
WHEN_FORMAT = "j M Y, H:i T"


def _moment(value: object) -> datetime | date | None:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    return value if isinstance(value, date) else None


@register.filter
def when(value: object) -> SafeString | str:
    moment = _moment(value)
    if moment is None:
        return ""
    if not isinstance(moment, datetime):
        return format_html('<time datetime="{}">{}</time>', moment.isoformat(), dateformat.format(moment, "j M Y"))
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment, UTC)
    local = timezone.localtime(moment)
    return format_html('<time datetime="{}">{}</time>', local.isoformat(), dateformat.format(local, WHEN_FORMAT))


def zone_abbreviations(zone: tzinfo, year: int) -> dict[str, str]:
    """The zone's abbreviation for each UTC offset (in minutes) it uses in `year` and the next:
    "CET" and "CEST" for Europe/Paris. The browser knows offsets, but names zones its own way."""
    names: dict[str, str] = {}
    for y in (year, year + 1):
        for month in range(1, 13):
            moment = datetime(y, month, 1, 12, tzinfo=zone)
            offset = moment.utcoffset()
            if offset is not None:
                names.setdefault(str(int(offset.total_seconds() // 60)), moment.tzname() or "")
    return names


@register.simple_tag
def time_zone_attributes() -> SafeString:
    zone = timezone.get_current_timezone()
    names = zone_abbreviations(zone, timezone.now().year)
    return format_html(
        'data-time-zone="{}" data-time-zone-names="{}"', str(zone), json.dumps(names, separators=(",", ":"))
    )
