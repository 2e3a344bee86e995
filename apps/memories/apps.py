from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    name = "apps.memories"
    label = "memories"

    def ready(self):
        from django_q.signals import post_execute_in_worker

        from apps.memories import live

        # A q2 worker process can end without running atexit (it is recycled with os._exit): each task's live events
        # go out before the worker takes the next task.
        post_execute_in_worker.connect(live.after_worker_task, dispatch_uid="memoryhub-live-events")
