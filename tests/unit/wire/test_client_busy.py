"""receive_resubmitting_when_busy: a 'busy' answer resubmits the same request; other errors and a
stop request are raised at once."""
import pytest

from wire.client import ServerError, receive_resubmitting_when_busy


def _server(answers):
    calls = {"received": [], "submitted": 0}

    def receive(ticket):
        calls["received"].append(ticket)
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def resubmit():
        calls["submitted"] += 1
        return 100 + calls["submitted"]

    return receive, resubmit, calls


def test_busy_twice_then_the_reply_of_the_third_ticket():
    receive, resubmit, calls = _server([ServerError("busy", "full"), ServerError("busy", "full"), "reply"])
    assert receive_resubmitting_when_busy(receive, resubmit, 7, lambda: False) == "reply"
    assert calls["received"] == [7, 101, 102] and calls["submitted"] == 2


def test_other_errors_and_a_stop_are_raised_without_resubmitting():
    receive, resubmit, calls = _server([ServerError("bad_request", "no")])
    with pytest.raises(ServerError, match="no"):
        receive_resubmitting_when_busy(receive, resubmit, 1, lambda: False)
    receive, resubmit, calls2 = _server([ServerError("busy", "full")])
    with pytest.raises(ServerError):
        receive_resubmitting_when_busy(receive, resubmit, 1, lambda: True)
    assert calls["submitted"] == calls2["submitted"] == 0
