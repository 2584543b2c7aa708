"""Forms of the server-rendered pages: they shape and check input; services decide."""

from __future__ import annotations

import uuid

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm

from attempts.login_attempts import lockout_message, login_locked_out, login_retry_after
from attempts.models import Difficulty, QuestionKind
from attempts.services.idempotency import idempotency_key_validate
from interviewprep.errors import InvalidInput

ANY = [("", "Any")]


def idempotency_key_new() -> str:
    return uuid.uuid4().hex


class IdempotencyKeyField(forms.CharField):
    """The hidden key drawn with a form, so a double click or a browser retry is one request."""

    widget = forms.HiddenInput

    def __init__(self, **kwargs):
        super().__init__(max_length=255, strip=False, **kwargs)

    def validate(self, value):
        super().validate(value)
        try:
            idempotency_key_validate(value)
        except InvalidInput as exc:
            raise forms.ValidationError(exc.detail, code="idempotency-key") from None


class LockoutAwareLoginMixin:
    """A login refused for too many failures says so, and when to come back, instead of
    'wrong password': the right password is refused too until then."""

    locked_out = False

    def get_invalid_login_error(self):
        if not login_locked_out(self.request):
            return super().get_invalid_login_error()
        self.locked_out = True
        retry_after = login_retry_after(self.request, self.cleaned_data.get("username"))
        return forms.ValidationError(lockout_message(retry_after), code="locked_out")


class LoginForm(LockoutAwareLoginMixin, AuthenticationForm):
    pass


class AdminLoginForm(LockoutAwareLoginMixin, AdminAuthenticationForm):
    pass


class RegisterForm(forms.Form):
    username = forms.CharField(
        max_length=150,
        help_text="Letters, digits and @ . + - _ only.",
        widget=forms.TextInput(attrs={"autocomplete": "username", "autofocus": True}),
    )
    password = forms.CharField(
        strip=False,
        max_length=128,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text="At least 8 characters; not a common password and not only digits.",
    )
    password_again = forms.CharField(
        label="Password (again)",
        strip=False,
        max_length=128,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def clean(self):
        cleaned = super().clean()
        password, again = cleaned.get("password"), cleaned.get("password_again")
        if password and again and password != again:
            self.add_error("password_again", "The two passwords differ.")
        return cleaned


class QuestionFilterForm(forms.Form):
    kind = forms.ChoiceField(choices=ANY + QuestionKind.choices, required=False)
    difficulty = forms.ChoiceField(choices=ANY + Difficulty.choices, required=False)
    topic = forms.CharField(
        max_length=60,
        required=False,
        widget=forms.TextInput(attrs={"placeholder": "e.g. graphs"}),
    )

    def filters(self) -> dict[str, str]:
        """The valid filters only: a bad one is reported and ignored, not a reason to show nothing."""
        self.is_valid()
        return {name: value for name, value in self.cleaned_data.items() if value}


class SubmissionForm(forms.Form):
    # Emptiness and size are the service's to judge (400 and 413), so the text is taken as sent.
    answer = forms.CharField(
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 18, "spellcheck": "false", "autocapitalize": "off"}),
    )
    # Which language the answer is in is the service's to judge too (400 naming "language").
    language = forms.CharField(required=False, max_length=40)
    idempotency_key = IdempotencyKeyField()

    def clean_answer(self) -> str:
        # Browsers send textarea line breaks as CRLF; the API's clients send LF. One form of the
        # text keeps byte counts and request fingerprints the same however the answer arrives.
        return self.cleaned_data["answer"].replace("\r\n", "\n")


class PracticeRequestForm(QuestionFilterForm):
    idempotency_key = IdempotencyKeyField()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["topic"].widget.attrs["placeholder"] = "e.g. dynamic-programming"


class AttemptStartForm(forms.Form):
    idempotency_key = IdempotencyKeyField()
