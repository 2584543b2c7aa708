"""`manage.py load_questions [--dir questions]`: bring the database's bank in line with the files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from attempts.services.questions import QuestionFileError, questions_load


class Command(BaseCommand):
    help = "Create or update questions from the YAML files of the question bank (idempotent)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--dir",
            default="questions",
            help="Directory of question files, searched recursively; relative paths are taken "
            "from the project root. Default: questions",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        directory = Path(options["dir"])
        if not directory.is_absolute() and not directory.exists():
            # Lets the command work from any working directory, as cron and containers run it.
            directory = Path(settings.BASE_DIR) / directory
        try:
            report = questions_load(directory=directory)
        except QuestionFileError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(report.summary())
