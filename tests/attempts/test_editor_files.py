"""The editor's files: what the attempt page loads is served, the rest of the package is not."""

import pytest
from django.contrib.staticfiles import finders
from django.test import Client

from evaluation.languages import LANGUAGES

pytestmark = pytest.mark.nodb


def test_each_answer_languages_mode_and_the_pages_stylesheets_with_their_images_are_found():
    for language in LANGUAGES.values():
        mode = language.ace_mode.removeprefix("ace/mode/")
        assert finders.find(f"vendor/ace/mode-{mode}.js"), language.id
    for name in ("vendor/ace/ace.js", "vendor/ace/ext-searchbox.js", "vendor/ace-css/ace.css"):
        assert finders.find(name), name
    # Named by url(...) in the stylesheets: ace.css's own images, and the theme's from its parent folder.
    for name in ("vendor/ace-css/theme/textmate.css", "vendor/ace-css/main-1.png", "vendor/ace-css/textmate-1.png"):
        assert finders.find(name), name


def test_the_rest_of_the_package_is_not_served():
    for name in ("vendor/ace/mode-ruby.js", "vendor/ace/theme-monokai.js", "vendor/ace/snippets/python.js"):
        assert finders.find(name) is None, name
    served = [
        path
        for finder in finders.get_finders()
        for path, storage in finder.list(None)
        if (getattr(storage, "prefix", "") or "").startswith("vendor/")
    ]
    assert 30 < len(served) < 100, len(served)


def test_the_page_gets_its_editor_script_and_a_stylesheets_image_through_the_app(settings):
    settings.ALLOWED_HOSTS = ["testserver"]
    client = Client()
    script = client.get("/static/vendor/ace/mode-golang.js")
    assert script.status_code == 200 and b"golang" in script.content
    assert client.get("/static/vendor/ace-css/textmate-1.png").status_code == 200
    assert client.get("/static/vendor/ace/mode-ruby.js").status_code == 404
