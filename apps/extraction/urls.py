from django.urls import path

from apps.extraction import api

urlpatterns = [
    path("stores/<slug:store_name>/sessions/<identifier:session_id>/flush", api.SessionFlushApi.as_view(),
         name="session-flush"),
    path("jobs", api.JobListApi.as_view(), name="job-list"),
    path("jobs/<uuid:job_id>", api.JobDetailApi.as_view(), name="job-detail"),
    path("jobs/<uuid:job_id>/retry", api.JobRetryApi.as_view(), name="job-retry"),
]
