from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    name = "apps.memories"
    label = "memories"

    def ready(self):
        from django_q.signals import post_execute_in_worker

        # A q2 worker process can end without running atexit (it is recycled with os._exit): each task's live events
        # go out before the worker takes the next task.
        post_execute_in_worker.connect(_send_live_events_of_the_task, dispatch_uid="memoryhub-live-events")


def _send_live_events_of_the_task(sender, **kwargs):
    from apps.memories import live

    live.wait_until_sent()
