"""The app's URLs plus `GET /bench/bare/<id>/`: one ORM get by primary key, behind the same
token authentication, permission check and renderer as the API, answering JSON."""

from django.urls import include, path
from rest_framework.response import Response
from rest_framework.views import APIView

from attempts.models import Attempt
from interviewprep.urls import handler404, handler500  # noqa: F401 - the same error pages


class BareAttemptView(APIView):
    def get(self, request, attempt_id: int):
        attempt = Attempt.objects.get(pk=attempt_id)
        return Response({"id": attempt.pk, "status": attempt.status, "version": attempt.version})


urlpatterns = [
    path("bench/bare/<int:attempt_id>/", BareAttemptView.as_view(), name="bench-bare"),
    path("", include("interviewprep.urls")),
]
