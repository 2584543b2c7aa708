# Flower's settings, read by `celery -A interviewprep flower --conf=deploy/flowerconfig.py`
# (the Procfile's opt-in line and deploy/systemd/interviewprep-flower.service). Flower has no login
# of its own here: it listens on the loopback only, and nginx lets through to /flower/ only a
# request whose session is a staff user's (deploy/nginx/interviewprep.conf, /staff/check/).
address = "127.0.0.1"
port = 5555
url_prefix = "flower"
# Flower turns the workers' task events on (CELERY_WORKER_SEND_TASK_EVENTS is off): its task
# pages need them. Bounded memory for the tasks it remembers.
enable_events = True
max_tasks = 10000
# Workers gone for ten minutes leave its list (a restarted worker comes back under a new pid).
purge_offline_workers = 600
