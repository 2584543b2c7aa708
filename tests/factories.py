import factory
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token

from attempts.models import Attempt, Question


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"candidate{n}")
    password = factory.django.Password("correct horse battery staple")


class TokenFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Token

    user = factory.SubFactory(UserFactory)


class QuestionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Question

    slug = factory.Sequence(lambda n: f"question-{n}")
    title = factory.Sequence(lambda n: f"Question {n}")
    kind = "system_design"
    difficulty = "medium"
    topics = factory.LazyFunction(lambda: ["caching"])
    prompt = "Design a URL shortener."
    evaluator = "instant"


class AttemptFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Attempt

    user = factory.SubFactory(UserFactory)
    question = factory.SubFactory(QuestionFactory)


# Two visible examples and one hidden test: a run shows the first two and never the third. The
# signature is what the bank's questions carry; `function` is the older form the code runner
# still reads, kept so both runners of this spec's history accept it.
ADD_SIGNATURE = {
    "function": "add",
    "params": [{"name": "a", "type": "int"}, {"name": "b", "type": "int"}],
    "returns": "int",
    "summary": "Return the sum of a and b.",
}
ADD_SPEC = {
    "signature": ADD_SIGNATURE,
    "function": "add",
    "tests": [
        {"name": "small", "args": [1, 2], "expected": 3, "visible": True},
        {"name": "negative", "args": [-1, 1], "expected": 0, "visible": True},
        {"name": "hidden big", "args": [1000000, 1], "expected": 1000001},
    ],
    "time_limit_s": 2,
}


class CodingQuestionFactory(QuestionFactory):
    kind = "coding"
    topics = factory.LazyFunction(lambda: ["arithmetic"])
    prompt = "Return the sum of a and b."
    evaluator = "code"
    evaluation_spec = factory.LazyFunction(lambda: dict(ADD_SPEC))
