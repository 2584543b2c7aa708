#!/usr/bin/env python
import os
import sys


def main() -> None:
    from interviewprep.config import load_or_exit

    load_or_exit()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "interviewprep.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
