"""Forms of the history pages: searching the catalogue and choosing two submissions to compare."""

from __future__ import annotations

from django import forms

from attempts.forms import QuestionFilterForm

# The datalist of the bank's topics that the topic filter suggests from (questions/list.html).
TOPIC_SUGGESTIONS_ID = "topic-suggestions"


class SearchInput(forms.TextInput):
    input_type = "search"


class QuestionSearchForm(QuestionFilterForm):
    q = forms.CharField(
        label="Search",
        max_length=200,
        required=False,
        widget=SearchInput(attrs={"placeholder": "words of a title or prompt"}),
    )

    field_order = ["q", "kind", "difficulty", "topic"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["topic"].widget.attrs.update({"list": TOPIC_SUGGESTIONS_ID, "autocomplete": "off"})


class SubmissionCompareForm(forms.Form):
    """`?a=` the older submission, `?b=` the newer; either left out takes its default."""

    a = forms.IntegerField(min_value=1, required=False)
    b = forms.IntegerField(min_value=1, required=False)
