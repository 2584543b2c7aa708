"""Forms of the practice pages (mock interviews, notes, settings): they shape and check input;
services decide."""

from __future__ import annotations

from django import forms

from attempts.forms import ANY, IdempotencyKeyField
from attempts.models import Difficulty, QuestionKind
from attempts.services.mock import MOCK_DEFAULT_KINDS, MOCK_DEFAULT_MINUTES, MOCK_MAX_MINUTES, MOCK_MIN_MINUTES
from attempts.services.notes import NOTE_MAX_CHARS
from attempts.services.preferences import time_zones


class MockInterviewForm(forms.Form):
    duration_minutes = forms.IntegerField(
        label="Duration (minutes)", min_value=MOCK_MIN_MINUTES, max_value=MOCK_MAX_MINUTES, initial=MOCK_DEFAULT_MINUTES
    )
    kinds = forms.MultipleChoiceField(
        label="Questions, one of each kind ticked",
        choices=QuestionKind.choices,
        widget=forms.CheckboxSelectMultiple,
        initial=list(MOCK_DEFAULT_KINDS),
    )
    difficulty = forms.ChoiceField(choices=ANY + list(Difficulty.choices), required=False)
    idempotency_key = IdempotencyKeyField()


class NoteForm(forms.Form):
    text = forms.CharField(
        label="Your private note", required=False, strip=False, max_length=NOTE_MAX_CHARS, widget=forms.Textarea
    )


class PreferencesForm(forms.Form):
    blind = forms.BooleanField(
        label="Blind mode: hide difficulty and topics while practising",
        required=False,
    )
    time_zone = forms.ChoiceField(label="Time zone", choices=())

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Read when drawn, not at import: the zones are the machine's.
        self.fields["time_zone"].choices = [(zone, zone) for zone in time_zones()]
