from django.urls import path

from evaluation import apis

urlpatterns = [
    path("ops/dashboard/", apis.OpsDashboardApi.as_view(), name="api-ops-dashboard"),
    path("ops/dead-letters/", apis.DeadLetterListApi.as_view(), name="api-dead-letters"),
    path("ops/dead-letters/groups/", apis.DeadLetterGroupsApi.as_view(), name="api-dead-letter-groups"),
    path("ops/dead-letters/replay/", apis.DeadLetterBulkReplayApi.as_view(), name="api-dead-letters-replay"),
    path(
        "ops/dead-letters/<id:dead_letter_id>/replay/",
        apis.DeadLetterReplayApi.as_view(),
        name="api-dead-letter-replay",
    ),
]
