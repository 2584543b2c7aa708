"""The web tier's entry point: Django under ASGI, served by gunicorn's uvicorn workers (Procfile).

An async view (the attempt wait) awaits on the event loop and holds no thread while it waits.
Everything sync (views, middleware hooks, signal receivers) runs on the process's one
thread-sensitive thread, one request at a time, as a sync worker served them. Django's own
`ASGIHandler` gives every request a thread of its own instead (`ThreadSensitiveContext`), and
since Django keeps database connections per thread, that is a new PostgreSQL session per
request; the one thread here keeps its connection (`CONN_MAX_AGE`).
"""

import os

import django
from django.conf import settings
from django.core.handlers.asgi import ASGIHandler

from interviewprep.body_limit import read_bounded
from interviewprep.config import load_or_exit

load_or_exit()
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "interviewprep.settings")


class OneThreadASGIHandler(ASGIHandler):
    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        # At most REQUEST_BODY_MAX_BYTES of body is kept; a chunked one gets its Content-Length.
        bounded = await read_bounded(scope, receive, settings.REQUEST_BODY_MAX_BYTES)
        if bounded is None:
            return  # the client left before its body ended
        # Without a ThreadSensitiveContext, sync_to_async(thread_sensitive=True) uses asgiref's
        # process-wide single thread.
        await self.handle(*bounded, send)


django.setup(set_prefix=False)
application = OneThreadASGIHandler()
