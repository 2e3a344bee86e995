"""Logging in and out of the console: Django's views, the console's template, staff only."""

from django.contrib.auth import views as auth_views
from django.urls import reverse_lazy

from apps.review.forms import StaffLoginForm


class LoginView(auth_views.LoginView):
    template_name = "review/login.html"
    authentication_form = StaffLoginForm
    next_page = reverse_lazy("review:queue")


class LogoutView(auth_views.LogoutView):
    next_page = reverse_lazy("review:login")
