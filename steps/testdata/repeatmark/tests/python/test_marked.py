"""test_marked runs 3 times whatever --count says and fails its second repetition (also when
that repetition is run alone, as the sanitizer does). test_user's own parameter ids end in two
numbers, as a repetition id does, and are not a mark. test_plain follows --count."""
import pytest


@pytest.mark.repeat(3)
def test_marked(request):
    assert not request.node.name.endswith("[2-3]"), "the second repetition fails"


@pytest.mark.parametrize("k", ["a-1-2", "a-2-2"])
def test_user(k):
    pass


def test_plain():
    pass
