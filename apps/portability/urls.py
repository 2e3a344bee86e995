from django.urls import path

from apps.portability import api

urlpatterns = [
    # Not users/<id>/export: a user id may hold "/", so the erase route takes the rest of the path after users/.
    path("stores/<slug:store_name>/user-export/<identifier_path:user_id>", api.UserExportApi.as_view(),
         name="user-export"),
]
