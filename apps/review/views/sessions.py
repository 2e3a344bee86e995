"""A session's transcript with, next to each message, the memories it produced."""

from apps.conversations.selectors import scratchpad_list, working_memory_list
from apps.review.selectors import sessions as selectors
from apps.review.selectors.customers import OPEN_SESSION_STATUSES
from apps.review.views.base import ConsoleView
from apps.review.views.jobs import job_rows


class SessionView(ConsoleView):
    template_name = "review/session.html"
    nav = "customers"

    def get(self, request, store_id, external_id):
        session = selectors.session_for(self.access, store_id, external_id)
        number = request.GET.get("page")
        at = request.GET.get("at")
        if at and at.isdigit() and not number:
            number = selectors.transcript_page_number(session, int(at))
        page = selectors.transcript_page(session, number)
        messages = list(page.object_list)
        produced = selectors.memories_by_message(session, [message.seq for message in messages])
        is_open = session.status in OPEN_SESSION_STATUSES
        task_state = getattr(session, "task_state", None) if is_open else None
        return self.render_page({
            "title": f"Session {session.external_id}",
            "session": session,
            "store": session.store,
            "page": page,
            "rows": [{"message": message, "memories": produced.get(message.seq, [])} for message in messages],
            "job_rows": job_rows(self.access, selectors.session_jobs(session)),
            "is_open": is_open,
            "working_items": list(working_memory_list(session=session)[:50]) if is_open else [],
            "task_state": task_state,
            "scratchpad_count": scratchpad_list(session=session).count() if is_open else 0,
        })
