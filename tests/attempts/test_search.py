"""Searching the bank: full text over titles and prompts through the `question_search` index,
and a topic filter that ignores case and suggests the bank's topics."""

import pytest
from django.db import connection

from attempts.selectors.questions import question_list, question_topic_suggestions, question_topics
from tests.factories import QuestionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def bank():
    return {
        "path": QuestionFactory(
            title="Shortest path", topics=["graphs", "bfs"], prompt="Find the shortest route between two cities."
        ),
        "islands": QuestionFactory(title="Count islands", topics=["Graphs"], prompt="Count the islands on a map."),
        "cache": QuestionFactory(title="Design a cache", topics=["caching"], prompt="Design an LRU cache service."),
        "retired": QuestionFactory(
            title="Retired path", topics=["graphs", "retired-only"], prompt="Shortest.", is_active=False
        ),
    }


def _slugs(bank, **filters) -> list[str]:
    names = {question.pk: name for name, question in bank.items()}
    return [names[q.pk] for q in question_list(**filters)]


def test_q_searches_titles_and_prompts_in_any_case(bank):
    assert _slugs(bank, q="SHORTEST") == ["path"]
    assert _slugs(bank, q="islands") == ["islands"]
    assert _slugs(bank, q="lru") == ["cache"]
    assert _slugs(bank, q="route cities") == ["path"]


def test_q_matches_other_forms_of_a_word(bank):
    assert _slugs(bank, q="island") == ["islands"]
    assert _slugs(bank, q="counting") == ["islands"]


def test_q_with_no_match_or_only_stop_words_finds_nothing(bank):
    assert _slugs(bank, q="zebra") == []
    assert _slugs(bank, q="the") == []


def test_q_takes_punctuation_as_text_not_syntax(bank):
    assert _slugs(bank, q="'shortest & | ! (") == ["path"]


def test_q_ranks_a_title_match_first():
    in_prompt = QuestionFactory(title="Trees", prompt="Merge two cache layers into one cache.")
    in_title = QuestionFactory(title="Cache eviction", prompt="Design eviction.")
    assert list(question_list(q="cache")) == [in_title, in_prompt]


def test_the_search_uses_the_question_search_index(bank):
    sql, params = question_list(q="shortest").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "question_search" in plan


def test_topic_matches_any_case_and_only_whole_topics(bank):
    assert _slugs(bank, topic="graphs") == ["path", "islands"]
    assert _slugs(bank, topic="GRAPHS") == ["path", "islands"]
    assert _slugs(bank, topic="graph") == []
    assert _slugs(bank, topic="Graphs", q="islands") == ["islands"]


def test_topic_with_sql_or_regex_characters_is_only_text(bank):
    assert _slugs(bank, topic="%") == []
    assert _slugs(bank, topic="graphs' OR '1'='1") == []


def test_the_banks_topics_are_the_active_questions_once_each_in_any_case(bank):
    assert question_topics() == ["bfs", "caching", "graphs"]


def test_a_topic_nothing_has_gets_the_nearest_topics_as_suggestions(bank):
    assert question_topic_suggestions(topic="graph") == ["graphs"]
    assert question_topic_suggestions(topic="cache") == ["caching"]
    assert question_topic_suggestions(topic="dynamic-programming") == []


def test_a_topic_that_exists_in_another_case_needs_no_suggestion(bank):
    assert question_topic_suggestions(topic="GRAPHS") is None


def test_the_catalogue_page_has_a_search_box_and_topic_suggestions(client, bank):
    html = client.get("/questions/").content.decode()
    assert 'type="search"' in html and 'name="q"' in html
    assert 'list="topic-suggestions"' in html
    assert '<datalist id="topic-suggestions">' in html
    for topic in ("bfs", "caching", "graphs"):
        assert f'<option value="{topic}">' in html
    assert "retired-only" not in html


def test_the_catalogue_page_searches_and_filters_any_case(client, bank):
    response = client.get("/questions/", {"q": "Shortest", "topic": "GRAPHS"})
    assert [q.pk for q in response.context["page"].object_list] == [bank["path"].pk]


def test_the_catalogue_page_says_no_question_has_the_topic_and_suggests_one(client, bank):
    response = client.get("/questions/", {"topic": "graph"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "No question has topic “graph”; did you mean" in html
    assert 'href="/questions/?topic=graphs"' in html


def test_the_catalogue_page_keeps_a_long_search_as_an_ignored_filter(client, bank):
    response = client.get("/questions/", {"q": "x" * 201})
    assert response.status_code == 200
    assert "This filter was ignored." in response.content.decode()
    assert response.context["page"].paginator.count == 3
