import os

from django.core.wsgi import get_wsgi_application

from interviewprep.config import load_or_exit

load_or_exit()
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "interviewprep.settings")
application = get_wsgi_application()
